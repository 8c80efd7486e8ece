import type { IdempotencyRecord, IdempotencyRecords } from '../engine/ports.js';

/** Idempotency-Key records in memory (a server on in-memory repositories; tests). */
export class MemoryIdempotencyRecords implements IdempotencyRecords {
  private readonly records = new Map<string, IdempotencyRecord>();

  async claim(record: IdempotencyRecord, since: Date): Promise<IdempotencyRecord> {
    for (const [id, kept] of this.records) if (kept.createdAt < since) this.records.delete(id);
    const id = `${record.party}\n${record.key}`;
    const kept = this.records.get(id) ?? { ...record };
    this.records.set(id, kept);
    return { ...kept };
  }

  async answered(party: string, key: string, answer: { status: number; body: string }): Promise<void> {
    const kept = this.records.get(`${party}\n${key}`);
    if (kept) kept.answer = { ...answer };
  }
}
