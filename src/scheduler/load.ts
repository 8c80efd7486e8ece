import type { MachineManager } from './machine-manager.js';
import type { ClusterDescription, Instant } from './model.js';

/**
 * The plan's load over [start, end): the share of the SLA capacity (nodes that are not
 * buffer nodes, over the period) that firm bookings take, leaving out the bookings of
 * `excluding` (the request being priced, a hold or agreement it replaces). Waiting
 * best-effort work gives way to SLA jobs, so it is not demand for them. Demand pricing
 * (src/domain/pricing.ts) reads its price factor from this.
 */
export function firmLoad(
  cluster: ClusterDescription,
  mm: MachineManager,
  start: Instant,
  end: Instant,
  excluding: readonly string[] = [],
): number {
  const capacity = slaNodeCount(cluster) * (end - start);
  if (!(capacity > 0)) return 0;
  let area = mm.firmProfile.busyArea(start, end);
  for (const owner of excluding) {
    if (mm.isSoft(owner)) continue;
    for (const b of mm.bookingsOf(owner)) area -= Math.max(0, Math.min(b.end, end) - Math.max(b.start, start));
  }
  return Math.min(1, Math.max(0, area / capacity));
}

/**
 * Nodes that are not buffer nodes, counted once per cluster description (every quote asks, and a cluster has
 * thousands).
 */
const slaNodes = new WeakMap<ClusterDescription['nodes'], number>();
function slaNodeCount(cluster: ClusterDescription): number {
  let count = slaNodes.get(cluster.nodes);
  if (count === undefined) {
    count = cluster.nodes.filter((n) => !n.buffer).length;
    slaNodes.set(cluster.nodes, count);
  }
  return count;
}
