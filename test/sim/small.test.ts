import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadInputs, simulate, type JobOutcome, type SimReport } from '../../src/sim/index.js';

/**
 * workloads/small.json against the figures worked out by hand in workloads/README.md
 * (not copied from a run): which requests are accepted, where the jobs go, what the
 * failure of n1 at 3000 s does, and every figure of the report.
 */
const file = fileURLToPath(new URL('../../workloads/small.json', import.meta.url));

function run(edit?: (w: Workload) => void, chanceShare?: number): SimReport {
  const { workload, cluster } = loadInputs(file);
  edit?.(workload);
  const timing = chanceShare === undefined ? cluster.timing : { ...cluster.timing, chanceShare };
  return simulate(workload, { ...cluster, timing }, { jobs: true });
}

type Workload = ReturnType<typeof loadInputs>['workload'];

/** The workload with a9 changed (and anything else `also` changes). */
function withA9(change: Partial<Workload['jobs'][number]>, also?: (w: Workload) => void) {
  return (w: Workload) => {
    const a9 = w.jobs.find((j) => j.id === 'a9');
    if (!a9) throw new Error('a9 missing');
    Object.assign(a9, change);
    also?.(w);
  };
}

function job(report: SimReport, id: string): JobOutcome {
  const found = report.jobs?.find((j) => j.id === id);
  if (!found) throw new Error(`no outcome for ${id}`);
  return found;
}

describe('workloads/small.json (hand-checked)', () => {
  const report = run();

  it('accepts a1, a2, a3, a5, a8, a9, a10 and refuses a4, a6, a7 with their reasons', () => {
    expect(report.requests.total).toMatchObject({
      requests: 10,
      accepted: 7,
      rejected: 3,
      completed: 6,
      dropped: 1,
      open: 0,
    });
    expect(report.requests.reservation).toMatchObject({ requests: 2, accepted: 1, rejected: 1, completed: 1 });
    expect(report.requests.deadline).toMatchObject({ requests: 6, accepted: 4, rejected: 2, completed: 3, dropped: 1 });
    expect(report.requests['best-effort']).toMatchObject({ requests: 1, accepted: 1, completed: 1 });
    expect(report.requests.background).toMatchObject({ requests: 1, accepted: 1, completed: 1 });
    expect(report.acceptance).toEqual({
      slaRequests: 8,
      slaAccepted: 5,
      slaRejected: 3,
      rate: 0.625,
      bestEffortRejected: 0,
      refusedQueued: 0,
    });
    expect(report.rejected).toEqual([
      {
        id: 'a4',
        kind: 'reservation',
        level: 'Legacy',
        arrival: 180,
        reason:
          '4 nodes are not free from 2026-01-05T00:30:00Z to 2026-01-05T01:30:00Z: 1 of 7 suitable nodes are free throughout that window with its preparation and release (2026-01-05T00:29:00Z to 2026-01-05T01:30:00Z)',
      },
      {
        id: 'a6',
        kind: 'deadline',
        level: 'Legacy',
        arrival: 300,
        reason:
          'deadline 2026-01-05T00:25:00Z cannot be met: earliest completion without checkpoints is 2026-01-05T00:26:00Z on 2 nodes',
      },
      {
        id: 'a7',
        kind: 'deadline',
        level: 'Full',
        arrival: 360,
        reason:
          'Full service needs 2 standby nodes reserved at a peer provider, but no peer standby capacity is configured',
      },
    ]);
  });

  it('runs each job when and as long as the hand-worked plan says', () => {
    const timeline = Object.fromEntries(
      (report.jobs ?? []).filter((j) => j.status !== 'rejected').map((j) => [j.id, [j.status, j.start, j.end]]),
    );
    expect(timeline).toEqual({
      a1: ['completed', 0, 4360], // restarted on its spare at 3000 with 2 intervals left
      a2: ['completed', 60, 1520], // 3 of 4 intervals: done early
      a3: ['completed', 6000, 8460], // moved by a5, a8, a9, the failure and the repair
      a5: ['completed', 2400, 9000],
      a8: ['completed', 1520, 2080], // moved up into the gap a2 left
      a9: ['dropped', undefined, 7500], // in P from the failure until its deadline
      a10: ['completed', 540, 2900], // on the buffer node, done early
    });
  });

  it('meets 3 of 4 deadlines, honours the reservation, and a9 is the one violation: Legacy pays', () => {
    expect(report.deadlines).toEqual({ accepted: 4, met: 3, missed: 1, open: 0 });
    expect(job(report, 'a1').met).toBe(true);
    expect(job(report, 'a2').met).toBe(true);
    expect(job(report, 'a8').met).toBe(true);
    expect(job(report, 'a9').met).toBe(false);
    expect(report.reservations).toEqual({ accepted: 1, honoured: 1, notHonoured: 0, open: 0 });
    expect(report.violations).toEqual({
      total: 1,
      deadlineMissed: 0,
      reservationNotHonoured: 0,
      leftInP: 1,
      stillInP: 0,
      byLevel: { Legacy: 1 },
    });
    expect(report.violated).toEqual([
      {
        id: 'a9',
        kind: 'deadline',
        level: 'Legacy',
        type: 'left-in-P',
        detail:
          'node n1 failed at 2026-01-05T00:50:00Z: cannot restart in time: deadline 2026-01-05T02:05:00Z cannot be met: ' +
          'earliest completion without checkpoints is 2026-01-05T02:11:00Z on 3 nodes',
        penalty: 60,
        paid: 60,
        liability: expect.stringMatching(
          /^liable: Legacy holds its promise by the advance reservation alone and pays when it is broken/,
        ),
      },
    ]);
    expect(report.penalties).toEqual({ owed: 60, paid: 60, excused: 0, byLevel: { Legacy: { owed: 60, paid: 60 } } });
  });

  it('counts checkpoints, the restart on a spare node, pieces and failure hits', () => {
    expect(Object.fromEntries((report.jobs ?? []).map((j) => [j.id, j.checkpoints]))).toEqual({
      a1: 5,
      a2: 2,
      a3: 0,
      a4: 0,
      a5: 7,
      a6: 0,
      a7: 0,
      a8: 1,
      a9: 0,
      a10: 3,
    });
    expect(report.checkpoints).toEqual({ taken: 18, jobs: 5 });
    expect(report.restarts).toEqual({ count: 1, onSpare: 1, jobs: 1 });
    expect(report.pieces).toEqual({ jobs: 1, partialExecution: 0 });
    expect(job(report, 'a1')).toMatchObject({ pieces: 2, restarts: 1, hits: 1 });
    expect(report.suspensions).toEqual({ count: 0, jobs: 0 });
    expect(report.failures).toEqual({ events: 1, repairs: 1, renewals: 0, jobsHit: 3, runningJobsHit: 1 });
    expect(['a1', 'a3', 'a9'].map((id) => job(report, id).hits)).toEqual([1, 1, 1]);
  });

  it('utilisation: node-seconds actually used over 8 nodes x 9000 s', () => {
    expect(report.span).toEqual({ endSeconds: 9000, stoppedBy: 'end of workload' });
    expect(report.utilisation).toEqual({
      capacityNodeSeconds: 72000,
      busyNodeSeconds: 53060, // a1 2x3000+2x1360, a2 3x1460, a3 4x2460, a5 4x6660 (prepared from 2340), a8 2x560, a10 1x2360
      spareNodeSeconds: 3000, // n3 beside a1 until the failure
      usefulNodeSeconds: 49600, // nodes x actual runtime of the completed jobs
      slaUsefulNodeSeconds: 38000, // of it a1, a2, a5 and a8's; a3 (best-effort) and a10 (background) the other 11600
      idleNodeSeconds: 12940, // 72000 - 53060 busy - 3000 spare - 3000 failed
      failedNodeSeconds: 3000, // n1 from 3000 to 6000
      busy: 0.736944,
      spare: 0.041667,
      useful: 0.688889,
      failed: 0.041667,
      slaUseful: 0.527778,
      bestEffortUseful: 0.161111,
      idle: 0.179722,
      tailSeconds: 8460, // the last arrival (a10) at 540 s, the last completion at 9000 s
      // Up to the last arrival at 540 s: a2's last 1200 s before its end at 1520 began at 320, 3 x 220 of 8 x 540.
      usefulToLastArrival: 0.152778,
      // 100 s a checkpoint (4 s/GB x 25 GB) x nodes: a1 5 x 2, a2 2 x 3, a5 7 x 4, a8 1 x 2, a10 3 x 1.
      checkpointNodeSeconds: 4900,
    });
    expect(report.value).toEqual({ requested: 53, accepted: 38, completed: 34 });
    expect(report.checks).toEqual({ retiredWithoutCompletion: 0, completionClamped: 0, lateWithoutProblem: 0 });
  });

  it('a9 as a Standard job with deadline 8300 restarts covering no further outage, and keeps its deadline', () => {
    const variant = run(withA9({ level: 'Standard', deadline: 8300 }));
    // Covering its one outage again it would end at 8770 s (02:26:10), past the deadline: it is placed without.
    expect(job(variant, 'a9')).toMatchObject({ status: 'completed', end: 8160, met: true, hits: 1, paid: 0 });
    expect(variant.violated).toEqual([]);
  });

  it('a9 as a Standard job with deadline 8300 and n1 down longer is dropped the same way, and its penalty is excused', () => {
    // n1 is back 300 s later: a9 waits for it, and even covering no further outage ends past its deadline.
    const variant = run(
      withA9({ level: 'Standard', deadline: 8300 }, (w) => {
        (w.failures[0] as { repairAt: number }).repairAt = 6300;
      }),
    );
    expect(job(variant, 'a9')).toMatchObject({
      status: 'dropped',
      end: 8300,
      violation: 'left-in-P',
      hits: 1,
      suspensions: 0,
      penalty: 60,
      paid: 0,
    });
    // The domain's liability rule (src/domain/liability.ts): an outage hit it, no suspension, checkpoints as agreed.
    expect(variant.violated[0]?.liability).toMatch(
      /^not liable: a resource outage hit the job and Standard's mechanisms were applied/,
    );
    expect(variant.violated[0]?.detail).toBe(
      'node n1 failed at 2026-01-05T00:50:00Z: cannot restart in time: deadline 2026-01-05T02:18:20Z cannot be met: ' +
        'earliest worst-case completion with 3 checkpoints and 1 covered outage is 2026-01-05T02:31:10Z on 3 nodes; ' +
        'no gaps for partial execution either; nor covering fewer outages: earliest worst-case completion with ' +
        '3 checkpoints and 0 covered outages is 2026-01-05T02:21:00Z on 3 nodes',
    );
    expect(variant.penalties).toMatchObject({ owed: 60, paid: 0, excused: 60 });
  });

  describe('with runs on the chance a job needs less than its estimate (chanceShare 0.5)', () => {
    const needing = (seconds: number) => run(withA9({ runtime: seconds }), 0.5);

    it('a9 needing half its estimate runs from the repair at 6000 s on n1..n3 and keeps its deadline', () => {
      const report = needing(900);
      // 1500 s to its deadline: not its 1860 s booking, but more than half of it. It ends at 6000 + 60 + 900.
      expect(job(report, 'a9')).toMatchObject({ status: 'completed', start: 6000, end: 6960, met: true, paid: 0 });
      expect(job(report, 'a3')).toMatchObject({ start: 6960, end: 9420 });
      expect(report.violated).toEqual([]);
    });

    it('a9 needing its whole estimate runs from the repair, is stopped at its deadline and pays', () => {
      const report = needing(1800);
      expect(job(report, 'a9')).toMatchObject({
        status: 'dropped',
        start: 6000,
        end: 7500,
        busyNodeSeconds: 3 * 1500,
        violation: 'left-in-P',
        paid: 60,
      });
      expect(job(report, 'a9').reason).toMatch(/; runs from 2026-01-05T01:40:00Z on the chance it needs less$/);
      // a3 waits for the nodes a9 held: 540 s later than in the hand-worked plan.
      expect(job(report, 'a3')).toMatchObject({ start: 7500, end: 9960 });
    });
  });

  it('--until stops the run with the jobs still planned reported open', () => {
    const { workload, cluster } = loadInputs(file);
    const early = simulate(workload, cluster, { untilSeconds: 3500, jobs: true });
    expect(early.span).toEqual({ endSeconds: 3500, stoppedBy: 'until' });
    expect(
      Object.fromEntries((early.jobs ?? []).filter((j) => j.status !== 'rejected').map((j) => [j.id, j.status])),
    ).toEqual({
      a1: 'running',
      a2: 'completed',
      a3: 'waiting',
      a5: 'running',
      a8: 'completed',
      a9: 'in-P',
      a10: 'completed',
    });
    expect(early.deadlines).toEqual({ accepted: 4, met: 2, missed: 0, open: 2 });
    expect(early.violations).toMatchObject({ total: 0, stillInP: 1 });
    // a1 by 3500: 4 checkpoints before the failure, none yet after its restart at 3000 (60 + 600 > 500)
    expect(job(early, 'a1').checkpoints).toBe(4);
  });
});
