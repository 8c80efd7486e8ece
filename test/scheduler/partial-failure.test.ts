import { describe, expect, it } from 'vitest';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, minutes, T0 } from './support.js';

/** Issue 12, case 7: a multi-node reservation that loses a node keeps its surviving nodes. */
const reservation = (id: string, nodes: number) => job({ id, kind: 'Reservation', nodes, window: { start: T0, end: T0 + hours(2) }, runtimeSeconds: 7200 });
const nodesOf = (pm: PlanningManager, id: string, at: number) => pm.job(id)?.segments.find((s) => s.start <= at && at < s.end)?.nodes ?? [];

describe('a reservation that loses one of its nodes (partial failure)', () => {
  it('with no node to spare: keeps its surviving node for the rest of the window, and nobody else gets it', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), T0).accepted).toBe(true);
    expect(pm.admit(reservation('B', 1), T0).accepted).toBe(true);
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    const report = pm.nodeFailed(lost, T0 + minutes(30));
    expect(report.problematic).toEqual([]);
    expect(pm.job('A')?.problem).toBeUndefined();
    expect(nodesOf(pm, 'A', T0 + minutes(10))).toEqual([lost, survivor]); // before the failure: both
    expect(nodesOf(pm, 'A', T0 + minutes(40))).toEqual([survivor]); // after it: the survivor, to the window's end
    expect(pm.job('A')?.segments.at(-1)?.end).toBe(T0 + hours(2));
    // The survivor stays A's: a one-node request in the window is refused.
    expect(pm.admit(reservation('C', 1), T0 + minutes(31)).accepted).toBe(false);
  });

  it('with a free node: that node takes the failed one\'s place, and the reservation keeps its size', () => {
    const pm = new PlanningManager(cluster(4));
    expect(pm.admit(reservation('A', 2), T0).accepted).toBe(true);
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    pm.nodeFailed(lost, T0 + minutes(30));
    const after = nodesOf(pm, 'A', T0 + minutes(40));
    expect(after).toHaveLength(2);
    expect(after).toContain(survivor);
    expect(after).not.toContain(lost);
  });
});
