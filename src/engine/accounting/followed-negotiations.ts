import { snapshotOf, type Negotiation } from '../../domain/negotiation.js';
import type { AuditNote, NegotiationFilter, NegotiationRepository } from '../ports.js';

/**
 * A negotiation repository that tells `follow` about every negotiation it stored, as stored (the books follow its
 * holds).
 */
export class FollowedNegotiations implements NegotiationRepository {
  constructor(
    private readonly inner: NegotiationRepository,
    private readonly follow: (negotiation: Negotiation) => void,
  ) {}

  async insert(negotiation: Negotiation, audit?: readonly AuditNote[]): Promise<void> {
    await this.inner.insert(negotiation, audit);
    this.follow(snapshotOf(negotiation));
  }

  async update(negotiation: Negotiation, audit?: readonly AuditNote[]): Promise<void> {
    await this.inner.update(negotiation, audit);
    this.follow(snapshotOf(negotiation));
  }

  get(id: string): Promise<Negotiation | undefined> {
    return this.inner.get(id);
  }

  list(filter?: NegotiationFilter): Promise<Negotiation[]> {
    return this.inner.list(filter);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
