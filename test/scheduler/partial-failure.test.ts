import { describe, expect, it } from 'vitest';
import { segmentPhases } from '../../src/scheduler/job-timing.js';
import type { PlannedJob, Segment } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, minutes, T0 } from './support.js';

/**
 * A multi-node reservation that loses a node keeps its surviving nodes; left short, it is a
 * problem at once (its owner is told) and grows back when a node is repaired or freed.
 * Admitted a minute ahead of the window: its nodes are prepared before it.
 */
const reservation = (id: string, nodes: number) =>
  job({ id, kind: 'Reservation', nodes, window: { start: T0, end: T0 + hours(2) }, runtimeSeconds: 7200 });
const ahead = T0 - minutes(1);
/** A one-hour, one-node job waiting to start at `earliestStart` (by `deadline` for a deadline job). */
const waitingJob = (id: string, kind: 'BestEffort' | 'Deadline', earliestStart: number, deadline?: number) =>
  job({ id, kind, nodes: 1, runtimeSeconds: 3600, earliestStart, ...(deadline !== undefined ? { deadline } : {}) });
const nodesOf = (pm: PlanningManager, id: string, at: number) =>
  pm.job(id)?.segments.find((s) => s.start <= at && at < s.end)?.nodes ?? [];

/** A node of `id` fails `after` into its window: its spare, prepared with it, holds the place from that moment. */
function expectSpareTakesOver(pm: PlanningManager, id: string, after = minutes(30)): void {
  const current = pm.job(id)?.segments.at(-1) as Segment;
  const [spare] = current.spare as [string];
  const [lost] = current.nodes as [string];
  expect(pm.nodeFailed(lost, T0 + after).problematic).toEqual([]);
  const piece = pm.job(id)?.segments.at(-1) as Segment;
  expect(piece).toMatchObject({ start: T0 + after, continues: true, spare: [] });
  expect(piece.nodes).toContain(spare);
  const job = pm.job(id) as PlannedJob;
  expect(segmentPhases(job, pm.shape(job), piece).readyAt).toBe(T0 + after);
}

describe('a reservation that loses one of its nodes (partial failure)', () => {
  it('with no node to spare: keeps its surviving node for the rest of the window, is a problem at once, and nobody else gets the survivor', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), ahead).accepted).toBe(true);
    expect(pm.admit(reservation('B', 1), ahead).accepted).toBe(true);
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    const report = pm.nodeFailed(lost, T0 + minutes(30));
    const reason = `node ${lost} failed at 2026-11-23T00:30:00Z: the reservation keeps 1 of its 2 node(s) until a node is repaired or freed`;
    expect(report.problematic).toEqual([{ id: 'A', reason }]);
    expect(pm.job('A')?.problem).toBe(reason);
    expect(nodesOf(pm, 'A', T0 + minutes(10))).toEqual([lost, survivor]); // before the failure: both
    expect(nodesOf(pm, 'A', T0 + minutes(40))).toEqual([survivor]); // after it: the survivor, to the window's end and the release
    expect(pm.job('A')?.segments.at(-1)?.end).toBe(T0 + hours(2) + 15_000);
    // The survivor stays A's: a one-node request in the window is refused.
    expect(
      pm.admit(
        job({
          id: 'C',
          kind: 'Reservation',
          nodes: 1,
          window: { start: T0 + minutes(35), end: T0 + hours(1) },
          runtimeSeconds: 1500,
        }),
        T0 + minutes(31),
      ).accepted,
    ).toBe(false);
  });

  it('left short, grows back to its size when the failed node is repaired, and leaves the plan whole at its end', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), ahead).accepted).toBe(true);
    expect(pm.admit(reservation('B', 1), ahead).accepted).toBe(true);
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    pm.nodeFailed(lost, T0 + minutes(30));
    const report = pm.nodeRepaired(lost, T0 + minutes(50));
    expect(report.solved).toContain('A');
    expect(report.problematic).toEqual([]);
    expect(pm.job('A')?.problem).toBeUndefined();
    expect(nodesOf(pm, 'A', T0 + minutes(40))).toEqual([survivor]);
    expect([...nodesOf(pm, 'A', T0 + minutes(60))].sort()).toEqual([lost, survivor].sort());
    const { left } = pm.advance(T0 + hours(3));
    expect(left.map((j) => [j.spec.id, j.problem])).toEqual([
      ['A', undefined],
      ['B', undefined],
    ]);
  });

  it('left short to the end of its window: it leaves the plan as kept, not as given up', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), ahead).accepted).toBe(true);
    expect(pm.admit(reservation('B', 1), ahead).accepted).toBe(true);
    const [lost] = nodesOf(pm, 'A', T0) as [string, string];
    pm.nodeFailed(lost, T0 + minutes(30));
    const { left } = pm.advance(T0 + hours(3));
    expect(left.find((j) => j.spec.id === 'A')?.problem).toBeUndefined();
  });

  it("with a free node: that node takes the failed one's place, and the reservation keeps its size", () => {
    const pm = new PlanningManager(cluster(4));
    expect(pm.admit(reservation('A', 2), ahead).accepted).toBe(true);
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    pm.nodeFailed(lost, T0 + minutes(30));
    const after = nodesOf(pm, 'A', T0 + minutes(40));
    expect(after).toHaveLength(2);
    expect(after).toContain(survivor);
    expect(after).not.toContain(lost);
    // A free node is set up before its holder has it: the piece from the failure on is prepared first.
    const piece = pm.job('A')?.segments.at(-1) as Segment;
    expect(piece.continues).toBeUndefined();
    expect(
      segmentPhases(pm.job('A') as PlannedJob, pm.shape(pm.job('A') as PlannedJob), piece).readyAt,
    ).toBeGreaterThan(T0 + minutes(30));
  });

  it('with only waiting best-effort work on the other nodes: that work gives way and is planned again', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), T0 - hours(2)).accepted).toBe(true);
    expect(pm.admit(waitingJob('W', 'BestEffort', T0 + minutes(30)), T0 - hours(2)).accepted).toBe(true);
    const [third] = pm.job('W')?.segments[0]?.nodes as [string];
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    const report = pm.nodeFailed(lost, T0 - hours(1));
    expect(report.problematic).toEqual([]);
    expect([...nodesOf(pm, 'A', T0 + minutes(10))].sort()).toEqual([survivor, third].sort());
    // W waits for the nodes the window leaves: it is still planned, after it.
    expect(report.moved).toContain('W');
    expect(pm.job('W')?.segments[0]?.start).toBeGreaterThanOrEqual(T0 + hours(2));
  });

  it('with only a waiting deadline job on the other nodes: the job moves where it still keeps its deadline', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), T0 - hours(3)).accepted).toBe(true);
    expect(pm.admit(waitingJob('D', 'Deadline', T0 + minutes(10), T0 + hours(6)), T0 - hours(3)).accepted).toBe(true);
    const [third] = pm.job('D')?.segments[0]?.nodes as [string];
    const [lost, survivor] = nodesOf(pm, 'A', T0) as [string, string];
    const report = pm.nodeFailed(lost, T0 - hours(1));
    expect(report.problematic).toEqual([]);
    expect(report.moved).toContain('D');
    expect([...nodesOf(pm, 'A', T0 + minutes(10))].sort()).toEqual([survivor, third].sort());
    const moved = pm.job('D')?.segments as Segment[];
    expect(moved[0]?.start).toBeGreaterThanOrEqual(T0 + hours(2));
    expect(moved.at(-1)?.end).toBeLessThanOrEqual(T0 + hours(6));
  });

  it('a waiting deadline job that could not keep its deadline elsewhere stays, and the reservation runs short', () => {
    const pm = new PlanningManager(cluster(3));
    expect(pm.admit(reservation('A', 2), T0 - hours(3)).accepted).toBe(true);
    const tight = waitingJob('D', 'Deadline', T0 + minutes(10), T0 + minutes(90));
    expect(pm.admit(tight, T0 - hours(3)).accepted).toBe(true);
    const before = pm.job('D')?.segments;
    const [lost] = nodesOf(pm, 'A', T0) as [string, string];
    const report = pm.nodeFailed(lost, T0 - hours(1));
    expect(report.problematic.map((p) => p.id)).toEqual(['A']);
    expect(pm.job('D')?.segments).toEqual(before);
    expect(nodesOf(pm, 'A', T0 + minutes(10))).toHaveLength(1);
  });

  it('before its nodes are prepared, with no single node to take the place: it moves whole to nodes that are free', () => {
    // Islands a (n01, n02) and b (n03, n04), and n05 alone; A needs one island.
    const pm = new PlanningManager(
      cluster(5, { node: (i) => ({ interconnect: 'InfiniBand', island: ['a', 'a', 'b', 'b', 'c'][i] }) }),
    );
    const island = (id: string, nodes: number) => ({
      ...reservation(id, nodes),
      requirements: { interconnect: 'InfiniBand' },
    });
    expect(pm.admit(island('C', 2), T0 - hours(3)).accepted).toBe(true);
    expect(pm.admit(island('A', 2), T0 - hours(3)).accepted).toBe(true);
    expect(pm.admit(reservation('B', 1), T0 - hours(3)).accepted).toBe(true);
    const freed = [...nodesOf(pm, 'C', T0)];
    pm.release('C');
    const [lost] = nodesOf(pm, 'A', T0) as [string, string];
    const report = pm.nodeFailed(lost, T0 - hours(1));
    expect(report.problematic).toEqual([]);
    expect([...nodesOf(pm, 'A', T0)].sort()).toEqual(freed.sort());
    // Prepared before its window as at admission: nothing is short of nodes at any time of it.
    expect(pm.job('A')?.segments).toHaveLength(1);
    expect(pm.job('A')?.segments[0]?.start).toBeLessThan(T0);
  });

  it('moved whole, a Full reservation holds its standby at the peer once', () => {
    // Islands a (n01-n03) and b (n04-n06), and n07; the peer holds standby for one 2-node Full reservation at a time.
    const pm = new PlanningManager(
      cluster(7, {
        peerStandbyNodes: 2,
        node: (i) => ({ interconnect: 'InfiniBand', island: ['a', 'a', 'a', 'b', 'b', 'b', 'c'][i] }),
      }),
    );
    const full = (id: string) => ({
      ...reservation(id, 2),
      level: 'Full' as const,
      requirements: { interconnect: 'InfiniBand' },
    });
    expect(
      pm.admit({ ...reservation('C', 3), requirements: { interconnect: 'InfiniBand' } }, T0 - hours(3)).accepted,
    ).toBe(true);
    expect(pm.admit(full('A'), T0 - hours(3)).accepted).toBe(true);
    expect(pm.admit(reservation('B', 1), T0 - hours(3)).accepted).toBe(true);
    const freed = [...nodesOf(pm, 'C', T0)];
    pm.release('C');
    const [spare] = pm.job('A')?.segments[0]?.spare as [string];
    pm.nodeFailed(spare, T0 - hours(2));
    const [lost] = nodesOf(pm, 'A', T0) as [string];
    expect(pm.nodeFailed(lost, T0 - hours(1)).problematic).toEqual([]);
    const moved = pm.job('A')?.segments[0];
    expect([...(moved?.nodes ?? []), ...(moved?.spare ?? [])].sort()).toEqual(freed.sort());
    // Its standby moved with it: once it is gone, another Full reservation of the window gets the peer's two nodes.
    pm.release('A');
    expect(pm.admit(full('D'), T0 - minutes(50)).accepted).toBe(true);
  });

  it('Enhanced: its spare, prepared with the other nodes, takes the failed node at once: the holder never goes short', () => {
    const pm = new PlanningManager(cluster(4));
    const enhanced = job({
      id: 'E',
      kind: 'Reservation',
      level: 'Enhanced',
      nodes: 2,
      coveredOutages: 1,
      window: { start: T0, end: T0 + hours(2) },
      runtimeSeconds: 7200,
    });
    expect(pm.admit(enhanced, ahead).accepted).toBe(true);
    expectSpareTakesOver(pm, 'E');
  });

  it('reservationSpareNodes: a Legacy reservation books a prepared spare where one is free, which takes a failed node at once', () => {
    const pm = new PlanningManager(cluster(3, { timing: { reservationSpareNodes: 1 } }));
    expect(pm.admit(reservation('A', 2), ahead).accepted).toBe(true);
    expect(pm.job('A')?.segments[0]?.spare).toHaveLength(1);
    expectSpareTakesOver(pm, 'A');
  });

  it('reservationSpareNodes: with no node free for the spare, the reservation is admitted without one, and another may still fit', () => {
    const pm = new PlanningManager(cluster(3, { timing: { reservationSpareNodes: 1 } }));
    expect(pm.admit(reservation('A', 3), ahead).accepted).toBe(true);
    expect(pm.job('A')?.segments[0]?.spare).toEqual([]);
    const other = new PlanningManager(cluster(3, { timing: { reservationSpareNodes: 1 } }));
    expect(other.admit(reservation('A', 2), ahead).accepted).toBe(true);
    // A's spare is a booking like its nodes: the third node is not free for B in the window.
    expect(other.admit(reservation('B', 1), ahead).accepted).toBe(false);
  });

  it('reservationSpareNodes: a failed spare is replaced by a free node, so a later failure still finds one', () => {
    const pm = new PlanningManager(cluster(4, { timing: { reservationSpareNodes: 1 } }));
    expect(pm.admit(reservation('A', 2), ahead).accepted).toBe(true);
    const [lostSpare] = pm.job('A')?.segments[0]?.spare as [string];
    expect(pm.nodeFailed(lostSpare, T0 + minutes(20)).problematic).toEqual([]);
    const piece = pm.job('A')?.segments.at(-1) as Segment;
    expect(piece).toMatchObject({ start: T0 + minutes(20), continues: true });
    expect(piece.spare).toHaveLength(1);
    expect(piece.spare).not.toContain(lostSpare);
    expectSpareTakesOver(pm, 'A', minutes(40));
  });
});
