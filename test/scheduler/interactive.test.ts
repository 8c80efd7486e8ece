import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, job, minutes, T0 } from './support.js';

/**
 * Interactive jobs (CrossBroker): started within the bound (5 s here) or refused at once.
 * They start on nodes kept prepared (a warm pool, four nodes here), which need only the
 * hand-over (t_handover, 1 s); room is made by suspending best-effort and background work
 * running there, never SLA jobs. Without a warm pool a session waits for cold nodes, whose
 * preparation is longer than the bound: refused at once with the soonest start.
 */
const bound = 5000;
const handover = 1000;
const warm = (nodes = 4) => cluster(nodes, { node: () => ({ warm: true }) });
const interactive = (nodes: number, id = 'i', runtimeSeconds = 1800) =>
  job({ id, kind: 'Reservation', level: 'Legacy', nodes, runtimeSeconds, coveredOutages: 0 });
const firstStart = (j: PlannedJob | undefined) => j?.segments[0]?.start;

describe('an interactive job', () => {
  it('on free warm nodes starts at once: booked from now, handed over within the bound; nothing is suspended', () => {
    const pm = new PlanningManager(warm());
    pm.admit(
      job({ id: 'b', kind: 'BestEffort', level: 'Legacy', nodes: 2, runtimeSeconds: 7200, coveredOutages: 0 }),
      T0,
    );
    const now = T0 + minutes(10);
    const decision = pm.admitInteractive(interactive(2), now, bound);
    expect(decision.accepted).toBe(true);
    expect(decision.suspended ?? []).toEqual([]);
    expect(firstStart(pm.job('i'))).toBe(now);
    expect(pm.job('i')?.spec.window).toEqual({ start: now + handover, end: now + handover + 1800_000 });
  });

  it('without warm nodes: refused at once, naming the preparation and the soonest start', () => {
    const pm = new PlanningManager(cluster(4));
    const decision = pm.admitInteractive(interactive(2), T0, bound);
    expect(decision).toEqual({
      accepted: false,
      reason:
        'an interactive job starts within 5 s or not at all: its nodes need 36 s of preparation (node initialisation, storage, mount and hand-over) ' +
        'and no nodes are kept prepared for interactive sessions (WSAG_WARM_NODES); the soonest start the site can promise is 2026-11-23T00:00:36Z',
    });
    expect(pm.job('i')).toBeUndefined();
  });

  it('SLA jobs other than sessions are not planned on warm nodes', () => {
    const pm = new PlanningManager(cluster(6, { node: (i) => (i >= 4 ? { warm: true } : {}) }));
    const decision = pm.admit(
      job({
        id: 'd',
        kind: 'Deadline',
        level: 'Legacy',
        nodes: 5,
        runtimeSeconds: 600,
        coveredOutages: 0,
        deadline: T0 + minutes(60),
      }),
      T0,
    );
    expect(decision.accepted ? '' : decision.reason).toBe(
      '5 nodes requested but the cluster has 4 nodes that meet the requirements available to SLA jobs',
    );
  });

  it('on warm nodes full of best-effort work: the jobs holding most nodes are suspended, it starts at once, they resume after it', () => {
    const pm = new PlanningManager(warm());
    pm.admit(
      job({ id: 'wide', kind: 'BestEffort', level: 'Legacy', nodes: 3, runtimeSeconds: 7200, coveredOutages: 0 }),
      T0,
    );
    pm.admit(
      job({
        id: 'narrow',
        kind: 'Background',
        level: 'Background',
        nodes: 1,
        runtimeSeconds: 7200,
        coveredOutages: 0,
        arrival: T0 + 1,
      }),
      T0,
    );
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

  it('on warm nodes full of sessions: refused at once with the reason, nothing changed', () => {
    const pm = new PlanningManager(warm());
    expect(pm.admitInteractive(interactive(4, 'x'), T0, bound).accepted).toBe(true);
    const before = JSON.stringify(pm.job('x'));
    const decision = pm.admitInteractive(interactive(1), T0 + minutes(10), bound);
    expect(decision).toEqual({
      accepted: false,
      reason: expect.stringMatching(
        /^an interactive job starts within 5 s or not at all: .*no best-effort or background job runs that could make room \(SLA jobs are never suspended for it\)$/,
      ),
    });
    expect(pm.job('i')).toBeUndefined();
    expect(JSON.stringify(pm.job('x'))).toBe(before);
  });

  it('when even suspending every best-effort job leaves too few nodes: refused, and the suspended jobs run on as before', () => {
    const pm = new PlanningManager(warm());
    expect(pm.admitInteractive(interactive(3, 'x'), T0, bound).accepted).toBe(true);
    pm.admit(
      job({ id: 'b', kind: 'BestEffort', level: 'Legacy', nodes: 1, runtimeSeconds: 7200, coveredOutages: 0 }),
      T0,
    );
    const before = JSON.stringify(pm.job('b'));
    const decision = pm.admitInteractive(interactive(2), T0 + minutes(10), bound);
    expect(decision.accepted).toBe(false);
    expect(decision.accepted ? '' : decision.reason).toMatch(
      /even with the 1 running best-effort and background job\(s\) suspended/,
    );
    expect(JSON.stringify(pm.job('b'))).toBe(before);
    expect(pm.mm.firmProfile.at(T0 + minutes(20))).toBe(4);
  });

  it('nodes freed within the bound are waited for instead of suspending anything', () => {
    const pm = new PlanningManager(warm());
    expect(pm.admitInteractive(interactive(4, 'x', 600), T0, bound).accepted).toBe(true);
    const freed = pm.job('x')?.segments[0]?.end as number; // its window's end and the nodes' release (t_deinit)
    const now = freed - 3000;
    const decision = pm.admitInteractive(interactive(4), now, bound);
    expect(decision.accepted).toBe(true);
    expect(firstStart(pm.job('i'))).toBe(freed);
    expect(pm.job('i')?.spec.window?.start).toBe(freed + handover);
  });
});
