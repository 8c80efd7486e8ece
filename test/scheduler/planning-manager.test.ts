import { describe, expect, it } from 'vitest';
import { expectedCompletion } from '../../src/scheduler/job-timing.js';
import type { PlannedJob, Segment } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, minutes, paper, T0 } from './support.js';

/**
 * Hand-worked scenarios from Hovestadt 2006 chapter 3. The site is chosen so the figures can be
 * checked on paper: 30 s to initialise or restart a job, nothing to deinitialise, no
 * slowdown, and a checkpoint of a 16 GB node takes 120 s. A 3600 s job covering two
 * outages then gets the seed's 7 checkpoints (3.16): compute intervals of 450 s, the
 * i-th checkpoint written at 30 + 570 i seconds.
 */
const seconds = (s: number) => T0 + s * 1000;

function deadlineJob(id: string, overrides: Partial<Parameters<typeof job>[0]> = {}) {
  return job({
    id,
    kind: 'Deadline',
    level: 'Standard',
    nodes: 4,
    runtimeSeconds: 3600,
    coveredOutages: 2,
    deadline: T0 + hours(2),
    ...overrides,
  });
}

function admitted(pm: PlanningManager, spec: ReturnType<typeof job>, now = T0): PlannedJob {
  const decision = pm.admit(spec, now);
  if (!decision.accepted) throw new Error(decision.reason);
  return decision.job;
}

describe('checkpoint planning in admission', () => {
  it('gives the worked example its 7 checkpoints and books t_minslot', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    const a = admitted(pm, deadlineJob('a'));
    expect(a.checkpoints).toMatchObject({
      count: 7,
      intervalSeconds: 450,
      checkpointSeconds: 120,
      jobMaxSeconds: 5340,
    });
    // t_minslot = 30 + 3600 + 7 x 120 = 4470 s: Standard books the run without outages ...
    expect(a.segments).toEqual([
      { start: T0, end: seconds(4470), nodes: ['n01', 'n02', 'n03', 'n04'], spare: [], restart: false, intervals: 8 },
    ]);
    // ... and the deadline had room for the worst case: 30 + 5340 + 2 x (30 + 120) = 5670 s.
    expect(a.checkpoints.worstCaseSeconds).toBe(5670);
  });

  it('by need (the default site): the fewest checkpoints that keep the deadline, a shorter booking', () => {
    // Worst case 3930 + 120 n + 7200 / (n + 1) s: 2 checkpoints (6570 s) keep a deadline 7200 s away.
    const pm = new PlanningManager(cluster(8, { timing: { ...paper, checkpointsByNeed: true } }));
    const a = admitted(pm, deadlineJob('a'));
    expect(a.checkpoints).toMatchObject({ count: 2, intervalSeconds: 1200, worstCaseSeconds: 6570 });
    expect(a.segments[0]).toMatchObject({ start: T0, end: seconds(30 + 3600 + 2 * 120) });
  });

  it('by need, when its nodes are busy first: the latest start the optimum allows, the fewest checkpoints there', () => {
    const pm = new PlanningManager(cluster(8, { timing: { ...paper, checkpointsByNeed: true } }));
    admitted(
      pm,
      job({ id: 'r', kind: 'Reservation', nodes: 8, window: { start: seconds(60), end: minutes(30) + T0 } }),
    );
    // From T0, 1 checkpoint would keep a deadline 9000 s away (7650 s), but only by starting
    // before the reservation ends; the optimum (7) could start by 3330 s; at 1800 s, 7200 s
    // remain, and 2 checkpoints keep them.
    const a = admitted(pm, deadlineJob('a', { deadline: seconds(9000) }));
    expect(a.segments[0]?.start).toBe(seconds(1800));
    expect(a.checkpoints.count).toBe(2);
    expect((a.segments[0]?.start ?? 0) + a.checkpoints.worstCaseSeconds * 1000).toBeLessThanOrEqual(seconds(9000));
  });

  it('refuses a deadline that leaves no room for the covered outages, saying when the job could complete', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    const decision = pm.admit(deadlineJob('a', { deadline: seconds(5000) }), T0);
    expect(decision.accepted).toBe(false);
    if (decision.accepted) return;
    expect(decision.reason).toMatch(
      /^deadline 2026-11-23T01:23:20Z cannot be met: even the best checkpoint plan \(7 checkpoints\) needs 5670 s with 2 covered outage\(s\)/,
    );
  });

  it('says when the earliest completion is, given what is already planned', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(
      pm,
      job({
        id: 'r',
        kind: 'Reservation',
        level: 'Legacy',
        nodes: 6,
        runtimeSeconds: 3 * 3600,
        window: { start: T0, end: T0 + hours(3) },
      }),
      T0 - minutes(1),
    );
    const decision = pm.admit(deadlineJob('a', { deadline: T0 + hours(4) }), T0);
    expect(decision).toEqual({
      accepted: false,
      reason:
        'deadline 2026-11-23T04:00:00Z cannot be met: earliest worst-case completion with 7 checkpoints and 2 covered outages is 2026-11-23T04:34:30Z on 4 nodes',
    });
  });

  it('accepts a requested checkpoint frequency only within the bounds', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    expect(admitted(pm, deadlineJob('a', { checkpointsPerHour: 5 })).checkpoints.count).toBe(5);
    const decision = pm.admit(deadlineJob('b', { checkpointsPerHour: 30 }), T0);
    expect(decision.accepted).toBe(false);
    if (!decision.accepted)
      expect(decision.reason).toMatch(/checkpoint frequency 30 per hour \(30 checkpoints\) is outside the bounds/);
  });
});

describe('a node failure (figure 3.4)', () => {
  it('restarts the job from its last checkpoint on a spare node and keeps the deadline', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(pm, deadlineJob('a'));
    const report = pm.nodeFailed('n01', seconds(1800));
    expect(report.problematic).toEqual([]);
    expect(report.solved).toEqual(['a']);
    const a = pm.job('a') as PlannedJob;
    // Checkpoints 1-3 were written by 1740 s; the 4th was due at 2310 s. Five intervals remain:
    // restart 30 + 5 x 450 + 4 x 120 = 2760 s, from the failure on three old nodes and a free one.
    expect(a.segments).toEqual([
      { start: T0, end: seconds(1800), nodes: ['n01', 'n02', 'n03', 'n04'], spare: [], restart: false, intervals: 3 },
      {
        start: seconds(1800),
        end: seconds(4560),
        nodes: expect.arrayContaining(['n02', 'n03', 'n04']),
        spare: [],
        restart: true,
        intervals: 5,
      },
    ]);
    expect((a.segments[1] as Segment).nodes).not.toContain('n01');
    expect(expectedCompletion(a, pm.shape(a))).toBeLessThanOrEqual(a.spec.deadline as number);
    expect(a.outagesLeft).toBe(1);
  });

  it('Enhanced: restarts at once on the spare node it kept, inside the time it booked', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    const a = admitted(pm, deadlineJob('a', { level: 'Enhanced', coveredOutages: 1, deadline: T0 + hours(3) }));
    expect((a.segments[0] as Segment).spare).toHaveLength(1);
    const booked = (a.segments[0] as Segment).end;
    const spare = (a.segments[0] as Segment).spare[0] as string;
    const report = pm.nodeFailed('n02', seconds(1800));
    expect(report.problematic).toEqual([]);
    const after = pm.job('a') as PlannedJob;
    expect(after.segments[1]).toMatchObject({ start: seconds(1800), end: booked, spare: [], restart: true });
    expect((after.segments[1] as Segment).nodes).toEqual(['n01', spare, 'n03', 'n04']);
    expect(after.outagesLeft).toBe(0);
  });

  it('suspends a running best-effort job when only that saves the deadline (3.5.2.1)', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(pm, deadlineJob('a'));
    admitted(pm, job({ id: 'be', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 10 * 3600 }));
    expect((pm.job('be') as PlannedJob).segments[0]?.start).toBe(T0);
    const report = pm.nodeFailed('n01', seconds(1800));
    expect(report.suspended).toEqual(['be']);
    expect(report.problematic).toEqual([]);
    const a = pm.job('a') as PlannedJob;
    expect(a.segments[1]).toMatchObject({ start: seconds(1800), end: seconds(4560), restart: true, intervals: 5 });
    // The best-effort job lost its work (no checkpoints at Legacy) and runs again once nodes are free.
    const be = pm.job('be') as PlannedJob;
    expect(be.problem).toBeUndefined();
    expect(be.segments[0]).toMatchObject({ start: T0, end: seconds(1800), intervals: 0 });
    expect(be.segments[1]?.start).toBe(seconds(4560));
  });

  it('moves a suspended job up to resume in the gap an early finish opens, keeping the piece it ran', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(pm, deadlineJob('a'));
    admitted(pm, job({ id: 'be', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 10 * 3600 }));
    pm.nodeFailed('n01', seconds(1800));
    const waiting = (pm.job('be') as PlannedJob).segments[1] as Segment;
    expect(waiting.start).toBe(seconds(4560));
    // 'a' is done early: the nodes it frees let the suspended job resume at once, not when 'a' was booked to end.
    const report = pm.jobFinished('a', seconds(3000));
    expect(report.moved).toEqual(['be']);
    const be = pm.job('be') as PlannedJob;
    expect(be.segments).toHaveLength(2);
    expect(be.segments[0]).toMatchObject({ start: T0, end: seconds(1800), intervals: 0 });
    expect(be.segments[1]).toMatchObject({
      start: seconds(3000),
      end: seconds(3000) + (waiting.end - waiting.start),
      restart: waiting.restart,
      intervals: waiting.intervals,
    });
  });

  it('leaves the job in P with a reason when nothing can save it: reservations are never suspended', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(
      pm,
      job({
        id: 'r',
        kind: 'Reservation',
        level: 'Legacy',
        nodes: 4,
        runtimeSeconds: 10 * 3600,
        window: { start: T0, end: T0 + hours(10) },
      }),
      T0 - minutes(1),
    );
    admitted(pm, deadlineJob('a'));
    const failing = (pm.job('a') as PlannedJob).segments[0]?.nodes[0] as string;
    const report = pm.nodeFailed(failing, seconds(1800));
    expect(report.suspended).toEqual([]);
    expect(report.problematic).toEqual([
      {
        id: 'a',
        reason: expect.stringMatching(
          new RegExp(
            `^node ${failing} failed at 2026-11-23T00:30:00Z: cannot restart in time: deadline 2026-11-23T02:00:00Z cannot be met`,
          ),
        ),
      },
    ]);
    // Its booking: 31 s to prepare its nodes and hand them over before the window (paper's site, t_handover 1 s), nothing to release after.
    expect((pm.job('r') as PlannedJob).segments).toEqual([
      expect.objectContaining({ start: T0 - 31_000, end: T0 + hours(10) }),
    ]);
  });

  it('tries a problem again when a job finishes and frees nodes', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(
      pm,
      job({
        id: 'r',
        kind: 'Reservation',
        level: 'Legacy',
        nodes: 4,
        runtimeSeconds: 10 * 3600,
        window: { start: T0, end: T0 + hours(10) },
      }),
      T0 - minutes(1),
    );
    admitted(pm, deadlineJob('a'));
    pm.nodeFailed((pm.job('a') as PlannedJob).segments[0]?.nodes[0] as string, seconds(1800));
    expect(pm.problematic().map((p) => p.id)).toEqual(['a']);
    const report = pm.jobFinished('r', seconds(2400)); // the reservation's holder is done early
    expect(report.solved).toEqual(['a']);
    expect(report.problematic).toEqual([]);
    expect(pm.job('a')?.segments[1]).toMatchObject({ start: seconds(2400), restart: true, intervals: 5 });
  });

  it('runs a job in pieces through gaps when no gap holds the rest whole (3.5.3)', () => {
    // Only n05 has 32 GB, and the reservations need it: they stay off the failing node.
    const pm = new PlanningManager(cluster(5, { timing: paper, node: (i) => ({ memoryGB: i === 4 ? 32 : 16 }) }));
    // Each reservation's booking begins 31 s before its window (preparation): the gaps end at 40:29, 80:29 and 100:29.
    for (const [from, to] of [
      [41, 50],
      [81, 90],
      [101, 300],
    ] as const) {
      admitted(
        pm,
        job({
          id: `r${from}`,
          kind: 'Reservation',
          level: 'Legacy',
          nodes: 1,
          requirements: { memoryPerNodeGB: 32 },
          runtimeSeconds: (to - from) * 60,
          window: { start: T0 + minutes(from), end: T0 + minutes(to) },
        }),
      );
    }
    admitted(pm, deadlineJob('a'));
    const report = pm.nodeFailed('n01', T0 + minutes(30));
    expect(report.problematic).toEqual([]);
    const a = pm.job('a') as PlannedJob;
    // [30, 40) min: restart and one interval with its checkpoint (600 s); [50, 80): three (30 + 3 x 570 = 1740 s);
    // the last interval (30 + 450 s) in [90, 100).
    expect(a.segments.slice(1).map((s) => [(s.start - T0) / 1000, (s.end - T0) / 1000, s.intervals])).toEqual([
      [1800, 2400, 1],
      [3000, 4740, 3],
      [5400, 5880, 1],
    ]);
    expect(expectedCompletion(a, pm.shape(a))).toBeLessThanOrEqual(a.spec.deadline as number);
  });

  it('leaves jobs beyond the problem horizon planned but flagged, and clears them on repair', () => {
    const pm = new PlanningManager(cluster(4, { timing: paper }));
    admitted(pm, deadlineJob('later', { earliestStart: T0 + hours(10), deadline: T0 + hours(14) }));
    const report = pm.nodeFailed('n01', T0);
    expect(report.problematic).toEqual([
      { id: 'later', reason: expect.stringContaining('beyond the problem horizon') },
    ]);
    expect((pm.job('later') as PlannedJob).segments[0]?.nodes).toContain('n01');
    expect(pm.nodeRepaired('n01', T0 + hours(1)).problematic).toEqual([]);
  });
});

describe('best-effort, background, buffer nodes, Full', () => {
  it("moves a waiting best-effort job out of an SLA job's way (B is placed last)", () => {
    const pm = new PlanningManager(cluster(4, { timing: paper }));
    admitted(pm, job({ id: 'first', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 3600 }));
    admitted(pm, job({ id: 'be', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 3600 }));
    expect(pm.job('be')?.segments[0]?.start).toBe(seconds(3630));
    const decision = pm.admit(deadlineJob('a', { deadline: T0 + hours(4) }), T0);
    expect(decision).toMatchObject({ accepted: true, moved: ['be'] });
    expect(pm.job('a')?.segments[0]?.start).toBe(seconds(3630));
    expect(pm.job('be')?.segments[0]?.start).toBe(seconds(3630 + 4470));
  });

  it('lets a waiting job take the gap an early finish opens', () => {
    const pm = new PlanningManager(cluster(4, { timing: paper }));
    admitted(pm, job({ id: 'first', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 3600 }));
    admitted(pm, job({ id: 'second', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 3600 }));
    const report = pm.jobFinished('first', seconds(1200));
    expect(report.moved).toEqual(['second']);
    expect(pm.job('second')?.segments[0]).toMatchObject({ start: seconds(1200), end: seconds(1200 + 3630) });
  });

  it('moves a waiting job up into a gap that opens after now, not only into one that opens now', () => {
    const pm = new PlanningManager(cluster(4, { timing: paper }));
    const beJob = (id: string, nodes: number, hoursLong: number) =>
      job({ id, kind: 'BestEffort', level: 'Legacy', nodes, runtimeSeconds: hoursLong * 3600 });
    admitted(pm, beJob('half', 2, 3));
    admitted(pm, beJob('long', 2, 10));
    admitted(pm, beJob('wide', 4, 1));
    const halfEnd = pm.job('half')?.segments[0]?.end as number;
    expect(pm.job('wide')?.segments[0]?.start).toBe(pm.job('long')?.segments[0]?.end);
    // 'long' is done after an hour: 'wide' cannot start now ('half' holds two nodes) but can when 'half' ends.
    const report = pm.jobFinished('long', seconds(3600));
    expect(report.moved).toEqual(['wide']);
    expect(pm.job('wide')?.segments[0]?.start).toBe(halfEnd);
    expect(pm.job('half')?.segments[0]?.end).toBe(halfEnd);
  });

  it('keeps buffer nodes for best-effort work (3.5.4)', () => {
    const pm = new PlanningManager(cluster(6, { timing: paper, node: (i) => ({ buffer: i >= 4 }) }));
    const refused = pm.admit(
      job({ id: 'r', kind: 'Reservation', level: 'Legacy', nodes: 5, window: { start: T0, end: T0 + hours(1) } }),
      T0,
    );
    expect(refused).toEqual({
      accepted: false,
      reason: '5 nodes requested but the cluster has 4 nodes that meet the requirements available to SLA jobs',
    });
    expect(
      admitted(pm, job({ id: 'be', kind: 'BestEffort', level: 'Legacy', nodes: 6 })).segments[0]?.nodes,
    ).toHaveLength(6);
  });

  it('refuses a job that names an interconnect when no island is large enough', () => {
    const pm = new PlanningManager(
      cluster(8, { timing: paper, node: (i) => ({ interconnect: 'InfiniBand', island: i < 4 ? 'ib-1' : 'ib-2' }) }),
    );
    const decision = pm.admit(
      deadlineJob('a', { nodes: 6, requirements: { interconnect: 'InfiniBand' }, deadline: T0 + hours(4) }),
      T0,
    );
    expect(decision).toEqual({
      accepted: false,
      reason: '6 nodes on InfiniBand must share one interconnect island, but the largest suitable island has 4',
    });
    expect(admitted(pm, deadlineJob('b', { requirements: { interconnect: 'InfiniBand' } })).segments[0]?.nodes).toEqual(
      ['n01', 'n02', 'n03', 'n04'],
    );
  });

  it('Full needs standby nodes at a peer', () => {
    const without = new PlanningManager(cluster(8, { timing: paper }));
    const refused = without.admit(deadlineJob('a', { level: 'Full', coveredOutages: 1, deadline: T0 + hours(3) }), T0);
    expect(refused).toEqual({
      accepted: false,
      reason:
        'Full service needs 4 standby nodes reserved at a peer provider, but no peer standby capacity is configured',
    });
    const pm = new PlanningManager(cluster(8, { timing: paper, peerStandbyNodes: 6 }));
    expect(
      admitted(pm, deadlineJob('a', { level: 'Full', coveredOutages: 1, deadline: T0 + hours(3) })).remoteStandby,
    ).toBe(4);
    // Four nodes are free locally, but the peer's 6 standby nodes hold only one Full job at a time.
    const second = pm.admit(deadlineJob('b', { level: 'Full', coveredOutages: 1, deadline: T0 + hours(2) }), T0);
    expect(second.accepted).toBe(false);
    if (!second.accepted)
      expect(second.reason).toMatch(
        /^deadline 2026-11-23T02:00:00Z cannot be met: earliest worst-case completion .* is 2026-11-23T02:46:00Z on 4 nodes$/,
      );
  });

  it('offers counter-offers for a request it cannot serve as asked', () => {
    const pm = new PlanningManager(cluster(8, { timing: paper }));
    admitted(
      pm,
      job({
        id: 'r',
        kind: 'Reservation',
        level: 'Legacy',
        nodes: 6,
        window: { start: T0 + hours(1), end: T0 + hours(3) },
      }),
    );
    const wanted = job({
      id: 'w',
      kind: 'Reservation',
      level: 'Legacy',
      nodes: 4,
      window: { start: T0 + hours(2), end: T0 + hours(4) },
    });
    expect(pm.admit(wanted, T0).accepted).toBe(false);
    const alternatives = pm.alternatives(wanted, T0);
    expect(alternatives.map((a) => a.kind)).toEqual(['LaterStart', 'FewerNodes']);
    // The nodes are free from 3 h: the moved window starts once they are prepared, 31 s later.
    expect(alternatives[0]?.spec.window).toEqual({ start: T0 + hours(3) + 31_000, end: T0 + hours(5) + 31_000 });
    expect(alternatives[1]?.spec.nodes).toBe(2);
    for (const alternative of alternatives) expect(pm.probe(alternative.spec, T0).accepted).toBe(true);
  });
});
