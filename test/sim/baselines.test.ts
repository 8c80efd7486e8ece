import { describe, expect, it } from 'vitest';
import {
  atOfferedLoad,
  compareBaselines,
  compareOverDraws,
  drawnFailures,
  type DrawsComparison,
  loadInputs,
  parseCluster,
  parseWorkload,
  simulate,
} from '../../src/sim/index.js';
import { fcfsBackfill } from '../../src/sim/fcfs-backfill.js';
import { wsag } from '../cli/support.js';

/** Baselines: the no-planning batch queue worked by hand, and the comparison through the CLI. */
const cluster = parseCluster({
  nodes: [{ count: 4, prefix: 'n', memoryGB: 16, cpus: 8 }],
  timing: {
    nodeInitSeconds: 0,
    storageInitSecondsPerGB: 0,
    storageRollbackSecondsPerGB: 0,
    storageMountSeconds: 0,
    deinitSeconds: 0,
    slowdownFactor: 1,
  },
});

describe('no planning: FCFS with EASY backfilling', () => {
  it("backfills a short job before the head's reserved start; a failure restarts a job from scratch and it misses its deadline", () => {
    // a: 3 nodes 0-1000. b (head at 10): 4 nodes, must wait for a: reserved start 1000. c: 1 node for 900 s fits now
    // and ends (910) before 1000: backfilled. d: 1 node for 2000 s would delay b, so it waits behind it.
    const workload = parseWorkload({
      jobs: [
        { id: 'a', arrival: 0, kind: 'best-effort', nodes: 3, estimate: 1000 },
        {
          id: 'b',
          arrival: 10,
          kind: 'deadline',
          level: 'Standard',
          nodes: 4,
          estimate: 500,
          deadline: 1600,
          penalty: 40,
        },
        { id: 'c', arrival: 10, kind: 'best-effort', nodes: 1, estimate: 900 },
        {
          id: 'd',
          arrival: 20,
          kind: 'deadline',
          level: 'Standard',
          nodes: 1,
          estimate: 2000,
          deadline: 3600,
          penalty: 7,
        },
      ],
    });
    const plain = fcfsBackfill(workload, cluster);
    // b runs 1000-1500 (met), d 1500-3500 (met); c ran 10-910.
    expect(plain).toMatchObject({
      deadlines: { accepted: 2, met: 2 },
      standardPlus: { accepted: 2, met: 2 },
      penaltiesPaid: 0,
      checkpoints: 0,
      // Up to the last arrival (20 s): a 3 x 20, c 1 x 10 of 4 x 20. Busy a 3000, c 900, b 2000, d 2000 of 4 x 3500.
      usefulToLastArrival: 70 / 80,
      idle: 1 - 7900 / 14_000,
    });
    // n1 fails at 1200 while b runs on it (repaired at 1300): b goes back to the head of the queue; with n1 out it
    // cannot start, so d backfills (1200-3200, met), and b starts over only when d ends: 3200-3700, past 1600.
    const failed = fcfsBackfill({ ...workload, failures: [{ at: 1200, node: 'n1', repairAt: 1300 }] }, cluster);
    expect(failed).toMatchObject({
      deadlines: { accepted: 2, met: 1 },
      standardPlus: { accepted: 2, met: 1 },
      penaltiesPaid: 40,
    });
    // Busy: a 3000, c 900, b's first 200 s on 4 nodes 800, d 2000, b again 2000; n1 out 100 s; 4 x 3700.
    expect(failed.idle).toBeCloseTo(1 - 8800 / 14_800, 9);
  });
});

describe('wsag sim --baselines', () => {
  it('with --peers, our scheduler migrates as the Migration Controller decides; the baselines do not', async () => {
    const result = await wsag([
      'sim',
      '--workload',
      'workloads/migration.json',
      '--peers',
      'workloads/peers-small.json',
      '--baselines',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const c = JSON.parse(result.stdout) as Awaited<ReturnType<typeof compareBaselines>>;
    expect(c.runs[0]?.name).toBe('planning with checkpoints (ours, migrating to peers)');
    expect(c.runs[0]?.migrations).toBe(1);
    expect(c.runs.slice(1).every((r) => r.migrations === 0)).toBe(true);
  });

  it('runs ours and every baseline on the same workload and failures', async () => {
    const result = await wsag(['sim', '--workload', 'workloads/small.json', '--baselines', '--json']);
    expect(result.code).toBe(0);
    const c = JSON.parse(result.stdout) as Awaited<ReturnType<typeof compareBaselines>>;
    expect(c.runs.map((r) => r.name)).toEqual([
      'planning with checkpoints (ours)',
      'no checkpoints (every SLA job Legacy)',
      'fixed-interval checkpoints (one an hour)',
      "Young/Daly's interval at the site's failure rate",
      'thesis optimum for every job (3.16)',
      'fewest checkpoints that keep the promise, alone',
      'no planning (FCFS + EASY backfilling)',
      'duplicate cluster (no failures felt)',
    ]);
    expect(c.runs[7]?.extraNodes).toBe(8);
    // small.json's deadline jobs at Standard and above, as the report counts them.
    expect(c.runs[0]?.standardPlus.accepted).toBeGreaterThan(0);
    expect(c.runs[0]?.standardPlus.met).toBeLessThanOrEqual(c.runs[0]?.standardPlus.accepted as number);
    expect(c.runs[6]?.slaAccepted).toBe(c.runs[6]?.slaRequests); // no admission control
    const text = await wsag(['sim', '--workload', 'workloads/small.json', '--baselines']);
    expect(text.out[0]).toBe('Baselines (docs/scheduler.md): 10 jobs, 1 failure events, 8 nodes');
  });
});

describe('checkpoints by need against the thesis optimum', () => {
  it('takes no more checkpoints than the optimum, keeps every deadline it accepts, accepts no fewer', async () => {
    const { workload, cluster } = loadInputs('workloads/small.json');
    const byNeed = { ...cluster, timing: { ...cluster.timing, checkpointsByNeed: true } };
    const c = await compareBaselines(workload, byNeed);
    const run = (name: string) => c.runs.find((r) => r.name === name) as (typeof c.runs)[number];
    const ours = run('planning with checkpoints (ours)');
    const thesis = run('thesis optimum for every job (3.16)');
    expect(ours.checkpoints).toBeLessThan(thesis.checkpoints);
    expect(ours.slaAccepted).toBeGreaterThanOrEqual(thesis.slaAccepted);
    expect(ours.deadlines.met).toBe(ours.deadlines.accepted);
    expect(run('fewest checkpoints that keep the promise, alone').checkpoints).toBeLessThanOrEqual(ours.checkpoints);
  });
});

describe('the load sweep', () => {
  it('spreads or squeezes arrivals to the offered load, deadlines and windows keeping their distance to the arrival', () => {
    const { workload, cluster } = loadInputs('workloads/small.json');
    const offered = (w: typeof workload) =>
      w.jobs.reduce((s, j) => s + j.nodes * j.runtime, 0) /
      (cluster.nodes.length * Math.max(...w.jobs.map((j) => j.arrival)));
    for (const load of [0.7, 0.9]) {
      const at = atOfferedLoad(workload, cluster.nodes.length, load);
      expect(offered(at)).toBeCloseTo(load, 2);
      at.jobs.forEach((j, i) => {
        const was = workload.jobs[i] as (typeof workload.jobs)[number];
        if (was.deadline !== undefined) expect((j.deadline as number) - j.arrival).toBe(was.deadline - was.arrival);
        if (was.window) expect((j.window?.start as number) - j.arrival).toBe(was.window.start - was.arrival);
      });
      expect(at.failures).toEqual(workload.failures);
    }
  });

  it('wsag sim --baselines --loads runs every approach at each load', async () => {
    const result = await wsag([
      'sim',
      '--workload',
      'workloads/small.json',
      '--baselines',
      '--loads',
      '0.7,0.9',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const sweep = JSON.parse(result.stdout) as { loads: Array<{ load: number; comparison: { runs: unknown[] } }> };
    expect(sweep.loads.map((l) => [l.load, l.comparison.runs.length])).toEqual([
      [0.7, 8],
      [0.9, 8],
    ]);
    expect((await wsag(['sim', '--workload', 'workloads/small.json', '--baselines', '--loads', '0,1'])).err[0]).toMatch(
      /^error: --loads expects offered loads above 0/,
    );
  });
});

describe('several failure draws', () => {
  it("--draws N: the means of N independent draws, the first being --failure-rate's own", async () => {
    const args = ['sim', '--workload', 'workloads/small.json', '--failure-rate', '0.5', '--baselines'];
    const single = JSON.parse((await wsag([...args, '--json'])).stdout) as Awaited<ReturnType<typeof compareBaselines>>;
    const result = await wsag([...args, '--draws', '3', '--json']);
    expect(result.code).toBe(0);
    const c = JSON.parse(result.stdout) as DrawsComparison;
    expect(c.draws).toBe(3);
    expect(c.runs.map((r) => r.name)).toEqual(single.runs.map((r) => r.name));
    // The draws differ: small.json's drawn failures are not the same three times.
    const { workload, cluster } = loadInputs('workloads/small.json');
    const draws = [0, 1, 2].map((k) => drawnFailures(workload, cluster, 0.5, 1, k));
    expect(draws[0]).toEqual(loadInputs('workloads/small.json', undefined, { failureRate: 0.5 }).workload.failures);
    expect(draws[1]).not.toEqual(draws[0]);
    // Each mean lies between the draw's extremes; the count of draws where ours paid no more is at most 3.
    for (const run of c.runs) {
      expect(run.penalties.mean).toBeGreaterThanOrEqual(run.penalties.min);
      expect(run.penalties.mean).toBeLessThanOrEqual(run.penalties.max);
    }
    expect(c.oursAtMostBest).toBeGreaterThanOrEqual(0);
    expect(c.oursAtMostBest).toBeLessThanOrEqual(3);
    const text = await wsag([...args, '--draws', '2']);
    expect(text.out[0]).toBe('Baselines over 2 failure draws (docs/scheduler.md): 10 jobs, 8 nodes; means per draw');
    expect(text.out.at(-1)).toMatch(
      /^ours paid no more penalties than every baseline on the same nodes in [0-2] of 2 draws$/,
    );
  });

  it('averages the draws it is given, and counts where ours paid no more than every baseline on the same nodes', async () => {
    const { workload, cluster } = loadInputs('workloads/small.json');
    const drawn = [0, 1].map((k) => ({ ...workload, failures: drawnFailures(workload, cluster, 0.5, 1, k) }));
    const each = await Promise.all(drawn.map((w) => compareBaselines(w, cluster)));
    const c = await compareOverDraws(drawn, cluster);
    c.runs.forEach((run, i) => {
      const paid = each.map((e) => e.runs[i]?.penaltiesPaid as number);
      expect(run.penalties.mean).toBeCloseTo((paid[0] as number) / 2 + (paid[1] as number) / 2, 10);
      expect(run.penalties.none).toBe(paid.filter((p) => p === 0).length);
      expect(run.slaAccepted).toBe(
        ((each[0]?.runs[i]?.slaAccepted as number) + (each[1]?.runs[i]?.slaAccepted as number)) / 2,
      );
    });
    const atMost = each.filter((e) => {
      const [ours, ...others] = e.runs;
      return others.filter((r) => r.extraNodes === 0).every((r) => (ours?.penaltiesPaid as number) <= r.penaltiesPaid);
    }).length;
    expect(c.oursAtMostBest).toBe(atMost);
  });

  it('names what --draws needs', async () => {
    const base = ['sim', '--workload', 'workloads/small.json'];
    expect((await wsag([...base, '--baselines', '--draws', '3'])).err[0]).toBe(
      'error: --draws draws the failures again for --baselines: give --baselines and --failure-rate R',
    );
    expect((await wsag([...base, '--failure-rate', '0.5', '--draws', '3'])).err[0]).toBe(
      'error: --draws draws the failures again for --baselines: give --baselines and --failure-rate R',
    );
    expect((await wsag([...base, '--failure-rate', '0.5', '--baselines', '--draws', '0'])).err[0]).toBe(
      'error: --draws expects a whole number of failure draws from 1 to 1000, got "0"',
    );
  });
});

describe('a Legacy deadline at risk', () => {
  it('is refused by our planning; the baselines admit it as the thesis did', async () => {
    // One 4-node Legacy deadline job of 4 days on nodes failing once a week: a 90 % risk.
    const workload = parseWorkload({
      name: 'risky',
      start: '2026-01-05T00:00:00Z',
      jobs: [
        {
          id: 'big',
          kind: 'deadline',
          level: 'Legacy',
          arrival: 0,
          nodes: 4,
          estimate: 345_600,
          runtime: 345_600,
          deadline: 700_000,
          penalty: 100,
        },
      ],
    });
    const weekly = { ...cluster, timing: { ...cluster.timing, nodeFailuresPerDay: 1 / 7 } };
    const c = await compareBaselines(workload, weekly);
    expect(c.runs[0]?.slaAccepted).toBe(0);
    expect(c.runs.slice(1, 6).map((r) => r.slaAccepted)).toEqual([1, 1, 1, 1, 1]);
    const report = simulate(workload, weekly, { jobs: true });
    expect(report.rejected[0]?.reason).toContain('the risk is 90 %, above the 50 % it accepts (promiseRiskLimit)');
  });
});

describe('refused requests', () => {
  // Two 4-node reservations over the same window on 4 nodes: the second is refused.
  const workload = parseWorkload({
    jobs: [
      { id: 'a', arrival: 0, kind: 'reservation', level: 'Legacy', nodes: 4, window: { start: 100, end: 1100 } },
      { id: 'b', arrival: 10, kind: 'reservation', level: 'Standard', nodes: 4, window: { start: 100, end: 1100 } },
      { id: 'c', arrival: 20, kind: 'best-effort', nodes: 1, estimate: 100 },
    ],
  });

  it('leave with their users by default; queued, the job runs as best-effort work after the others', () => {
    const left = simulate(workload, cluster, { jobs: true });
    expect(left.acceptance).toMatchObject({ slaRequests: 2, slaAccepted: 1, refusedQueued: 0 });
    expect(left.jobs?.map((j) => [j.id, j.status])).toEqual([
      ['a', 'completed'],
      ['b', 'rejected'],
      ['c', 'completed'],
    ]);

    const queued = simulate(workload, cluster, { jobs: true, refused: 'queue' });
    // Acceptance is what admission decided; the refused request's job is a best-effort job of its own.
    expect(queued.acceptance).toMatchObject({ slaRequests: 2, slaAccepted: 1, refusedQueued: 1 });
    const job = queued.jobs?.find((j) => j.id === 'b/queued');
    expect(job).toMatchObject({ kind: 'best-effort', level: 'Standard', status: 'completed', queuedFor: 'b' });
    expect(job?.start).toBeGreaterThanOrEqual(1100);
    expect(queued.utilisation.usefulNodeSeconds).toBe(left.utilisation.usefulNodeSeconds + 4 * 1000);
    expect(queued.requests.total.requests).toBe(4);
  });

  it('wsag sim --refused queue, and a named refusal of anything else', async () => {
    const text = await wsag(['sim', '--workload', 'workloads/small.json', '--refused', 'queue']);
    expect(text.code).toBe(0);
    const bad = await wsag(['sim', '--workload', 'workloads/small.json', '--refused', 'retry']);
    expect(bad.err[0]).toBe('error: --refused expects leave or queue, got "retry"');
    const pricing = await wsag([
      'sim',
      '--workload',
      'workloads/small.json',
      '--refused',
      'queue',
      '--compare-pricing',
    ]);
    expect(pricing.err[0]).toBe('error: --refused applies to plain runs, --compare-migration and --baselines');
  });
});
