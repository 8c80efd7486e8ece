import type { Negotiation } from '../domain/negotiation.js';
import { plainCopy } from './plain-copy.js';

/**
 * The open negotiations a SqliteNegotiationRepository wrote last, as written: a Negotiate or
 * an accepting CreateAgreement reads its negotiation back from here instead of reading its
 * row, parsing its JSON and reading its offers' documents (docs/decisions/0008-open-negotiations-in-memory.md). Safe
 * because one server owns its database file (the data
 * directory's lock) and every write goes through the repository, which updates this first
 * thing after its transaction and forgets an entry whose commit failed. Deep copies go in
 * and out, as the store's rows would give, so a caller changing what it read changes
 * nothing here. Only open negotiations are kept, at most `capacity` (256: a few MiB, four
 * times the connections of the benchmarks), the least recently written leaving first; a
 * concluded one is rarely read again.
 */
export class RecentNegotiations {
  private readonly entries = new Map<string, Negotiation>();

  constructor(private readonly capacity = 256) {}

  get(id: string): Negotiation | undefined {
    const negotiation = this.entries.get(id);
    return negotiation === undefined ? undefined : plainCopy(negotiation);
  }

  /** The offers of `id` as last written, when it is kept. */
  storedOfferIds(id: string): ReadonlySet<string> | undefined {
    const negotiation = this.entries.get(id);
    return negotiation === undefined ? undefined : new Set(negotiation.offers.map((offer) => offer.offerId));
  }

  written(negotiation: Negotiation): void {
    this.entries.delete(negotiation.id);
    if (negotiation.state !== 'Open') return;
    this.entries.set(negotiation.id, plainCopy(negotiation));
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  forget(id: string): void {
    this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }
}
