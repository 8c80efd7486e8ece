import { describe, expect, it } from 'vitest';
import { parseCluster, parseWorkload, simulate } from '../../src/sim/index.js';

/**
 * A node that is never repaired: the scheduler blocks it one problem horizon at a time
 * (here 1000 s) and renews the block when it ends. Worked out by hand:
 * - x (best-effort, both nodes, 2060 s) starts at 0; y (Legacy, 1 node, 560 s) is planned
 *   after it, [2060, 2620) on n1.
 * - n1 fails at 100: x is cut and goes back into the plan after the block, [2620, 4680);
 *   y lies beyond the horizon (1100) and is only flagged.
 * - 1100, the block is renewed: y (now within the horizon) moves to n2, [1100, 1660), and
 *   completes; x moves to [2100, 4160), and at each renewal after that again by 1000 s:
 *   it needs n1 and never runs.
 * The workload's events are over at 100; the drain limit is the last deadline (10000) +
 * both jobs run twice (2 x 2060 + 2 x 560) + one horizon = 16240 s: the run stops there
 * with x open, after 16 renewals (1100, 2100, ..., 16100).
 */
const cluster = parseCluster({
  nodes: [{ count: 2, prefix: 'n', memoryGB: 32, cpus: 8 }],
  timing: {
    nodeInitSeconds: 60,
    storageInitSecondsPerGB: 0,
    storageRollbackSecondsPerGB: 0,
    storageMountSeconds: 0,
    deinitSeconds: 0,
    slowdownFactor: 1,
    problemHorizonSeconds: 1000,
  },
});
const workload = parseWorkload({
  jobs: [
    { id: 'x', arrival: 0, kind: 'best-effort', nodes: 2, estimate: 2000 },
    { id: 'y', arrival: 10, kind: 'deadline', level: 'Legacy', nodes: 1, estimate: 500, deadline: 10000 },
  ],
  failures: [{ at: 100, node: 'n1' }],
});

describe('a node that is never repaired', () => {
  it('renews its failure block each horizon, and the run stops at the drain limit with the job that needs it open', () => {
    const report = simulate(workload, cluster, { jobs: true });
    expect(report.span).toEqual({ endSeconds: 16240, stoppedBy: 'drain limit' });
    expect(report.failures).toEqual({ events: 1, repairs: 0, renewals: 16, jobsHit: 2, runningJobsHit: 1 });
    expect(report.jobs?.map((j) => [j.id, j.status, j.start, j.end])).toEqual([
      ['x', 'waiting', 0, undefined],
      ['y', 'completed', 1100, 1660],
    ]);
    expect(report.deadlines).toEqual({ accepted: 1, met: 1, missed: 0, open: 0 });
    expect(report.utilisation).toMatchObject({ busyNodeSeconds: 2 * 100 + 560, failedNodeSeconds: 16240 - 100 });
  });
});
