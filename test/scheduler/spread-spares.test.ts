import { describe, expect, it } from 'vitest';
import type { ClusterNode, Segment } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, paper, T0 } from './support.js';

/**
 * Spare nodes stand where a failure of the nodes they stand in for is least likely to take them too: in another
 * failure group (nodes that fail together: a chassis, a power feed). Eight nodes; an Enhanced job of two nodes keeps
 * one spare.
 */
const enhanced = (id: string, extra: Partial<Parameters<typeof job>[0]> = {}) =>
  job({
    id,
    kind: 'Deadline',
    level: 'Enhanced',
    nodes: 2,
    runtimeSeconds: 3600,
    coveredOutages: 1,
    deadline: T0 + hours(3),
    ...extra,
  });
const groupOf = (pm: PlanningManager, id: string) => pm.cluster.nodes.find((n) => n.id === id)?.failureGroup as string;
const pieceOf = (pm: PlanningManager, id: string) => pm.job(id)?.segments[0] as Segment;

function site(node: (i: number) => Partial<ClusterNode>) {
  return new PlanningManager(cluster(8, { timing: paper, node }));
}

describe('spare nodes in another failure group', () => {
  it("takes the spare from a group the job's nodes are not in", () => {
    const pm = site((i) => ({ failureGroup: i < 4 ? 'g1' : 'g2' }));
    expect(pm.admit(enhanced('a'), T0).accepted).toBe(true);
    const piece = pieceOf(pm, 'a');
    expect(piece.nodes.map((n) => groupOf(pm, n))).toEqual(['g1', 'g1']);
    expect(piece.spare.map((n) => groupOf(pm, n))).toEqual(['g2']);
  });

  it('keeps a job that needs one interconnect island in it: the spare comes from another group of its island', () => {
    // Island a: n01..n03 (g1) and n08 (g2); island b: n04..n07 (g3).
    const pm = site((i) => ({
      island: i < 3 || i === 7 ? 'a' : 'b',
      interconnect: 'InfiniBand',
      failureGroup: i < 3 ? 'g1' : i === 7 ? 'g2' : 'g3',
    }));
    expect(pm.admit(enhanced('a', { requirements: { interconnect: 'InfiniBand' } }), T0).accepted).toBe(true);
    const piece = pieceOf(pm, 'a');
    expect(piece.nodes.map((n) => groupOf(pm, n))).toEqual(['g1', 'g1']);
    expect(piece.spare).toEqual(['n08']);
  });

  it('leaves the spare in the same group when no node of another is free, and the job is still admitted', () => {
    const pm = site((i) => ({ failureGroup: i < 5 ? 'g2' : 'g1' }));
    // A deadline job already runs on g2's five nodes: only g1's three are free.
    expect(pm.admit(job({ id: 'busy', kind: 'Deadline', nodes: 5, deadline: T0 + hours(4) }), T0).accepted).toBe(true);
    expect(pieceOf(pm, 'busy').nodes.every((n) => groupOf(pm, n) === 'g2')).toBe(true);
    expect(pm.admit(enhanced('a'), T0).accepted).toBe(true);
    const piece = pieceOf(pm, 'a');
    expect([...piece.nodes, ...piece.spare].map((n) => groupOf(pm, n))).toEqual(['g1', 'g1', 'g1']);
  });
});
