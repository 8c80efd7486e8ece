import { describe, expect, it } from 'vitest';
import { FairUseExceeded } from '../../src/domain/errors.js';
import {
  checkFairUse,
  defaultFairUse,
  nodeHoursAhead,
  parseFairUse,
  peakNodes,
  type FairUseLimits,
  type PartyHoldings,
} from '../../src/domain/fair-use.js';

const h = 3600_000;
const none: PartyHoldings = { bookings: [], agreements: 0, pending: 0 };
const options = { now: 0, slaNodes: 16, agreement: true, pending: false };
const refusal = (run: () => void): FairUseExceeded => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FairUseExceeded);
    return error as FairUseExceeded;
  }
  throw new Error('expected a FairUseExceeded');
};

describe('fair-use limits', () => {
  it('reads off, and NAME=VALUE pairs over the defaults; names what is wrong', () => {
    const defaults = defaultFairUse(16);
    expect(defaults).toEqual({
      share: 0.5,
      nodeHours: 1344,
      agreements: 200,
      pending: 20,
      pendingSeconds: 3600,
      negotiations: 20,
      checkpointBytes: 8 * 1024 ** 3,
    });
    expect(parseFairUse('off', defaults)).toEqual({});
    expect(parseFairUse('', defaults)).toEqual(defaults);
    expect(parseFairUse('share=0.25, agreements=5, nodeHours=off', defaults)).toEqual({
      ...defaults,
      share: 0.25,
      agreements: 5,
      nodeHours: undefined,
    });
    expect(parseFairUse('share=1.5', defaults)).toEqual({
      error: 'share must be a fraction greater than 0 and at most 1 (or off), got "1.5"',
    });
    expect(parseFairUse('pending=2.5', defaults)).toEqual({
      error: 'pending must be a whole number of at least 1 (or off), got "2.5"',
    });
    expect(parseFairUse('streams=3', defaults)).toMatchObject({
      error: expect.stringMatching(/^"streams=3" is not NAME=VALUE with NAME one of share, nodeHours/),
    });
  });

  it("the peak of one party's bookings over a new one is found at a start inside it", () => {
    const held = [
      { start: 0, end: 2 * h, nodes: 4 },
      { start: h, end: 3 * h, nodes: 3 },
      { start: 5 * h, end: 6 * h, nodes: 9 },
    ];
    expect(peakNodes(held, { start: 0, end: 4 * h, nodes: 2 })).toEqual({ nodes: 9, at: h });
    expect(peakNodes(held, { start: 3 * h, end: 5 * h, nodes: 2 })).toEqual({ nodes: 2, at: 3 * h });
    expect(nodeHoursAhead({ start: -h, end: 2 * h, nodes: 4 }, 0)).toBe(8);
  });

  it('refuses past each limit, naming the party, what it holds and the most it may', () => {
    const limits: FairUseLimits = { share: 0.5, nodeHours: 20, agreements: 2, pending: 1 };
    const held: PartyHoldings = { bookings: [{ start: 0, end: h, nodes: 6 }], agreements: 1, pending: 1 };
    const share = refusal(() => checkFairUse(limits, 'alice', held, { start: 0, end: h, nodes: 3 }, options));
    expect([share.limit, share.message]).toEqual([
      'share',
      "alice would hold 9 of the site's 16 SLA nodes at 1970-01-01T00:00:00.000Z; one party holds at most 8 at any time (share=0.5 in WSAG_FAIR_USE): ask for fewer nodes or another time",
    ]);
    checkFairUse(limits, 'alice', held, { start: h, end: 2 * h, nodes: 8 }, options);
    expect(refusal(() => checkFairUse(limits, 'alice', held, { start: h, end: 3 * h, nodes: 8 }, options)).limit).toBe(
      'nodeHours',
    );
    expect(
      refusal(() =>
        checkFairUse(limits, 'alice', { ...held, agreements: 2 }, { start: h, end: 2 * h, nodes: 1 }, options),
      ).limit,
    ).toBe('agreements');
    expect(
      refusal(() =>
        checkFairUse(limits, 'alice', held, { start: h, end: 2 * h, nodes: 1 }, { ...options, pending: true }),
      ).limit,
    ).toBe('pending');
    // A held counter-offer is no agreement: only capacity counts.
    checkFairUse(
      limits,
      'alice',
      { ...held, agreements: 2 },
      { start: h, end: 2 * h, nodes: 1 },
      { ...options, agreement: false },
    );
    checkFairUse({}, 'alice', held, { start: 0, end: 100 * h, nodes: 16 }, options);
    checkFairUse(limits, 'alice', none, { start: 0, end: h, nodes: 8 }, options);
  });
});
