import { describe, expect, it } from 'vitest';
import { parseCluster, parseWorkload, simulate } from '../../src/sim/index.js';
import { noSetUp } from './support.js';

/**
 * Checkpointed best-effort work in a gap too short for its run (docs/scheduler.md, "Best-effort work ahead of its
 * turn"): four nodes, all four reserved from 2 h to 3 h; a two-node job of 4 h arrives at once.
 */
function run(level: 'Standard' | 'Legacy', startsAhead = true, lastArrival?: number) {
  const cluster = parseCluster({
    nodes: [{ count: 4, prefix: 'n', first: 1, memoryGB: 32, cpus: 8 }],
    // A failure rate at which checkpoints pay for a 4 h job on two nodes.
    timing: { ...noSetUp, nodeFailuresPerDay: 1, bestEffortStartsAhead: startsAhead },
  });
  const workload = parseWorkload({
    jobs: [
      { id: 'R', arrival: 0, kind: 'reservation', level: 'Legacy', nodes: 4, window: { start: 7200, end: 10800 } },
      { id: 'B', arrival: 0, kind: 'best-effort', level, nodes: 2, estimate: 14400, runtime: 14400 },
      ...(lastArrival !== undefined
        ? [{ id: 'X', arrival: lastArrival, kind: 'best-effort', level: 'Legacy', nodes: 1, estimate: 60, runtime: 60 }]
        : []),
    ],
  });
  const report = simulate(workload, cluster, { jobs: true });
  return { report, b: report.jobs?.find((j) => j.id === 'B') };
}

describe('best-effort work in a gap too short for its run', () => {
  it('computes to its checkpoints before the reservation, the rest after it, and completes sooner', () => {
    const { report, b } = run('Standard');
    const { b: waited } = run('Standard', false);
    expect(b).toMatchObject({ status: 'completed', pieces: 2, start: 0 });
    expect(waited).toMatchObject({ status: 'completed', pieces: 1 });
    expect(waited?.start).toBeGreaterThanOrEqual(10800);
    // Most of the two hours before the reservation were secured: it completes well over an hour sooner.
    expect(b?.end as number).toBeLessThan((waited?.end as number) - 3600);
    expect(report.reservations).toMatchObject({ accepted: 1, honoured: 1 });
  });

  it('a job without checkpoints waits for a gap its whole run fits', () => {
    const { b } = run('Legacy');
    expect(b).toMatchObject({ status: 'completed', pieces: 1 });
    expect(b?.start).toBeGreaterThanOrEqual(10800);
  });

  it('counts the work of each piece where it ran in the useful work to the last arrival', () => {
    // The last arrival comes before the reservation: only the first piece computed before it, its whole intervals
    // (about 6,000 s) on two of the 4 x 7,000 node-seconds. Counting the 4 h as if run just before the job
    // completed gave less than half of that.
    const { report, b } = run('Standard', true, 7000);
    expect(b).toMatchObject({ status: 'completed', pieces: 2 });
    expect(report.utilisation.usefulToLastArrival).toBeGreaterThan(0.4);
    expect(report.utilisation.usefulToLastArrival).toBeLessThanOrEqual(0.5);
  });
});
