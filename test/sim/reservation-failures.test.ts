import { describe, expect, it } from 'vitest';
import { parseCluster, parseWorkload, simulate } from '../../src/sim/index.js';
import { noSetUp } from './support.js';

/**
 * A reservation is honoured while its holder holds nodes throughout its window (docs/sla-outcomes.md). Four nodes,
 * 60 s to prepare one; the window is [3600, 7200) and node n1, the first the plan gives, fails at 4200.
 */
const timing = { ...noSetUp, nodeInitSeconds: 60 };
const window = { start: 3600, end: 7200 };

function run(nodes: number, failing: string[], groups = false) {
  const cluster = parseCluster({
    nodes: [
      { count: 2, prefix: 'n', first: 1, memoryGB: 32, cpus: 8, ...(groups ? { failureGroup: 'rack-1' } : {}) },
      { count: 2, prefix: 'n', first: 3, memoryGB: 32, cpus: 8, ...(groups ? { failureGroup: 'rack-2' } : {}) },
    ],
    timing: { ...timing, ...(groups ? { reservationSpareNodes: 1 } : {}) },
  });
  const workload = parseWorkload({
    jobs: [{ id: 'R', arrival: 0, kind: 'reservation', level: 'Legacy', nodes, window, penalty: 10 }],
    failures: failing.map((node) => ({ at: 4200, node, repairAt: 9000 })),
  });
  return simulate(workload, cluster, { jobs: true });
}

describe('a reservation whose node fails in its window', () => {
  it('holding two nodes: the survivor goes on while a free node is prepared to join it, and it is honoured', () => {
    const report = run(2, ['n1']);
    expect(report.jobs?.[0]).toMatchObject({ id: 'R', status: 'completed', honoured: true, pieces: 2, hits: 1 });
    expect(report.violated).toEqual([]);
  });

  it('holding one node: nothing is held while the free node taking its place is prepared, and it is broken', () => {
    const report = run(1, ['n1']);
    expect(report.jobs?.[0]).toMatchObject({ id: 'R', honoured: false, violation: 'reservation-not-honoured' });
    expect(report.violated[0]?.detail).toBe('no nodes held from 4200 s to 4260 s of the window 3600 s to 7200 s');
  });

  it('with a spare node: the spare stands in another failure group, so a whole group failing leaves it to take over', () => {
    const report = run(1, ['n1', 'n2'], true);
    expect(report.jobs?.[0]).toMatchObject({ id: 'R', status: 'completed', honoured: true, hits: 1 });
    expect(report.violated).toEqual([]);
  });
});
