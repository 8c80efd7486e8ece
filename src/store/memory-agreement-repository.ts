import type { Agreement } from '../domain/agreement.js';
import type { AgreementRepository } from '../engine/ports.js';
import { byCreation } from './by-creation.js';

/**
 * Keeps agreements in a Map. Not durable: for tests and throwaway servers only.
 * Every agreement is cloned on the way in and out, so a caller that mutates what it
 * passed or got back cannot change stored state (the SQLite store behaves the same way).
 */
export class MemoryAgreementRepository implements AgreementRepository {
  private readonly agreements = new Map<string, Agreement>();

  async insert(agreement: Agreement): Promise<void> {
    if (this.agreements.has(agreement.id)) throw new Error(`agreement ${agreement.id} already exists`);
    this.agreements.set(agreement.id, structuredClone(agreement));
  }

  async update(agreement: Agreement): Promise<void> {
    if (!this.agreements.has(agreement.id)) throw new Error(`agreement ${agreement.id} does not exist`);
    this.agreements.set(agreement.id, structuredClone(agreement));
  }

  async get(id: string): Promise<Agreement | undefined> {
    const agreement = this.agreements.get(id);
    return agreement === undefined ? undefined : structuredClone(agreement);
  }

  async list(filter: { initiator?: string } = {}): Promise<Agreement[]> {
    const { initiator } = filter;
    return [...this.agreements.values()]
      .filter((a) => initiator === undefined || a.initiator === initiator)
      .sort(byCreation)
      .map((a) => structuredClone(a));
  }

  async close(): Promise<void> {}
}
