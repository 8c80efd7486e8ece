import { describe, expect, it } from 'vitest';
import type { Negotiation } from '../../src/domain/negotiation.js';
import { FollowedNegotiations } from '../../src/engine/accounting/followed-negotiations.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { makeHold, makeNegotiation, makeOffer } from '../store/fixtures/make-negotiation.js';

describe('FollowedNegotiations', () => {
  it('hands the books each negotiation as stored: later changes to it do not reach what they follow', async () => {
    const followed: Negotiation[] = [];
    const repository = new FollowedNegotiations(new MemoryNegotiationRepository(), (negotiation) =>
      followed.push(negotiation),
    );
    const negotiation = makeNegotiation({ offers: [makeOffer({ offerId: 'neg-1-1', hold: makeHold() })] });
    await repository.insert(negotiation);

    // The service goes on with the same object: a hold replaced, an offer added, the state changed.
    const offer = negotiation.offers[0]!;
    offer.hold = { ...offer.hold!, state: 'Released' };
    negotiation.offers.push(makeOffer({ offerId: 'neg-1-2' }));
    negotiation.state = 'Terminated';
    await repository.update(negotiation);

    expect(followed.map((n) => [n.state, n.offers.map((o) => `${o.offerId} ${o.hold?.state ?? '-'}`)])).toEqual([
      ['Open', ['neg-1-1 Held']],
      ['Terminated', ['neg-1-1 Released', 'neg-1-2 -']],
    ]);
  });
});
