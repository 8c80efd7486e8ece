import { describe, expect, it } from 'vitest';
import { FailureRateEstimate } from '../../src/scheduler/failure-rate.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, T0 } from './support.js';

const days = (d: number) => d * 86_400_000;

describe('the failure rate the planner learns', () => {
  it('starts at the configured rate and moves to what the nodes do as node-days pass', () => {
    // Prior 0.02 a node and day, worth 1000 node-days; 100 nodes.
    const rate = new FailureRateEstimate(0.02, 1000, 100);
    expect(rate.perNodeDay(T0)).toBe(0.02);
    rate.begin(T0);
    for (let i = 0; i < 30; i++) rate.failed(T0 + days(i / 3));
    // 30 failures in 10 days on 100 nodes (0.03): (20 + 30) / (1000 + 1000) = 0.025.
    expect(rate.nodeDays(T0 + days(10))).toBe(1000);
    expect(rate.perNodeDay(T0 + days(10))).toBeCloseTo(0.025, 10);
    // Quiet nodes pull it down: no more failures for 90 days.
    expect(rate.perNodeDay(T0 + days(100))).toBeCloseTo(50 / 11_000, 10);
  });

  it('makes the planner take the checkpoints that pay at the rate it has seen', () => {
    // A one-hour job on 16 nodes (t_cp 64 s): none pay at 0.02, some at the rate of a failing cluster.
    const pm = new PlanningManager(cluster(16, { timing: { nodeFailuresPriorNodeDays: 16 } }));
    const long = (id: string) => job({ id, kind: 'Deadline', nodes: 16, runtimeSeconds: 3600 });
    const before = pm.admit(long('a'), T0);
    expect(before.accepted && before.job.checkpoints.count).toBe(0);
    pm.release('a');
    for (let i = 0; i < 16; i++) {
      pm.nodeFailed(`n${String(i + 1).padStart(2, '0')}`, T0 + hours(1));
      pm.nodeRepaired(`n${String(i + 1).padStart(2, '0')}`, T0 + hours(2));
    }
    expect(pm.failureRate.perNodeDay(T0 + hours(2))).toBeGreaterThan(0.5);
    const after = pm.admit(long('b'), T0 + hours(2));
    expect(after.accepted && after.job.checkpoints.count).toBeGreaterThan(0);
  });
});

describe('a prior worth infinitely many node-days', () => {
  it('never moves (the baseline without checkpoints that pay)', () => {
    const rate = new FailureRateEstimate(0, Number.POSITIVE_INFINITY, 10);
    rate.begin(T0);
    rate.failed(T0 + days(1));
    expect(rate.perNodeDay(T0 + days(2))).toBe(0);
  });
});
