import type { Negotiation } from '../domain/negotiation.js';
import { firstHoldExpiry, liveHolds } from '../domain/negotiation.js';
import type { AuditNote, NegotiationFilter, NegotiationRepository } from '../engine/ports.js';
import { byCreation, pageOf } from './by-creation.js';
import { MemoryAuditLog } from './memory-audit-log.js';

/**
 * Keeps negotiations in a Map. Not durable: for tests and throwaway servers only.
 * Cloned on the way in and out, like MemoryAgreementRepository, so callers never share
 * objects with the store. Audit notes go to `audit`, like MemoryAgreementRepository's.
 */
export class MemoryNegotiationRepository implements NegotiationRepository {
  private readonly negotiations = new Map<string, Negotiation>();

  constructor(readonly audit: MemoryAuditLog = new MemoryAuditLog()) {}

  async insert(negotiation: Negotiation, notes: readonly AuditNote[] = []): Promise<void> {
    if (this.negotiations.has(negotiation.id)) throw new Error(`negotiation ${negotiation.id} already exists`);
    this.store(negotiation, notes);
  }

  async update(negotiation: Negotiation, notes: readonly AuditNote[] = []): Promise<void> {
    if (!this.negotiations.has(negotiation.id)) throw new Error(`negotiation ${negotiation.id} does not exist`);
    this.store(negotiation, notes);
  }

  async get(id: string): Promise<Negotiation | undefined> {
    const negotiation = this.negotiations.get(id);
    return negotiation === undefined ? undefined : structuredClone(negotiation);
  }

  async list(filter: NegotiationFilter = {}): Promise<Negotiation[]> {
    const { initiator, state, withLiveHolds = false, holdExpiringBy } = filter;
    const matching = [...this.negotiations.values()]
      .filter(
        (n) => (initiator === undefined || n.initiator === initiator) && (state === undefined || n.state === state),
      )
      .filter((n) => !withLiveHolds || liveHolds(n).length > 0)
      .filter(
        (n) => holdExpiringBy === undefined || (firstHoldExpiry(n)?.getTime() ?? Infinity) <= holdExpiringBy.getTime(),
      )
      .sort(byCreation);
    return pageOf(matching, filter).map((n) => structuredClone(n));
  }

  async close(): Promise<void> {}

  private store(negotiation: Negotiation, notes: readonly AuditNote[]): void {
    const copy = structuredClone(negotiation);
    const subject = { kind: 'negotiation', id: negotiation.id } as const;
    this.audit.appendWith(
      notes.map((note) => ({ ...note, subject })),
      () => this.negotiations.set(negotiation.id, copy),
    );
  }
}
