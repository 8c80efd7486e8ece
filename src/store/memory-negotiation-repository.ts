import type { Negotiation } from '../domain/negotiation.js';
import { liveHolds } from '../domain/negotiation.js';
import type { NegotiationRepository } from '../engine/ports.js';
import { byCreation } from './by-creation.js';

/**
 * Keeps negotiations in a Map. Not durable: for tests and throwaway servers only.
 * Cloned on the way in and out, like MemoryAgreementRepository, so callers never share
 * objects with the store.
 */
export class MemoryNegotiationRepository implements NegotiationRepository {
  private readonly negotiations = new Map<string, Negotiation>();

  async insert(negotiation: Negotiation): Promise<void> {
    if (this.negotiations.has(negotiation.id)) throw new Error(`negotiation ${negotiation.id} already exists`);
    this.negotiations.set(negotiation.id, structuredClone(negotiation));
  }

  async update(negotiation: Negotiation): Promise<void> {
    if (!this.negotiations.has(negotiation.id)) throw new Error(`negotiation ${negotiation.id} does not exist`);
    this.negotiations.set(negotiation.id, structuredClone(negotiation));
  }

  async get(id: string): Promise<Negotiation | undefined> {
    const negotiation = this.negotiations.get(id);
    return negotiation === undefined ? undefined : structuredClone(negotiation);
  }

  async list(filter: { initiator?: string; withLiveHolds?: boolean } = {}): Promise<Negotiation[]> {
    const { initiator, withLiveHolds = false } = filter;
    return [...this.negotiations.values()]
      .filter((n) => initiator === undefined || n.initiator === initiator)
      .filter((n) => !withLiveHolds || liveHolds(n).length > 0)
      .sort(byCreation)
      .map((n) => structuredClone(n));
  }

  async close(): Promise<void> {}
}
