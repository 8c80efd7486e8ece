import { describe, expect, it } from 'vitest';
import { FailureRateEstimate, failureGroupOf } from '../../src/scheduler/failure-rate.js';
import type { ClusterNode } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, T0 } from './support.js';

/** `count` nodes of one failure group each, by group name. */
function nodesIn(groups: Record<string, number>): ClusterNode[] {
  return Object.entries(groups).flatMap(([group, count]) =>
    Array.from({ length: count }, (_, i) => ({ id: `${group}${i}`, memoryGB: 16, cpus: 8, failureGroup: group })),
  );
}

const days = (d: number) => d * 86_400_000;

describe('the failure rate the planner learns', () => {
  it('starts at the configured rate and moves to what the nodes do as node-days pass', () => {
    // Prior 0.02 a node and day, worth 1000 node-days; 100 nodes.
    const rate = new FailureRateEstimate(0.02, 1000, nodesIn({ all: 100 }));
    expect(rate.perNodeDay(T0)).toBe(0.02);
    rate.begin(T0);
    for (let i = 0; i < 30; i++) rate.failed(T0 + days(i / 3), i);
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
    const rate = new FailureRateEstimate(0, Number.POSITIVE_INFINITY, nodesIn({ a: 5, b: 5 }));
    rate.begin(T0);
    rate.failed(T0 + days(1), 0);
    expect(rate.perNodeDay(T0 + days(2))).toBe(0);
    expect(rate.groups(T0 + days(2)).map((g) => g.perNodeDay)).toEqual([0, 0]);
  });
});

describe('failure rates per node group', () => {
  it('learns each group from its own nodes, each with its share of the prior', () => {
    // Prior 0.02 worth 1000 node-days of the 100 nodes: group a (20 nodes) gets 200 of them, b 800.
    const rate = new FailureRateEstimate(0.02, 1000, nodesIn({ a: 20, b: 80 }));
    rate.begin(T0);
    // An hour apart: twelve failure events of one node each.
    for (let i = 0; i < 12; i++) rate.failed(T0 + days(1) + hours(i), i % 20);
    const [a, b] = rate.groups(T0 + days(10));
    // a: (0.02 x 200 + 12) / (200 + 200) = 0.04; b: (0.02 x 800 + 0) / (800 + 800) = 0.01.
    expect(a).toMatchObject({ group: 'a', nodes: 20, failures: 12, nodeDays: 200 });
    expect(a?.perNodeDay).toBeCloseTo(0.04, 10);
    expect(b).toMatchObject({ group: 'b', nodes: 80, failures: 0, nodeDays: 800 });
    expect(b?.perNodeDay).toBeCloseTo(0.01, 10);
    // The cluster-wide estimate is their node-weighted mean: (20 + 12) / 2000.
    expect(rate.perNodeDay(T0 + days(10))).toBeCloseTo(0.016, 10);
    expect(rate.perNodeDayOn(rate.countByGroup([...Array(100).keys()]), 4, T0 + days(10))).toBeCloseTo(0.016, 10);
    // Nodes 0-9 of a and 20-29 of b: half of each rate.
    const mixed = rate.countByGroup([...Array(10).keys(), ...Array.from({ length: 10 }, (_, i) => 20 + i)]);
    expect(rate.perNodeDayOn(mixed, 4, T0 + days(10))).toBeCloseTo(0.025, 10);
  });

  it("takes a node's group from failureGroup, else its island, else the whole cluster", () => {
    const node = { id: 'n1', memoryGB: 1, cpus: 1 };
    expect(failureGroupOf({ ...node, island: 'a', failureGroup: 'rack-3' })).toBe('rack-3');
    expect(failureGroupOf({ ...node, island: 'a' })).toBe('a');
    expect(failureGroupOf(node)).toBe('cluster');
  });

  it('makes the planner checkpoint jobs by the rate of the nodes they may run on', () => {
    // Nodes n01-n08 fail often; n09-n16 never. Prior worth 16 node-days of the cluster.
    const pm = new PlanningManager(
      cluster(16, {
        timing: { nodeFailuresPriorNodeDays: 16 },
        node: (i) => ({ failureGroup: i < 8 ? 'flaky' : 'steady' }),
      }),
    );
    const name = (i: number) => `n${String(i + 1).padStart(2, '0')}`;
    for (let i = 0; i < 8; i++) {
      pm.nodeFailed(name(i), T0 + hours(1) + i * 120_000);
      pm.nodeRepaired(name(i), T0 + hours(2));
    }
    const [flaky, steady] = pm.failureRate.groups(T0 + hours(2));
    expect(flaky?.perNodeDay).toBeGreaterThan(0.5);
    expect(steady?.perNodeDay).toBeLessThan(0.02);
    const on = (id: string, hosts: number[]) => {
      const spec = job({ id, kind: 'Deadline', nodes: 4, runtimeSeconds: 3600 });
      const decision = pm.admit({ ...spec, requirements: { candidateHosts: hosts.map(name) } }, T0 + hours(2));
      pm.release(id);
      return decision.accepted ? decision.job.checkpoints.count : -1;
    };
    const flakyOnly = on('flaky', [0, 1, 2, 3, 4, 5, 6, 7]);
    const either = on('either', [4, 5, 6, 7, 8, 9, 10, 11]);
    const steadyOnly = on('steady', [8, 9, 10, 11, 12, 13, 14, 15]);
    expect(steadyOnly).toBe(0);
    expect(either).toBeGreaterThan(steadyOnly);
    expect(flakyOnly).toBeGreaterThan(either);
  });
});

describe('failures that come together', () => {
  it('counts failures of a group within a minute of the first as one event', () => {
    const rate = new FailureRateEstimate(0, 1, nodesIn({ g: 32, h: 32 }));
    rate.begin(T0);
    // Group g fails whole (its nodes reported a second apart); h loses four nodes, two minutes apart.
    for (let i = 0; i < 32; i++) rate.failed(T0 + days(5) + i * 1000, i);
    for (let i = 0; i < 4; i++) rate.failed(T0 + days(6) + i * 120_000, 32 + i);
    const [g, h] = rate.groups(T0 + days(10));
    expect(g).toMatchObject({ failures: 32, events: 1, meanEventSize: 32 });
    expect(h).toMatchObject({ failures: 4, events: 4, meanEventSize: 1 });
  });

  it('makes a job see an event that takes its group whole once, not once per node', () => {
    // No prior to speak of: what hits the job is what the nodes did.
    const rate = new FailureRateEstimate(0, 1e-9, nodesIn({ g: 32 }));
    rate.begin(T0);
    for (let i = 0; i < 32; i++) rate.failed(T0 + days(5), i);
    const all = rate.countByGroup([...Array(32).keys()]);
    const perNode = 32 / (32 * 10);
    expect(rate.perNodeDay(T0 + days(10))).toBeCloseTo(perNode, 6);
    // One node: hit by each event, as the per-node rate says.
    expect(rate.perNodeDayOn(all, 1, T0 + days(10))).toBeCloseTo(perNode, 6);
    // Eight nodes: one event in ten days hits them (0.1 a day), not eight times the per-node rate.
    expect(8 * rate.perNodeDayOn(all, 8, T0 + days(10))).toBeCloseTo(0.1, 6);
  });

  it('counts nodes that fail alone as the per-node rate does, whatever the job', () => {
    const rate = new FailureRateEstimate(0.02, 100, nodesIn({ g: 32 }));
    rate.begin(T0);
    for (let i = 0; i < 32; i++) rate.failed(T0 + days(5) + hours(i), i);
    const all = rate.countByGroup([...Array(32).keys()]);
    for (const nodes of [1, 8, 32])
      expect(rate.perNodeDayOn(all, nodes, T0 + days(10))).toBeCloseTo(rate.perNodeDay(T0 + days(10)), 10);
  });

  it('checkpoints a job less after a group failure than after as many failures one by one', () => {
    const countAfter = (spacingMs: number) => {
      const pm = new PlanningManager(cluster(16, { timing: { nodeFailuresPriorNodeDays: 16 } }));
      for (let i = 0; i < 16; i++) {
        const node = `n${String(i + 1).padStart(2, '0')}`;
        pm.nodeFailed(node, T0 + hours(1) + i * spacingMs);
        pm.nodeRepaired(node, T0 + hours(3));
      }
      const decision = pm.admit(job({ id: 'a', kind: 'Deadline', nodes: 16, runtimeSeconds: 3600 }), T0 + hours(3));
      return decision.accepted ? decision.job.checkpoints.count : -1;
    };
    const together = countAfter(1000);
    const apart = countAfter(300_000);
    expect(together).toBeGreaterThanOrEqual(0);
    expect(apart).toBeGreaterThan(together);
  });
});

describe('a node down longer than the problem horizon', () => {
  it('counts once: renewing its failure block is not another failure', () => {
    const pm = new PlanningManager(cluster(4, { timing: { problemHorizonSeconds: 3600 } }));
    pm.nodeFailed('n01', T0 + hours(1));
    // Its block is renewed at 2 h, 3 h and 4 h; it is repaired at 4.5 h.
    for (let h = 2; h <= 4; h++) pm.advance(T0 + hours(h));
    expect(pm.isFailed('n01')).toBe(true);
    pm.nodeRepaired('n01', T0 + hours(4.5));
    expect(pm.failureRate.failuresSeen()).toBe(1);
    expect(pm.failureRate.groups(T0 + hours(5))[0]).toMatchObject({ failures: 1, events: 1 });
  });
});
