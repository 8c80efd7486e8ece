import type { StoredUsageRecord, UsageRecordStore } from '../engine/accounting/index.js';

/** Usage records in memory (tests); the same contract as SqliteUsageRecords. */
export class MemoryUsageRecords implements UsageRecordStore {
  private readonly records = new Map<string, StoredUsageRecord>();

  async add(record: StoredUsageRecord): Promise<boolean> {
    if (this.records.has(record.agreementId)) return false;
    this.records.set(record.agreementId, structuredClone(record));
    return true;
  }

  async get(agreementId: string): Promise<StoredUsageRecord | undefined> {
    const record = this.records.get(agreementId);
    return record && structuredClone(record);
  }

  async list(
    filter: { initiator?: string; after?: { createdAt: Date; id: string }; limit?: number } = {},
  ): Promise<StoredUsageRecord[]> {
    const after = filter.after;
    return [...this.records.values()]
      .filter((r) => filter.initiator === undefined || r.initiator === filter.initiator)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.agreementId.localeCompare(b.agreementId))
      .filter(
        (r) =>
          !after ||
          r.createdAt.getTime() > after.createdAt.getTime() ||
          (r.createdAt.getTime() === after.createdAt.getTime() && r.agreementId > after.id),
      )
      .slice(0, filter.limit ?? Number.POSITIVE_INFINITY)
      .map((r) => structuredClone(r));
  }
}
