import { describe, expect, it } from 'vitest';
import { RepairTimes } from '../../src/scheduler/repair-times.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, T0 } from './support.js';

describe('the repair times the planner learns', () => {
  it('says nothing until three repairs took longer than the node has been down', () => {
    const times = new RepairTimes();
    times.repaired(hours(2), false);
    times.repaired(hours(10), false);
    expect(times.remainingMs(0, false)).toBeUndefined();
    times.repaired(hours(12), false);
    // Of 2, 10 and 12 h the median is 10 h.
    expect(times.remainingMs(0, false)).toBe(hours(10));
    // Down 3 h already: only 10 and 12 h took longer, too few.
    expect(times.remainingMs(hours(3), false)).toBeUndefined();
    times.repaired(hours(20), false);
    // Down 3 h: of 10, 12 and 20 h the median is 12 h, 9 h from now.
    expect(times.remainingMs(hours(3), false)).toBe(hours(9));
  });

  it('learns the repairs of nodes that failed with others apart from those that failed alone', () => {
    const times = new RepairTimes();
    for (const h of [1, 2, 3]) times.repaired(hours(h), false);
    for (const h of [12, 14, 16]) times.repaired(hours(h), true);
    expect(times.remainingMs(0, false)).toBe(hours(2));
    expect(times.remainingMs(0, true)).toBe(hours(14));
    expect(times.view()).toEqual({
      alone: { repairs: 3, medianHours: 2 },
      withOthers: { repairs: 3, medianHours: 14 },
    });
  });
});

describe('a failed node likely down beyond the problem horizon', () => {
  /** `pm` once it has seen `nodes` fail together three times, each time repaired after `repairHours`. */
  function afterRepairs(pm: PlanningManager, nodes: string[], repairHours: number): PlanningManager {
    for (let i = 0; i < 3; i++) {
      const failedAt = T0 + hours(i * (repairHours + 1));
      for (const node of nodes) pm.nodeFailed(node, failedAt);
      pm.advance(failedAt + hours(repairHours)); // their blocks renewed where they outlast the horizon
      for (const node of nodes) pm.nodeRepaired(node, failedAt + hours(repairHours));
    }
    return pm;
  }
  const afterRepairsOf = (repairHours: number) => afterRepairs(new PlanningManager(cluster(4)), ['n01'], repairHours);

  /** When a best-effort job of an hour on all four nodes, admitted at `now`, starts. */
  function startOnEveryNode(pm: PlanningManager, now: number): number | undefined {
    expect(pm.admit(job({ id: 'all', kind: 'BestEffort', nodes: 4, runtimeSeconds: 3600 }), now).accepted).toBe(true);
    return pm.job('all')?.segments[0]?.start;
  }

  // A job on every node waits for the repair learned where it outlasts the horizon (4 h), else for the horizon.
  it.each([
    [10, 10],
    [2, 4],
  ])('is kept from new work until it is more likely back than not (repairs of %i h: %i h)', (repairHours, waits) => {
    const pm = afterRepairsOf(repairHours);
    const now = T0 + hours(40);
    pm.nodeFailed('n01', now);
    expect(startOnEveryNode(pm, now)).toBe(now + hours(waits));
  });

  it('sends the waiting work planned on it before its likely repair to other nodes at once', () => {
    const pm = afterRepairsOf(10);
    const now = T0 + hours(40);
    const later = job({
      id: 'later',
      kind: 'Deadline',
      level: 'Legacy',
      nodes: 3,
      runtimeSeconds: 3600,
      earliestStart: now + hours(6),
      deadline: now + hours(12),
    });
    expect(pm.admit(later, now).accepted).toBe(true);
    expect(pm.job('later')?.segments[0]?.nodes).toContain('n01');
    pm.nodeFailed('n01', now + hours(1));
    // Planned beyond the horizon (5 h) but before its likely repair (11 h): moved off it now, not flagged.
    expect(pm.job('later')?.segments[0]?.nodes).not.toContain('n01');
    expect(pm.job('later')?.segments[0]?.start).toBe(now + hours(6));
    expect(pm.job('later')?.problem).toBeUndefined();
  });

  it('waits for the repairs of its kind: a group failure for those of group failures, a node alone for its own', () => {
    const racks = () => new PlanningManager(cluster(4, { node: (i) => ({ failureGroup: i < 2 ? 'a' : 'b' }) }));
    /** Three failures of rack a's two nodes at once, each repaired after 10 h. */
    const afterRackRepairs = () => afterRepairs(racks(), ['n01', 'n02'], 10);
    const now = T0 + hours(40);
    const alone = afterRackRepairs();
    alone.nodeFailed('n03', now);
    expect(startOnEveryNode(alone, now)).toBe(now + hours(4));
    // Rack a fails whole again: its second node waits for the racks' repairs (its first, failing before it was
    // known to be one of several, for the horizon), so a job on every node starts after 10 h.
    const together = afterRackRepairs();
    for (const node of ['n01', 'n02']) together.nodeFailed(node, now);
    expect(startOnEveryNode(together, now)).toBe(now + hours(10));
    expect(together.repairTimes.view()).toEqual({
      alone: { repairs: 0, medianHours: 0 },
      withOthers: { repairs: 6, medianHours: 10 },
    });
  });
});
