import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, job, minutes, T0 } from './support.js';

/**
 * Interactive jobs (issue 15, CrossBroker): started within the bound (5 s here) or refused
 * at once; room is made by suspending running best-effort and background jobs, never SLA
 * jobs. Four nodes.
 */
const bound = 5000;
const interactive = (nodes: number, id = 'i') => job({ id, kind: 'Reservation', level: 'Legacy', nodes, runtimeSeconds: 1800, coveredOutages: 0 });
const firstStart = (j: PlannedJob | undefined) => j?.segments[0]?.start;

describe('an interactive job', () => {
  it('on free nodes starts at once; nothing is suspended', () => {
    const pm = new PlanningManager(cluster(4));
    pm.admit(job({ id: 'b', kind: 'BestEffort', level: 'Legacy', nodes: 2, runtimeSeconds: 7200, coveredOutages: 0 }), T0);
    const now = T0 + minutes(10);
    const decision = pm.admitInteractive(interactive(2), now, bound);
    expect(decision.accepted).toBe(true);
    expect(decision.suspended ?? []).toEqual([]);
    expect(firstStart(pm.job('i'))).toBe(now);
  });

  it('on a cluster full of best-effort work: the jobs holding most nodes are suspended, it starts at once, they resume after it', () => {
    const pm = new PlanningManager(cluster(4));
    pm.admit(job({ id: 'wide', kind: 'BestEffort', level: 'Legacy', nodes: 3, runtimeSeconds: 7200, coveredOutages: 0 }), T0);
    pm.admit(job({ id: 'narrow', kind: 'Background', level: 'Background', nodes: 1, runtimeSeconds: 7200, coveredOutages: 0, arrival: T0 + 1 }), T0);
    const now = T0 + minutes(10);
    const decision = pm.admitInteractive(interactive(2), now, bound);
    expect(decision.accepted).toBe(true);
    expect(decision.suspended).toEqual(['wide']); // 3 nodes freed: enough; the 1-node job keeps running
    expect(firstStart(pm.job('i'))).toBe(now);
    const wide = pm.job('wide') as PlannedJob;
    expect(wide.segments[0]).toMatchObject({ start: T0, end: now }); // what ran stays in its history
    const resumed = wide.segments[1];
    expect(resumed?.start).toBeGreaterThanOrEqual(now + 1800_000); // after the interactive job: 3 nodes are not free before
    expect(pm.job('narrow')?.segments.length).toBe(1);
    expect(decision.moved).toContain('wide');
  });

  it('on a cluster full of SLA work: refused at once with the reason, nothing changed', () => {
    const pm = new PlanningManager(cluster(4));
    pm.admit(job({ id: 'r', kind: 'Reservation', level: 'Legacy', nodes: 4, window: { start: T0, end: T0 + minutes(60) } }), T0);
    const before = JSON.stringify(pm.job('r'));
    const decision = pm.admitInteractive(interactive(1), T0 + minutes(10), bound);
    expect(decision).toEqual({ accepted: false, reason: expect.stringMatching(/^an interactive job starts within 5 s or not at all: .*no best-effort or background job runs that could make room \(SLA jobs are never suspended for it\)$/) });
    expect(pm.job('i')).toBeUndefined();
    expect(JSON.stringify(pm.job('r'))).toBe(before);
  });

  it('when even suspending every best-effort job leaves too few nodes: refused, and the suspended jobs run on as before', () => {
    const pm = new PlanningManager(cluster(4));
    pm.admit(job({ id: 'r', kind: 'Reservation', level: 'Legacy', nodes: 3, window: { start: T0, end: T0 + minutes(60) } }), T0);
    pm.admit(job({ id: 'b', kind: 'BestEffort', level: 'Legacy', nodes: 1, runtimeSeconds: 7200, coveredOutages: 0 }), T0);
    const before = JSON.stringify(pm.job('b'));
    const decision = pm.admitInteractive(interactive(2), T0 + minutes(10), bound);
    expect(decision.accepted).toBe(false);
    expect(decision.accepted ? '' : decision.reason).toMatch(/even with the 1 running best-effort and background job\(s\) suspended/);
    expect(JSON.stringify(pm.job('b'))).toBe(before);
    expect(pm.mm.firmProfile.at(T0 + minutes(20))).toBe(4);
  });

  it('nodes freed within the bound are waited for instead of suspending anything', () => {
    const pm = new PlanningManager(cluster(4));
    pm.admit(job({ id: 'r', kind: 'Reservation', level: 'Legacy', nodes: 4, window: { start: T0, end: T0 + minutes(10) } }), T0);
    const now = T0 + minutes(10) - 3000;
    const decision = pm.admitInteractive(interactive(4), now, bound);
    expect(decision.accepted).toBe(true);
    expect(firstStart(pm.job('i'))).toBe(T0 + minutes(10));
  });
});
