import { describe, expect, it } from 'vitest';
import type { Segment } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import type { SiteTiming } from '../../src/scheduler/site.js';
import { cluster, hours, job, minutes, paper, T0 } from './support.js';

/**
 * Two nodes, the paper's timing (30 s to start). A reservation holds one node for the first hour; D, a one-hour Legacy
 * deadline job due at 95 minutes, runs on the other. That node fails at 30 minutes: D's restart (3630 s) no longer
 * fits before its deadline, and no checkpoint saves anything. The reservation's node is free for the last 35 minutes
 * before it: more than half of D's run (1815 s), less than 60 % (2178 s).
 */
function scenario(timing: Partial<SiteTiming> = {}) {
  const pm = new PlanningManager(cluster(2, { timing: { ...paper, ...timing } }));
  const reservation = job({ id: 'R', kind: 'Reservation', nodes: 1, window: { start: T0, end: T0 + hours(1) } });
  expect(pm.admit({ ...reservation, runtimeSeconds: 3600 }, T0 - minutes(5)).accepted).toBe(true);
  const deadline = T0 + minutes(95);
  const d = job({ id: 'D', kind: 'Deadline', level: 'Legacy', nodes: 1, coveredOutages: 0, deadline });
  expect(pm.admit(d, T0).accepted).toBe(true);
  const [node] = pm.job('D')?.segments[0]?.nodes as [string];
  const report = pm.nodeFailed(node, T0 + minutes(30));
  return { pm, report, deadline };
}

describe('a deadline job the plan can no longer fit before its deadline runs on the chance it needs less', () => {
  it('runs on the node free for the last half of its run, stops at its deadline, and stays in P', () => {
    const { pm, report, deadline } = scenario();
    const piece = pm.job('D')?.segments.at(-1) as Segment;
    const reservationNode = pm.job('R')?.segments[0]?.nodes[0];
    expect(piece).toMatchObject({ nodes: [reservationNode], intervals: 0, onChance: true });
    // From the reservation's end on, to the deadline: the longest share of its run there is, to 1 % of it.
    expect(piece.start).toBeGreaterThanOrEqual(T0 + hours(1));
    expect(piece.start).toBeLessThanOrEqual(T0 + hours(1) + 37_000);
    expect(piece.end).toBeLessThanOrEqual(deadline);
    expect(piece.end).toBeGreaterThan(deadline - 37_000);
    expect(report.problematic.map((p) => p.id)).toEqual(['D']);
    expect(pm.job('D')?.problem).toMatch(/cannot restart in time: .*; runs from .* on the chance it needs less$/);
  });

  it('finishing early on it, the job leaves the plan kept', () => {
    const { pm } = scenario();
    const piece = pm.job('D')?.segments.at(-1) as Segment;
    pm.jobFinished('D', piece.start + minutes(20));
    expect(pm.job('D')).toBeUndefined();
    expect(pm.problematic()).toEqual([]);
  });

  it('waits in P for room for its whole run when the site sets chanceShare to 1', () => {
    const { pm, report } = scenario({ chanceShare: 1 });
    expect(pm.job('D')?.segments.some((s) => s.end > T0 + minutes(30))).toBe(false);
    expect(report.problematic.map((p) => p.id)).toEqual(['D']);
  });

  it('does not run where less than chanceShare of its run fits before the deadline', () => {
    const { pm } = scenario({ chanceShare: 0.6 });
    expect(pm.job('D')?.segments.some((s) => s.onChance)).toBe(false);
  });
});
