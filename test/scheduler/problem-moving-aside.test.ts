import { describe, expect, it } from 'vitest';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, T0 } from './support.js';

/**
 * A problem that finds no place while waiting deadline jobs hold the nodes it needs: they move
 * aside to places that still keep their deadlines, or nothing moves.
 */
describe('a problem placed where waiting deadline jobs move aside', () => {
  /** P (two nodes, due at 2 h 15 min) runs from T0; W (three nodes, two hours) waits for 45 minutes. */
  function planned(waitingDeadline: number): PlanningManager {
    const pm = new PlanningManager(cluster(5, { timing: { chanceShare: 1 } }));
    const p = job({
      id: 'P',
      kind: 'Deadline',
      level: 'Legacy',
      nodes: 2,
      runtimeSeconds: 3600,
      deadline: T0 + hours(2.25),
    });
    expect(pm.admit(p, T0).accepted).toBe(true);
    const w = job({
      id: 'W',
      kind: 'Deadline',
      level: 'Legacy',
      nodes: 3,
      runtimeSeconds: 2 * 3600,
      earliestStart: T0 + hours(0.75),
      deadline: waitingDeadline,
    });
    expect(pm.admit(w, T0).accepted).toBe(true);
    expect(pm.job('W')?.segments[0]?.start).toBe(T0 + hours(0.75));
    return pm;
  }

  it('restarts the problem at once and moves the waiting job later within its deadline', () => {
    const pm = planned(T0 + hours(10));
    const [failing] = pm.job('P')?.segments[0]?.nodes as [string];
    // At 30 minutes one of P's nodes fails: a restart needs two nodes for an hour before 2 h 15 min, and W holds
    // every other node from 45 minutes.
    const report = pm.nodeFailed(failing, T0 + hours(0.5));
    expect(report.problematic).toEqual([]);
    expect(report.moved).toEqual(expect.arrayContaining(['P', 'W']));
    const restart = pm.job('P')?.segments.at(-1);
    expect(restart?.start).toBe(T0 + hours(0.5));
    expect(restart?.end).toBeLessThanOrEqual(T0 + hours(2.25));
    const moved = pm.job('W')?.segments[0];
    expect(moved?.start).toBeGreaterThanOrEqual(restart?.end as number);
    expect(moved?.end).toBeLessThanOrEqual(T0 + hours(10));
  });

  it('moves nothing where the waiting job would miss its deadline', () => {
    // W due at 2 h 50 min: it can start no later than 50 minutes, so it cannot give way.
    const pm = planned(T0 + hours(2) + 50 * 60_000);
    const [failing] = pm.job('P')?.segments[0]?.nodes as [string];
    const report = pm.nodeFailed(failing, T0 + hours(0.5));
    expect(report.problematic.map((p) => p.id)).toEqual(['P']);
    expect(pm.job('W')?.segments[0]?.start).toBe(T0 + hours(0.75));
  });
});
