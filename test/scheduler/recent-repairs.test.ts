import { describe, expect, it } from 'vitest';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { poissonAtLeast, RecentRepairs } from '../../src/scheduler/recent-repairs.js';
import { cluster, hours, job, T0 } from './support.js';

const days = (d: number) => d * 86_400_000;

describe('the one-sided Poisson test', () => {
  it('answers the chance of at least k events at a mean', () => {
    expect(poissonAtLeast(0, 3)).toBe(1);
    expect(poissonAtLeast(1, 2)).toBeCloseTo(1 - Math.exp(-2), 12);
    // P(X >= 3 | 1) = 1 - e^-1 (1 + 1 + 1/2)
    expect(poissonAtLeast(3, 1)).toBeCloseTo(1 - Math.exp(-1) * 2.5, 12);
    expect(poissonAtLeast(2, 0)).toBe(0);
  });
});

describe('failures soon after a repair, counted apart', () => {
  it('counts the node-days nodes spend repaired recently and out of service', () => {
    const rr = new RecentRepairs(10, hours(24));
    rr.begin(T0);
    rr.failed(T0 + days(1), 0);
    rr.repaired(T0 + days(2), 0);
    // Node 0 fails again 12 h after its repair: a recent one, 0.5 node-days spent recently repaired.
    rr.failed(T0 + days(2.5), 0);
    rr.repaired(T0 + days(3), 0);
    const rate = rr.rate(T0 + days(10));
    // Then 1 more node-day repaired recently (up since day 3, settled from day 4).
    expect(rate.failures).toBe(1);
    expect(rate.nodeDays).toBeCloseTo(1.5, 10);
    expect(rate.othersFailures).toBe(1);
    // 10 nodes x 10 days, less 1.5 recently repaired and 1.5 out of service.
    expect(rate.othersNodeDays).toBeCloseTo(97, 10);
    expect(rate.hours).toBe(24);
  });

  it('chooses recently repaired nodes last only once their failures are more than chance', () => {
    const rr = new RecentRepairs(100, hours(24));
    rr.begin(T0);
    // Each of 10 nodes fails, is repaired, and fails again within a day, over 10 days.
    for (let i = 0; i < 10; i++) {
      const t = T0 + days(i);
      rr.failed(t, i);
      rr.repaired(t + hours(2), i);
      rr.failed(t + hours(8), i);
      rr.repaired(t + hours(10), i);
      // Fewer than three such failures are a coincidence, however unlikely at the others' rate.
      if (i < 2) expect(rr.rate(t + hours(10)).chosenLast).toBe(false);
    }
    const rate = rr.rate(T0 + days(10));
    expect(rate.failures).toBe(10);
    expect(rate.perNodeDay).toBeGreaterThan(10 * rate.othersPerNodeDay);
    expect(rate.chosenLast).toBe(true);
  });

  it('stays quiet where a node fails as often whatever its age', () => {
    const rr = new RecentRepairs(100, hours(24));
    rr.begin(T0);
    // 100 failures, each node once a day apart from its repair by 20 days: none recent.
    for (let i = 0; i < 100; i++) {
      rr.failed(T0 + days(i / 10), i);
      rr.repaired(T0 + days(i / 10) + hours(1), i);
    }
    // One failure within a day of a repair among about 2.5 expected at the others' rate.
    rr.failed(T0 + days(10.1), 99);
    const rate = rr.rate(T0 + days(11));
    expect(rate.failures).toBe(1);
    expect(rate.chosenLast).toBe(false);
  });

  it('never chooses them last with recentRepairHours 0', () => {
    const rr = new RecentRepairs(4, 0);
    rr.begin(T0);
    for (let i = 0; i < 4; i++) {
      rr.failed(T0 + hours(i), i);
      rr.repaired(T0 + hours(i) + 1000, i);
      rr.failed(T0 + hours(i) + 2000, i);
    }
    expect(rr.rate(T0 + days(1)).chosenLast).toBe(false);
  });
});

describe('the planner and nodes repaired recently', () => {
  // Nodes n01..n04 fail and fail again within hours of their repair, then n01 is repaired once more.
  function planAfterFlakyRepairs(recentRepairHours: number): PlanningManager {
    const pm = new PlanningManager(cluster(8, { timing: { recentRepairHours } }));
    for (let i = 1; i <= 4; i++) {
      const id = `n0${i}`;
      const t = T0 + days(i);
      pm.nodeFailed(id, t);
      pm.nodeRepaired(id, t + hours(1));
      pm.nodeFailed(id, t + hours(3));
      pm.nodeRepaired(id, t + hours(4));
    }
    return pm;
  }

  it('places new work on settled nodes, not on one repaired an hour ago', () => {
    const pm = planAfterFlakyRepairs(24);
    expect(pm.recentRepairs.rate(T0 + days(4) + hours(4)).chosenLast).toBe(true);
    const decision = pm.admit(job({ id: 'a', kind: 'BestEffort', nodes: 4 }), T0 + days(4) + hours(5));
    expect(decision.accepted).toBe(true);
    if (!decision.accepted) return;
    // n04 was repaired an hour before; packing alone takes the node whose booking ended last: n04.
    expect(decision.job.segments[0]?.nodes).not.toContain('n04');
  });

  it('packs as before when recentRepairHours is 0', () => {
    const pm = planAfterFlakyRepairs(0);
    const decision = pm.admit(job({ id: 'a', kind: 'BestEffort', nodes: 4 }), T0 + days(4) + hours(5));
    expect(decision.accepted && decision.job.segments[0]?.nodes).toContain('n04');
  });

  it('takes a recently repaired node when the settled ones are not enough', () => {
    const pm = planAfterFlakyRepairs(24);
    const decision = pm.admit(job({ id: 'a', kind: 'BestEffort', nodes: 8 }), T0 + days(4) + hours(5));
    expect(decision.accepted && decision.job.segments[0]?.nodes).toHaveLength(8);
  });
});
