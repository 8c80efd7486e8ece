import type { ClusterNode, Instant } from './model.js';

const dayMs = 86_400_000;

/** A node's failure group: its `failureGroup`, else its island, else the one group of the whole cluster. */
export function failureGroupOf(node: ClusterNode): string {
  return node.failureGroup ?? node.island ?? 'cluster';
}

/** One failure group's estimate at an instant. */
export interface GroupFailureRate {
  group: string;
  nodes: number;
  failures: number;
  nodeDays: number;
  perNodeDay: number;
}

/**
 * The failure rate the site observes, per node and day and per failure group: the configured
 * rate as a prior worth `priorNodeDays` of observation of the whole cluster (each group its
 * share, by its nodes), and the failures each group's nodes had over the node-days since the
 * plan began (a Gamma-Poisson estimate: (prior x weight + failures) / (weight + node-days)).
 * With few node-days behind it a group's estimate is the prior; with many, what its nodes did.
 * Because every group's weight is its share, the cluster-wide estimate is the node-weighted
 * mean of the groups'.
 */
export class FailureRateEstimate {
  private since: Instant | undefined;
  private readonly groupIndexOf: Int32Array;
  private readonly names: string[] = [];
  private readonly members: number[] = [];
  private readonly failures: number[] = [];

  constructor(
    private readonly priorPerNodeDay: number,
    private readonly priorNodeDays: number,
    nodes: readonly ClusterNode[],
  ) {
    const index = new Map<string, number>();
    this.groupIndexOf = Int32Array.from(nodes, (node) => {
      const name = failureGroupOf(node);
      let k = index.get(name);
      if (k === undefined) {
        k = this.names.length;
        index.set(name, k);
        this.names.push(name);
        this.members.push(0);
        this.failures.push(0);
      }
      this.members[k] = (this.members[k] as number) + 1;
      return k;
    });
  }

  /** Observation begins at the first instant the plan sees. */
  begin(now: Instant): void {
    this.since ??= now;
  }

  /** Node `node` (its index in the cluster) failed. */
  failed(now: Instant, node: number): void {
    this.begin(now);
    const k = this.groupIndexOf[node] as number;
    this.failures[k] = (this.failures[k] as number) + 1;
  }

  /** Node-days observed by `now` on `nodes` nodes. */
  private daysOn(nodes: number, now: Instant): number {
    return this.since === undefined ? 0 : (nodes * Math.max(0, now - this.since)) / dayMs;
  }

  private get nodeCount(): number {
    return this.groupIndexOf.length;
  }

  /** Node-days observed by `now` on the whole cluster. */
  nodeDays(now: Instant): number {
    return this.daysOn(this.nodeCount, now);
  }

  failuresSeen(): number {
    return this.failures.reduce((sum, f) => sum + f, 0);
  }

  /** Failures per node and day of `nodes` nodes that had `failures` (an infinitely weighty prior never moves). */
  private estimate(nodes: number, failures: number, now: Instant): number {
    if (!Number.isFinite(this.priorNodeDays) || nodes === 0) return this.priorPerNodeDay;
    const weight = (this.priorNodeDays * nodes) / this.nodeCount;
    const total = weight + this.daysOn(nodes, now);
    if (total <= 0) return this.priorPerNodeDay;
    return (this.priorPerNodeDay * weight + failures) / total;
  }

  /** The estimated failures per node and day at `now`, over the whole cluster. */
  perNodeDay(now: Instant): number {
    return this.estimate(this.nodeCount, this.failuresSeen(), now);
  }

  /** Each group's estimate at `now`, in the order the cluster first names them. */
  groups(now: Instant): GroupFailureRate[] {
    return this.names.map((group, k) => {
      const nodes = this.members[k] as number;
      const failures = this.failures[k] as number;
      return {
        group,
        nodes,
        failures,
        nodeDays: this.daysOn(nodes, now),
        perNodeDay: this.estimate(nodes, failures, now),
      };
    });
  }

  /** Per group, how many of `nodes` (indexes in the cluster) it holds: what `perNodeDayOn` weighs by. */
  countByGroup(nodes: readonly number[]): Int32Array {
    const counts = new Int32Array(this.names.length);
    for (const n of nodes) {
      const k = this.groupIndexOf[n] as number;
      counts[k] = (counts[k] as number) + 1;
    }
    return counts;
  }

  /** The rate of a node drawn from those `countByGroup` counted: the groups' estimates weighed by their nodes there. */
  perNodeDayOn(counts: Int32Array, now: Instant): number {
    let nodes = 0;
    let sum = 0;
    counts.forEach((count, k) => {
      if (count === 0) return;
      nodes += count;
      sum += count * this.estimate(this.members[k] as number, this.failures[k] as number, now);
    });
    return nodes === 0 ? this.perNodeDay(now) : sum / nodes;
  }
}
