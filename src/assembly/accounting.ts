import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AgreementChange } from '../engine/agreements/index.js';
import { holdKey, liveHolds } from '../domain/negotiation.js';
import type { PriceList } from '../domain/pricing.js';
import { epochAt, parseSitePolicy, type SitePolicy } from '../domain/vo-policy.js';
import { AccountService } from '../engine/accounting/index.js';
import { Charging } from '../engine/accounting/index.js';
import { FollowedNegotiations } from '../engine/accounting/index.js';
import { Settlement } from '../engine/accounting/index.js';
import { UsageRecording } from '../engine/accounting/index.js';
import { VerdictCorrections } from '../engine/accounting/index.js';
import { VoUsage } from '../engine/accounting/index.js';
import type { ServerConfig } from '../engine/configuration/index.js';
import type { PlanningService } from '../engine/planning/index.js';
import type { AgreementRepository, Clock, NegotiationRepository } from '../engine/ports.js';
import type { RecordSigner } from './foundations.js';
import type { AccountStore, UsageRecordStore } from '../engine/accounting/index.js';
import { MemoryAccountStore } from '../store/memory-account-store.js';
import { MemoryUsageRecords } from '../store/memory-usage-records.js';
import { ReportFiles } from '../store/report-files.js';
import type { ServerStore } from './store.js';
import { usageRecordXml } from '../xml/usage-record-writer.js';

/**
 * The accounting side of the server (docs/accounting.md, docs/vo-policy.md),
 * assembled in one place: the bank (holds where capacity is promised, the books following
 * what happens), usage records, and VO usage SLAs when a policy file is configured.
 */
export interface AccountingParts {
  accounts: AccountService;
  charging: Charging;
  settlement: Settlement;
  recording: UsageRecording;
  shares?: VoUsage;
  /** The negotiation repository the books follow. */
  negotiations: NegotiationRepository;
  /** An agreement changed (the repository's onChange). */
  agreementChanged(change: AgreementChange): void;
  /** Operators' corrections of false violations, made through `agreements` (which keeps the audit trail). */
  corrections(agreements: ConstructorParameters<typeof VerdictCorrections>[0]['agreements']): VerdictCorrections;
  /** Start-up, with the plan restored: held offers and recent usage count for their VOs, open holds are settled. */
  restore(): Promise<number>;
  /** Once serving: usage records of agreements that ended just before the server stopped. */
  afterStart(): void;
}

export function accountingParts(options: {
  config: ServerConfig;
  store: ServerStore | undefined;
  given: { accounts?: AccountStore; usageRecords?: UsageRecordStore };
  repository: AgreementRepository;
  negotiationRepository: NegotiationRepository;
  plan: PlanningService;
  prices: PriceList;
  clock: Clock;
  logger: Logger;
  recordSigner: RecordSigner | undefined;
  baseUrl: () => string;
  readPolicy: <T>(setting: string, read: () => T) => T;
}): AccountingParts {
  const { config, store, repository, negotiationRepository, plan, prices, clock, logger } = options;
  const accountStore = options.given.accounts ?? store?.accounts ?? new MemoryAccountStore();
  const usageRecords = options.given.usageRecords ?? store?.usageRecords ?? new MemoryUsageRecords();
  const reports = new ReportFiles(path.join(config.dataDir, 'reports'));
  const charging = new Charging({ accounts: accountStore, clock });
  const settlement = new Settlement({
    accounts: accountStore,
    charging,
    agreements: repository,
    negotiations: negotiationRepository,
    reports,
    prices,
    clock,
  });
  const signer = options.recordSigner;
  const recording = new UsageRecording({
    records: usageRecords,
    agreements: repository,
    reports,
    prices,
    clock,
    documents: { write: usageRecordXml, ...(signer ? { sign: (xml: string) => signer.sign(xml) } : {}) },
    site: { machine: config.providerName, baseUrl: options.baseUrl },
  });
  const policyFile = config.voPolicyFile;
  const policy = policyFile
    ? options.readPolicy('WSAG_VO_POLICY_FILE', () =>
        parseSitePolicy(JSON.parse(fs.readFileSync(policyFile, 'utf8')), policyFile),
      )
    : undefined;
  const shares =
    policy &&
    new VoUsage({ policy, siteNodes: () => plan.clusterNodes, allocationOf: (key) => plan.allocationOf(key) });
  const failed = (error: unknown) =>
    logger.error({ err: error }, 'settling an account failed; the next start-up settles it');
  return {
    accounts: new AccountService({ accounts: accountStore, clock }),
    charging,
    settlement,
    recording,
    ...(shares ? { shares } : {}),
    corrections: (agreements) =>
      new VerdictCorrections({ repository, agreements, reports, accounts: accountStore, settlement, clock }),
    negotiations: new FollowedNegotiations(negotiationRepository, (negotiation) =>
      settlement.follow(() => settlement.negotiationChanged(negotiation), failed),
    ),
    agreementChanged(change) {
      const after = change.after;
      const ended =
        (after.state === 'Complete' || after.state === 'Terminated') && change.before?.state !== after.state;
      // An agreement that just ended: its post-runtime report is read once for the books, its usage record and its VO.
      let stored: ReturnType<ReportFiles['read']> | undefined;
      const report = () => (stored ??= reports.read(after.id));
      settlement.follow(() => settlement.agreementChanged(after, report), failed);
      settlement.follow(() => recording.agreementChanged(after, report), failed);
      if (shares && ended)
        settlement.follow(async () => shares.ended(after, (await report())?.report.happened, clock.now()), failed);
    },
    async restore() {
      if (shares && policy)
        await countShares(shares, policy, negotiationRepository, repository, usageRecords, reports, clock.now());
      return settlement.reconcile();
    },
    afterStart() {
      if (!store) return;
      settlement.follow(async () => {
        const written = await recording.recordMissing(await store.endedWithoutUsageRecord());
        if (written > 0) logger.info({ written }, 'usage records written at start-up');
      }, failed);
    },
  };
}

/**
 * Held offers count for their VOs as agreements do, and so does what jobs used in this epoch and the last (from their
 * usage records).
 */
async function countShares(
  shares: VoUsage,
  policy: SitePolicy,
  negotiations: NegotiationRepository,
  agreements: AgreementRepository,
  records: UsageRecordStore,
  reports: ReportFiles,
  now: Date,
): Promise<void> {
  for (const negotiation of await negotiations.list({ withLiveHolds: true })) {
    for (const offer of liveHolds(negotiation))
      shares.own(holdKey(offer.offerId), VoUsage.ownerOf(offer.request, negotiation.initiator));
  }
  const from = epochAt(policy, epochAt(policy, now.getTime()).start - 1).start;
  for (const record of await records.list({ after: { createdAt: new Date(from), id: '' } })) {
    const agreement = await agreements.get(record.agreementId);
    if (agreement) shares.ended(agreement, (await reports.read(agreement.id))?.report.happened, now);
  }
}
