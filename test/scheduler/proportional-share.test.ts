import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { ProportionalShare } from '../../src/scheduler/proportional-share.js';
import { cluster, hours, job, minutes, T0 } from './support.js';

/**
 * Tycoon's proportional share for best-effort work (Sandholm 2007): bidders with a
 * backlog get spare node-time in proportion to their bids. Four nodes with no set-up
 * times; each bidder keeps eight 10-minute one-node jobs waiting; the clock moves in
 * 5-minute steps and the node-time each bidder got is counted from hour 10 to hour 90.
 */
const zero = {
  nodeInitSeconds: 0,
  storageInitSecondsPerGB: 0,
  storageRollbackSecondsPerGB: 0,
  storageMountSeconds: 0,
  deinitSeconds: 0,
  slowdownFactor: 1,
};
const from = T0 + hours(10);
const to = T0 + hours(90);

function run(bids: (t: number) => Record<string, number>, until = T0 + hours(100)): Record<string, number> {
  const pm = new PlanningManager(cluster(4, { timing: zero }));
  const market = new ProportionalShare();
  const got: Record<string, number> = {};
  const owner = new Map<string, string>();
  let n = 0;
  const credit = (j: PlannedJob) => {
    const bidder = owner.get(j.spec.id) as string;
    for (const s of j.segments)
      got[bidder] = (got[bidder] ?? 0) + s.nodes.length * Math.max(0, Math.min(s.end, to) - Math.max(s.start, from));
  };
  for (let t = T0; t < until; t += minutes(5)) {
    for (const j of pm.advance(t).left) credit(j);
    for (const [bidder, rate] of Object.entries(bids(t))) {
      const waiting = [...owner].filter(
        ([id, b]) => b === bidder && (pm.job(id)?.segments[0]?.start ?? -Infinity) > t,
      ).length;
      for (let k = waiting; k < 8; k++) {
        const id = `${bidder}-${n++}`;
        owner.set(id, bidder);
        const queueTag = market.tag(bidder, rate, 600, pm.virtualTime());
        pm.admit(
          job({
            id,
            kind: 'BestEffort',
            level: 'Legacy',
            nodes: 1,
            runtimeSeconds: 600,
            coveredOutages: 0,
            arrival: t,
            queueTag,
          }),
          t,
        );
      }
    }
  }
  const total = Object.values(got).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(got).map(([b, ms]) => [b, ms / total]));
}

describe('proportional share of spare capacity by bid', () => {
  it('bids 1, 2 and 3: node-time 1/6, 2/6 and 3/6, each within 1 %', () => {
    const shares = run(() => ({ a: 1, b: 2, c: 3 }));
    expect(Math.abs((shares.a as number) / (1 / 6) - 1)).toBeLessThan(0.01);
    expect(Math.abs((shares.b as number) / (2 / 6) - 1)).toBeLessThan(0.01);
    expect(Math.abs((shares.c as number) / (3 / 6) - 1)).toBeLessThan(0.01);
  });

  it('equal bids share equally; first come first served is what one bidder alone gets', () => {
    const shares = run(() => ({ a: 5, b: 5 }));
    expect(Math.abs((shares.a as number) - 0.5)).toBeLessThan(0.005);
  });

  it('recomputed as bids change: a bidder raising its bid from 1 to 3 at hour 50 gets 1/3, then 3/5', () => {
    const before = run(() => ({ a: 1, b: 2 }), T0 + hours(50));
    expect(Math.abs((before.a as number) / (1 / 3) - 1)).toBeLessThan(0.02);
    // From hour 10 to 90 with the change at hour 50: half the window at 1/3, half at 3/5.
    const shares = run((t) => ({ a: t < T0 + hours(50) ? 1 : 3, b: 2 }));
    expect(Math.abs((shares.a as number) / ((1 / 3 + 3 / 5) / 2) - 1)).toBeLessThan(0.02);
  });
});
