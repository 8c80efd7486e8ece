import type { Agreement } from '../domain/agreement.js';
import { VoUsage } from '../engine/accounting/index.js';
import { AgreementExpiry, liveAgreementPages } from '../engine/agreements/index.js';
import { leaseEnd } from '../engine/execution/index.js';
import { AgreementService } from '../engine/agreements/index.js';
import { ReservationUse } from '../engine/agreements/index.js';
import { NegotiationService } from '../engine/negotiation/index.js';
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
}

export function serviceParts(base: Foundations & Scheduling): Services {
  const { config, logger, clock, plan, repository, prices } = base;
  const agreements = new AgreementService(repository, plan, clock, new SoapAcceptanceNotifier(fetch, 10_000, new OutboundPolicy(config.outboundAllow)), (agreementId, error) =>
    logger.warn({ agreementId, err: error }, 'could not tell the initiator about the decision on its pending agreement'),
  );
  // The books, usage records and VO shares (issue 14): holds where capacity is promised, the ledger following what happens.
  const accounting = accountingParts({
    config, store: base.store, given: base.parts, repository, negotiationRepository: base.negotiationRepository, plan, prices, clock, logger,
    recordSigner: base.recordSigner, baseUrl: () => base.urls.base, readPolicy: attempt,
  });
  const negotiations = new NegotiationService({
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
    logger.error({ booking: key, err: error }, 'storing an allocation the scheduler moved failed; a restart places it again'),
  );
  return { agreements, accounting, negotiations, reservations };
}

/** What start-up found stored and put back. */
export interface Restored {
  /** The leases among the live agreements (ids and window ends) for the lease notices: emptied once they watch them (src/server.ts). */
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
  const { logger, repository, agreements, accounting, plan, reservations } = base;
  const expiration = new AgreementExpiry(agreements);
  const leaseEnds: Restored['leaseEnds'] = [];
  async function* watched(): AsyncGenerator<Agreement[]> {
    for await (const page of liveAgreementPages(repository)) {
      for (const agreement of page) {
        expiration.watch(agreement);
        accounting.shares?.own(agreement.id, VoUsage.ownerOf(agreement.request, agreement.initiator));
        const end = leaseEnd(agreement);
        if (end !== undefined) leaseEnds.push({ id: agreement.id, end });
      }
      await reservations.restore(page);
      yield page;
    }
  }
  const { restored, lost } = await agreements.restorePlanReport(watched());
  for (const { id, reason } of lost) logger.warn({ agreementId: id, reason }, 'an agreement\'s capacity could not be booked again at start-up');
  const holds = await base.negotiations.restore();
  const settled = await accounting.restore();
  if (settled > 0) logger.info({ holds: settled }, 'funds holds settled or released at start-up');
  await plan.settle();
  return { leaseEnds, counts: { bookings: restored, holds }, expiration };
}
