import fs from 'node:fs';
import type { Agreement } from '../domain/agreement.js';
import { checkpointFileOf, receivedDirOf } from '../web/checkpoint-upload.js';
import { VoUsage } from '../engine/accounting/index.js';
import { AgreementExpiry, liveAgreementPages } from '../engine/agreements/index.js';
import { leaseEnd } from '../engine/execution/index.js';
import { AgreementService } from '../engine/agreements/index.js';
import { ReservationUse } from '../engine/agreements/index.js';
import { NegotiationService } from '../engine/negotiation/index.js';
import { FairUse } from '../engine/fair-use/index.js';
import type { ServerConfig } from '../engine/configuration/index.js';
import type { PlanningService } from '../engine/planning/index.js';
import { defaultFairUse, parseFairUse, type FairUseLimit } from '../domain/fair-use.js';
import { holdKey, liveHolds } from '../domain/negotiation.js';
import { persistPlanChanges } from '../engine/planning/index.js';
import { SoapAcceptanceNotifier } from '../client/acceptance-notifier.js';
import { OutboundPolicy } from '../client/outbound.js';
import { XmlNegotiationWriter } from '../xml/negotiation-writer.js';
import { accountingParts, type AccountingParts } from './accounting.js';
import { attempt, type Foundations } from './foundations.js';
import type { Scheduling } from './scheduling.js';

/** The use cases behind the SOAP ports and the API: agreements, negotiations, reservations, the books. */
export interface Services {
  agreements: AgreementService;
  accounting: AccountingParts;
  negotiations: NegotiationService;
  reservations: ReservationUse;
  /** Fair-use limits per party; absent when they are off. */
  fairUse?: FairUse;
}

export function serviceParts(base: Foundations & Scheduling): Services {
  const { config, logger, clock, plan, repository, prices } = base;
  const agreements = new AgreementService(
    repository,
    plan,
    clock,
    new SoapAcceptanceNotifier(fetch, 10_000, new OutboundPolicy(config.outboundAllow)),
    (agreementId, error) =>
      logger.warn(
        { agreementId, err: error },
        'could not tell the initiator about the decision on its pending agreement',
      ),
  );
  // The books, usage records and VO shares: holds where capacity is promised, the ledger following what happens.
  const accounting = accountingParts({
    config,
    store: base.store,
    given: base.parts,
    repository,
    negotiationRepository: base.negotiationRepository,
    plan,
    prices,
    clock,
    logger,
    recordSigner: base.recordSigner,
    baseUrl: () => base.urls.base,
    readPolicy: attempt,
  });
  const fairUse = fairUseOf(config, plan, (limit) => base.observed.metrics.fairUseRefused(limit));
  const negotiations = new NegotiationService({
    ...(fairUse ? { fairUse } : {}),
    negotiations: accounting.negotiations,
    charging: accounting.charging,
    ...(accounting.shares ? { shares: accounting.shares } : {}),
    agreements: repository,
    templates: base.templates,
    documents: new XmlNegotiationWriter(),
    plan,
    clock,
    ids: base.ids,
    settings: {
      holdSeconds: config.holdSeconds,
      maxRounds: config.negotiationMaxRounds,
      maxSeconds: config.negotiationMaxSeconds,
      advisorySlots: config.advisorySlots,
      prices,
      providerName: config.providerName,
    },
  });
  const reservations = new ReservationUse(repository, agreements);
  // Bookings the scheduler moves are stored again: agreements, and holds in their negotiations.
  persistPlanChanges(plan, agreements, negotiations, (key, error) =>
    logger.error(
      { booking: key, err: error },
      'storing an allocation the scheduler moved failed; a restart places it again',
    ),
  );
  return { agreements, accounting, negotiations, reservations, ...(fairUse ? { fairUse } : {}) };
}

/**
 * The site's fair-use limits (docs/security.md, "Fair use"): configured, or the defaults when TLS is on; undefined when
 * off.
 */
function fairUseOf(
  config: ServerConfig,
  plan: PlanningService,
  onRefusal: (limit: FairUseLimit) => void,
): FairUse | undefined {
  const text = config.fairUse ?? (config.tlsPort !== undefined ? '' : 'off');
  const slaNodes = () => plan.cluster.nodes.filter((node) => !node.buffer).length;
  const limits = parseFairUse(text, defaultFairUse(slaNodes()));
  if ('error' in limits || Object.keys(limits).length === 0) return undefined;
  return new FairUse({ limits, slaNodes, allocationOf: (key) => plan.allocationOf(key), onRefusal });
}

/** The agreements with a received checkpoint kept (for fair use). */
async function receivedCheckpoints(config: ServerConfig): Promise<Set<string>> {
  const names = await fs.promises.readdir(receivedDirOf(config.checkpointDir)).catch(() => [] as string[]);
  return new Set(
    names
      .filter((name) => name.endsWith('.checkpoint'))
      .map((name) => decodeURIComponent(name.slice(0, -'.checkpoint'.length))),
  );
}

/** What start-up found stored and put back. */
export interface Restored {
  /**
   * The leases among the live agreements (ids and window ends) for the lease notices: emptied once they watch them
   * (src/server.ts).
   */
  leaseEnds: Array<{ id: string; end: number }>;
  /** Bookings placed again, and holds restored. */
  counts: { bookings: number; holds: Awaited<ReturnType<NegotiationService['restore']>> };
  /** wsag:ExpirationTime, watched on every live agreement. */
  expiration: AgreementExpiry;
}

/**
 * Puts back what was stored, agreements first: a hold whose agreement was stored just
 * before a crash is confirmed, not booked twice. The live agreements are read once, page by
 * page: each page rebuilds its part of the plan and of the watches, which keep ids and times,
 * and is then let go. Agreements that expired while the server was down end at the first tick.
 */
export async function restoreState(base: Foundations & Scheduling & Services): Promise<Restored> {
  const { logger, repository, agreements, accounting, plan, reservations, fairUse } = base;
  const expiration = new AgreementExpiry(agreements, fairUse?.limits.pendingSeconds);
  const leaseEnds: Restored['leaseEnds'] = [];
  const checkpoints = fairUse ? await receivedCheckpoints(base.config) : new Set<string>();
  async function* watched(): AsyncGenerator<Agreement[]> {
    for await (const page of liveAgreementPages(repository)) {
      for (const agreement of page) {
        if (checkpoints.has(agreement.id)) {
          const { size } = await fs.promises.stat(
            checkpointFileOf(receivedDirOf(base.config.checkpointDir), agreement.id),
          );
          fairUse?.checkpointKept(agreement.id, agreement.initiator, size);
        }
        expiration.watch(agreement);
        accounting.shares?.own(agreement.id, VoUsage.ownerOf(agreement.request, agreement.initiator));
        fairUse?.own(
          agreement.id,
          agreement.initiator,
          agreement.state === 'Pending' ? 'pending' : 'agreement',
          agreement.request,
        );
        const end = leaseEnd(agreement);
        if (end !== undefined) leaseEnds.push({ id: agreement.id, end });
      }
      await reservations.restore(page);
      yield page;
    }
  }
  const { restored, lost } = await agreements.restorePlanReport(watched());
  for (const { id, reason } of lost)
    logger.warn({ agreementId: id, reason }, "an agreement's capacity could not be booked again at start-up");
  const holds = await base.negotiations.restore();
  if (fairUse) {
    for (const negotiation of await base.negotiationRepository.list({ withLiveHolds: true })) {
      for (const offer of liveHolds(negotiation))
        fairUse.own(holdKey(offer.offerId), negotiation.initiator, 'hold', offer.request);
    }
  }
  const settled = await accounting.restore();
  if (settled > 0) logger.info({ holds: settled }, 'funds holds settled or released at start-up');
  await plan.settle();
  return { leaseEnds, counts: { bookings: restored, holds }, expiration };
}
