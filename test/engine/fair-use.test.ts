import { describe, expect, it } from 'vitest';
import type { Agreement } from '../../src/domain/agreement.js';
import type { Allocation } from '../../src/domain/allocation.js';
import { FairUseExceeded } from '../../src/domain/errors.js';
import type { ServiceRequest } from '../../src/domain/terms.js';
import { FairUse } from '../../src/engine/fair-use/index.js';

const h = 3600_000;
const now = new Date(0);
const alice = { identity: 'alice', isAdmin: false };
const operator = { identity: 'root', isAdmin: true };
const request = (over: Partial<ServiceRequest> = {}) =>
  ({
    nodeCount: 1,
    libraries: [],
    requestKind: 'Binding',
    guaranteeLevel: 'Standard',
    maxCoveredOutages: 0,
    securityPolicy: [],
    ...over,
  }) as ServiceRequest;
const booking = (nodes: number, from = 0, to = h): Allocation => ({ start: new Date(from), end: new Date(to), nodes });

function fairUse(limits = { share: 0.5, agreements: 3, pending: 1, checkpointBytes: 100 }) {
  const plan = new Map<string, Allocation>();
  const refusals: string[] = [];
  const use = new FairUse({
    limits,
    slaNodes: () => 8,
    allocationOf: (key) => plan.get(key),
    onRefusal: (limit) => refusals.push(limit),
  });
  const book = (
    key: string,
    kind: 'agreement' | 'pending' | 'hold',
    allocation: Allocation,
    caller = alice,
    over: Partial<ServiceRequest> = {},
  ) => {
    plan.set(key, allocation);
    try {
      use.check(key, kind, request(over), allocation, caller, now);
    } catch (error) {
      plan.delete(key);
      throw error;
    }
    use.own(key, caller.identity, kind, request(over));
  };
  return { use, plan, refusals, book };
}

describe('FairUse', () => {
  it("counts a party's agreements, pending agreements and holds until the plan lets them go", () => {
    const { use, plan, refusals, book } = fairUse();
    book('a1', 'agreement', booking(2));
    book('hold:o1', 'hold', booking(2));
    expect(() => book('a2', 'agreement', booking(1))).toThrow(FairUseExceeded); // 5 of 8 nodes: past the share of 4
    book('a2', 'agreement', booking(4, h, 2 * h));
    book('p1', 'pending', booking(1, 2 * h, 3 * h));
    expect(() => book('p2', 'pending', booking(1, 2 * h, 3 * h))).toThrow(/already has 1 pending agreements/);
    expect(() => book('a3', 'agreement', booking(1, 4 * h, 5 * h))).toThrow(
      /already has 3 agreements holding capacity/,
    );
    expect(refusals).toEqual(['share', 'pending', 'agreements']);
    plan.delete('a1'); // terminated: released from the plan
    book('a3', 'agreement', booking(1, 4 * h, 5 * h));
    expect(use.holdings('alice')).toMatchObject({ agreements: 3, pending: 1 });
    use.changed({ id: 'p1', state: 'Observed' } as Agreement);
    expect(use.holdings('alice')).toMatchObject({ agreements: 3, pending: 0 });
    // Accepting the held offer: it becomes an agreement.
    plan.set('a4', plan.get('hold:o1') as Allocation);
    plan.delete('hold:o1');
    use.rename('hold:o1', 'a4', 'agreement');
    expect(use.holdings('alice')).toMatchObject({ agreements: 4 });
  });

  it('exempts operators, and counts neither background work nor a job on a reservation', () => {
    const { use, book } = fairUse();
    book('r1', 'agreement', booking(8), operator);
    book('r2', 'agreement', booking(8), operator);
    book('b1', 'agreement', booking(8), alice, { guaranteeLevel: 'Background' });
    book('u1', 'agreement', booking(8), alice, { useReservation: 'r0' });
    expect(use.holdings('alice').agreements).toBe(0);
    expect(use.holdings('root').agreements).toBe(2); // counted, never refused
  });

  it("keeps one party's checkpoints within its bytes; an ended agreement's do not count", () => {
    const { use, refusals } = fairUse();
    use.checkCheckpoint(alice, 'a1', 60);
    use.checkpointKept('a1', 'alice', 60);
    use.checkCheckpoint(alice, 'a1', 100); // replaces its own
    expect(() => use.checkCheckpoint(alice, 'a2', 41)).toThrow(
      'alice keeps 60 bytes of checkpoints here; this one of 41 bytes would pass the 100 one party may keep (checkpointBytes=100 in WSAG_FAIR_USE)',
    );
    use.checkCheckpoint(operator, 'a2', 1000);
    use.changed({ id: 'a1', state: 'Terminated' } as Agreement);
    use.checkCheckpoint(alice, 'a2', 100);
    expect(refusals).toEqual(['checkpointBytes']);
  });
});
