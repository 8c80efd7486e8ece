import { describe, expect, it } from 'vitest';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import type { SiteTiming } from '../../src/scheduler/site.js';
import { admitted, cluster, hours, job, paper, reservedAtTwoHours, T0 } from './support.js';

// Best-effort work ahead of its turn (src/scheduler/plan-start-now.ts): the paper's site, 30 s to initialise.
const seconds = (s: number) => T0 + s * 1000;
const bestEffort = (id: string, nodes: number, runtimeSeconds: number) =>
  job({ id, kind: 'BestEffort', level: 'Legacy', nodes, runtimeSeconds });

/**
 * Four nodes: 'running' holds two for an hour, 'wide' waits for all four after it, and 'long' (two nodes, two hours)
 * arrives: in the plan its place is after 'wide'.
 */
function queueBehindWide(timing: Partial<SiteTiming> = {}) {
  const pm = new PlanningManager(cluster(4, { timing: { ...paper, ...timing } }));
  admitted(pm, bestEffort('running', 2, 3600));
  admitted(pm, bestEffort('wide', 4, 3600));
  const long = admitted(pm, bestEffort('long', 2, 2 * 3600));
  return { pm, long };
}

describe('best-effort work ahead of its turn', () => {
  it('thesis order without it: a job whose run does not fit before the next booking waits for its place', () => {
    const { pm, long } = queueBehindWide({ bestEffortStartsAhead: false });
    expect(long.segments[0]?.start).toBe(pm.job('wide')?.segments[0]?.end);
    expect(pm.job('wide')?.segments[0]?.start).toBe(seconds(3630));
  });

  it('starts a waiting job on the nodes free now; waiting best-effort work in its way moves after it', () => {
    const { pm, long } = queueBehindWide();
    expect(long.moved).toEqual(['long', 'wide']);
    expect(pm.job('long')?.segments).toEqual([
      expect.objectContaining({ start: T0, end: seconds(7230), yields: true }),
    ]);
    expect(pm.job('long')?.segments[0]?.nodes).toEqual(['n03', 'n04']);
    // 'wide' needs the nodes 'long' now holds: it starts when 'long' ends.
    expect(pm.job('wide')?.segments[0]?.start).toBe(seconds(7230));
  });

  it('never moves a firm booking: the run must end before the next SLA booking on the nodes', () => {
    const { pm, reservation } = reservedAtTwoHours();
    admitted(pm, bestEffort('running', 2, 3600));
    admitted(pm, bestEffort('wide', 4, 1800));
    // Two hours do not fit before the reservation's preparation: it waits after the reservation.
    const long = admitted(pm, bestEffort('long', 2, 2 * 3600));
    expect(long.segments[0]?.start).toBeGreaterThanOrEqual(reservation.segments[0]?.end as number);
    expect(pm.job('r')?.segments).toEqual(reservation.segments);
  });

  it('an early finish lets waiting work start ahead of its turn on the nodes it frees', () => {
    const pm = new PlanningManager(cluster(4, { timing: paper }));
    admitted(pm, bestEffort('a', 2, 3600));
    admitted(pm, bestEffort('b', 2, 3600));
    admitted(pm, bestEffort('wide', 4, 3600));
    admitted(pm, bestEffort('long', 2, 2 * 3600));
    expect(pm.job('long')?.segments[0]?.start).toBe(pm.job('wide')?.segments[0]?.end);
    const report = pm.jobFinished('a', seconds(600));
    expect(report.moved).toContain('long');
    expect(pm.job('long')?.segments[0]).toMatchObject({ start: seconds(600), yields: true });
  });

  it('SLA work takes nodes nothing runs on before those of a job ahead of its turn', () => {
    const { pm } = queueBehindWide();
    // 'running' is done early: two nodes are free, two run 'long'.
    pm.jobFinished('running', seconds(600));
    const deadline = admitted(
      pm,
      job({ id: 'd', kind: 'Deadline', level: 'Standard', nodes: 2, runtimeSeconds: 1800, deadline: T0 + hours(1) }),
      seconds(600),
    );
    expect(deadline.segments[0]?.nodes).toEqual(['n01', 'n02']);
    expect(pm.job('long')?.segments).toEqual([expect.objectContaining({ start: T0, end: seconds(7230) })]);
  });

  it('where SLA work needs its nodes, the job stops there, keeps what it secured, and goes on after', () => {
    const { pm } = queueBehindWide();
    const deadline = admitted(
      pm,
      job({ id: 'd', kind: 'Deadline', level: 'Standard', nodes: 4, runtimeSeconds: 1800, deadline: T0 + hours(2) }),
      seconds(1800),
    );
    // 'running' holds two nodes until 3630 s: the deadline job starts then, on all four.
    expect(deadline.segments[0]?.start).toBe(seconds(3630));
    const [ran, rest] = pm.job('long')?.segments ?? [];
    expect(ran).toMatchObject({ start: T0, end: seconds(3630), yields: true, intervals: 0 });
    expect(rest?.start).toBeGreaterThanOrEqual(deadline.segments[0]?.end as number);
    expect(rest).toMatchObject({ intervals: 1, restart: false });
    // The deadline job's booking is untouched by 'long' (no node is booked twice: the Machine Manager would throw).
    expect(pm.job('d')?.segments).toEqual(deadline.segments);
  });
});
