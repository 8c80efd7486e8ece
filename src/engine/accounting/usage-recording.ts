import type { Agreement } from '../../domain/agreement.js';
import { NotAuthorized, UnknownResource } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import type { PriceList } from '../../domain/pricing.js';
import { usageRecordOf, type UsageRecord } from '../../domain/usage.js';
import type { AgreementRepository, Clock } from '../ports.js';
import type { StoredUsageRecord, UsageRecordStore } from './ports.js';
import type { ReportStore, StoredReport } from '../execution/ports.js';

/** How a usage record becomes a document (src/xml/usage-record-writer.ts), and is signed when the server signs. */
export interface UsageRecordDocuments {
  write(record: UsageRecord): string;
  sign?(recordXml: string): string;
}

/**
 * Usage records: every agreement that ends Complete or Terminated gets one OGF
 * Usage Record (GFD.98) of what its job used and was charged, written once (the store
 * keeps the first) when the change is seen, and at start-up for any ended agreement that
 * has none, or when it is read first. The initiator and operators read them.
 */
export class UsageRecording {
  constructor(
    private readonly deps: {
      records: UsageRecordStore;
      agreements: Pick<AgreementRepository, 'get'>;
      reports: ReportStore;
      documents: UsageRecordDocuments;
      prices: PriceList;
      clock: Clock;
      site: { machine: string; baseUrl: () => string };
    },
  ) {}

  /** `report` reads the agreement's post-runtime report (a caller that has it already passes it on). */
  async agreementChanged(
    agreement: Agreement,
    report: () => Promise<StoredReport | undefined> = () => this.deps.reports.read(agreement.id),
  ): Promise<void> {
    if (agreement.state !== 'Complete' && agreement.state !== 'Terminated') return;
    if (await this.deps.records.get(agreement.id)) return;
    const run = (await report())?.report.happened;
    const record = usageRecordOf(
      agreement,
      run,
      this.deps.prices,
      { machine: this.deps.site.machine, baseUrl: this.deps.site.baseUrl() },
      this.deps.clock.now(),
    );
    if (!record) return;
    const xml = this.deps.documents.write(record);
    const signed = this.deps.documents.sign?.(xml);
    await this.deps.records.add({
      agreementId: agreement.id,
      initiator: agreement.initiator,
      createdAt: record.createdAt,
      xml,
      ...(signed ? { signed } : {}),
    });
  }

  /** Start-up: records for ended agreements that have none (the server stopped before writing them). */
  async recordMissing(ids: readonly string[]): Promise<number> {
    let written = 0;
    for (const id of ids) {
      const agreement = await this.deps.agreements.get(id);
      if (!agreement) continue;
      await this.agreementChanged(agreement);
      written++;
    }
    return written;
  }

  /** One record, for its initiator and operators. */
  async get(agreementId: string, caller: Caller): Promise<StoredUsageRecord> {
    let record = await this.deps.records.get(agreementId);
    if (!record) {
      // Ended, and its record not written yet (that follows the change): a caller who saw it end reads it now.
      const agreement = await this.deps.agreements.get(agreementId);
      if (agreement) await this.agreementChanged(agreement);
      record = await this.deps.records.get(agreementId);
    }
    if (!record)
      throw new UnknownResource(
        `no usage record for agreement "${agreementId}": one is written when the agreement ends Complete or Terminated`,
      );
    if (!caller.isAdmin && record.initiator !== caller.identity)
      throw new NotAuthorized(`the usage record of agreement "${agreementId}" is not yours`);
    return record;
  }

  /** Records in order of creation: an operator's are everyone's, anyone else's their own. */
  list(
    caller: Caller,
    page: { after?: { createdAt: Date; id: string }; limit?: number } = {},
  ): Promise<StoredUsageRecord[]> {
    return this.deps.records.list({ ...page, ...(caller.isAdmin ? {} : { initiator: caller.identity }) });
  }
}
