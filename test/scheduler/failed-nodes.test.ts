import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, T0 } from './support.js';

/**
 * Nodes out of service: a failed node is blocked for the problem horizon and renewed while it
 * stays out; the plan may use it beyond the block, but only where no node in service will do.
 */
const horizon = hours(4);

describe('nodes out of service', () => {
  it('are chosen last for work beyond their failure block, though their block ends latest', () => {
    const pm = new PlanningManager(cluster(3));
    pm.nodeFailed('n01', T0);
    const later = job({
      id: 'L',
      kind: 'Deadline',
      nodes: 2,
      runtimeSeconds: 3600,
      earliestStart: T0 + horizon + hours(1),
      deadline: T0 + hours(12),
    });
    const decision = pm.admit(later, T0 + hours(1));
    expect(decision.accepted).toBe(true);
    expect(pm.job('L')?.segments[0]?.nodes).not.toContain('n01');
  });

  it('of one group failure are all kept from the work each renewal re-plans, not only the node renewed', () => {
    const placedOn = new Map<string, string[][]>();
    class Recording extends PlanningManager {
      protected override segmentsChanged(job: PlannedJob): void {
        super.segmentsChanged(job);
        if (this.now >= T0 + horizon)
          placedOn.set(job.spec.id, [...(placedOn.get(job.spec.id) ?? []), ...job.segments.map((s) => [...s.nodes])]);
      }
    }
    const pm = new Recording(cluster(4));
    // Three nodes fail together; the fourth is busy until two hours after their blocks end.
    expect(
      pm.admit(job({ id: 'Z', kind: 'Deadline', nodes: 1, runtimeSeconds: 3600 * 6, deadline: T0 + hours(8) }), T0)
        .accepted,
    ).toBe(true);
    const [busy] = pm.job('Z')?.segments[0]?.nodes as [string];
    const down = ['n01', 'n02', 'n03', 'n04'].filter((n) => n !== busy);
    for (const node of down) pm.nodeFailed(node, T0 + hours(0.5));
    // A job planned beyond the blocks, where only the failed nodes are free.
    const y = job({
      id: 'Y',
      kind: 'Deadline',
      nodes: 1,
      runtimeSeconds: 1800,
      earliestStart: T0 + hours(4.5),
      deadline: T0 + hours(12),
    });
    expect(pm.admit(y, T0 + hours(1)).accepted).toBe(true);
    expect(down).toContain(pm.job('Y')?.segments[0]?.nodes[0]);
    // The blocks end with the nodes still out: each is renewed in turn, and Y never lands on one of them.
    pm.advance(T0 + hours(4.5));
    expect(placedOn.get('Y')?.length).toBeGreaterThan(0);
    for (const nodes of placedOn.get('Y') ?? []) for (const node of nodes) expect(down).not.toContain(node);
    expect(pm.job('Y')?.segments[0]?.nodes).toEqual([busy]);
  });
});
