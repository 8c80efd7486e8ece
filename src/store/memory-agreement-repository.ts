import type { Agreement, AgreementState } from '../domain/agreement.js';
import type { AgreementFilter, AgreementRepository, AuditNote } from '../engine/ports.js';
import { byCreation, pageOf } from './by-creation.js';
import { MemoryAuditLog } from './memory-audit-log.js';

/**
 * Keeps agreements in a Map. Not durable: for tests and throwaway servers only.
 * Every agreement is cloned on the way in and out, so a caller that mutates what it
 * passed or got back cannot change stored state (the SQLite store behaves the same way).
 * Audit notes go to `audit` (a log of its own unless one is shared with other repositories).
 */
export class MemoryAgreementRepository implements AgreementRepository {
  private readonly agreements = new Map<string, Agreement>();

  constructor(readonly audit: MemoryAuditLog = new MemoryAuditLog()) {}

  async insert(agreement: Agreement, notes: readonly AuditNote[] = [], committed?: () => void): Promise<void> {
    if (this.agreements.has(agreement.id)) throw new Error(`agreement ${agreement.id} already exists`);
    this.store(agreement, notes);
    committed?.();
  }

  async update(agreement: Agreement, notes: readonly AuditNote[] = [], committed?: () => void): Promise<void> {
    if (!this.agreements.has(agreement.id)) throw new Error(`agreement ${agreement.id} does not exist`);
    this.store(agreement, notes);
    committed?.();
  }

  async get(id: string): Promise<Agreement | undefined> {
    const agreement = this.agreements.get(id);
    return agreement === undefined ? undefined : structuredClone(agreement);
  }

  async list(filter: AgreementFilter = {}): Promise<Agreement[]> {
    const { initiator } = filter;
    const states = filter.state === undefined ? undefined : ([] as string[]).concat(filter.state);
    const matching = [...this.agreements.values()]
      .filter(
        (a) =>
          (initiator === undefined || a.initiator === initiator) && (states === undefined || states.includes(a.state)),
      )
      .sort(byCreation);
    return pageOf(matching, filter).map((a) => structuredClone(filter.withoutDocument ? { ...a, document: '' } : a));
  }

  async countByState(): Promise<Partial<Record<AgreementState, number>>> {
    const counts: Partial<Record<AgreementState, number>> = {};
    for (const a of this.agreements.values()) counts[a.state] = (counts[a.state] ?? 0) + 1;
    return counts;
  }

  async close(): Promise<void> {}

  private store(agreement: Agreement, notes: readonly AuditNote[]): void {
    const copy = structuredClone(agreement);
    const subject = { kind: 'agreement', id: agreement.id } as const;
    this.audit.appendWith(
      notes.map((note) => ({ ...note, subject })),
      () => this.agreements.set(agreement.id, copy),
    );
  }
}
