import type { ClusterNode, Instant } from './model.js';

const dayMs = 86_400_000;

/** Failures of one group this close to the first of them are one event (a switch, a power feed, a rack). */
const eventWindowMs = 60_000;

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
  /** Failure events: the group's failures, those close together counted once. */
  events: number;
  /** Nodes a failure event of the group takes on average (1 until it has seen one). */
  meanEventSize: number;
}

/** One failure event: the nodes it took so far. */
interface FailureEvent {
  size: number;
}

/** What one failure group has seen. */
class GroupRecord {
  members = 0;
  failures = 0;
  events = 0;
  /** How many events took each number of nodes. */
  readonly eventsBySize = new Map<number, number>();
  private eventStart = Number.NEGATIVE_INFINITY;
  private event: FailureEvent = { size: 0 };

  constructor(readonly name: string) {}

  /** A node of the group failed at `now`: the event it belongs to. */
  failed(now: Instant): FailureEvent {
    this.failures++;
    if (now - this.eventStart > eventWindowMs) {
      this.events++;
      this.eventStart = now;
      this.event = { size: 0 };
    } else {
      this.count(this.event.size, -1);
    }
    this.event.size++;
    this.count(this.event.size, 1);
    return this.event;
  }

  private count(size: number, change: number): void {
    const left = (this.eventsBySize.get(size) ?? 0) + change;
    if (left === 0) this.eventsBySize.delete(size);
    else this.eventsBySize.set(size, left);
  }

  get meanEventSize(): number {
    return this.events === 0 ? 1 : this.failures / this.events;
  }

  /**
   * Over its events, min(nodes of the group, share x nodes the event took): an event counts whole (the group's
   * nodes) when it surely hits `share` nodes a job holds there, else as the nodes it may hit (a union bound).
   */
  eventsHitting(share: number): number {
    let hits = 0;
    for (const [size, events] of this.eventsBySize) hits += events * Math.min(this.members, share * size);
    return hits;
  }
}

/**
 * The failure rate the site observes, per node and day and per failure group: the configured
 * rate as a prior worth `priorNodeDays` of observation of the whole cluster (each group its
 * share, by its nodes), and the failures each group's nodes had over the node-days since the
 * plan began (a Gamma-Poisson estimate: (prior x weight + failures) / (weight + node-days)).
 * With few node-days behind it a group's estimate is the prior; with many, what its nodes did.
 * Because every group's weight is its share, the cluster-wide estimate is the node-weighted
 * mean of the groups'. Failures of a group close together are one event (`eventWindowMs`):
 * what hits a job is events, not nodes (`perNodeDayOn`).
 */
export class FailureRateEstimate {
  private since: Instant | undefined;
  private readonly groupIndexOf: Int32Array;
  private readonly records: GroupRecord[] = [];
  /** The event of each node's last failure. */
  private readonly lastEvent: Array<FailureEvent | undefined>;

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
        k = this.records.length;
        index.set(name, k);
        this.records.push(new GroupRecord(name));
      }
      (this.records[k] as GroupRecord).members++;
      return k;
    });
    this.lastEvent = new Array(nodes.length);
  }

  /** Observation begins at the first instant the plan sees. */
  begin(now: Instant): void {
    this.since ??= now;
  }

  /** Node `node` (its index in the cluster) failed. */
  failed(now: Instant, node: number): void {
    this.begin(now);
    this.lastEvent[node] = (this.records[this.groupIndexOf[node] as number] as GroupRecord).failed(now);
  }

  /** Whether node `node`'s last failure took other nodes of its group with it (so far). */
  failedWithOthers(node: number): boolean {
    return (this.lastEvent[node]?.size ?? 1) > 1;
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
    return this.records.reduce((sum, r) => sum + r.failures, 0);
  }

  /** The prior's node-days given to `nodes` nodes, undefined when it outweighs any observation. */
  private weightOf(nodes: number): number | undefined {
    return Number.isFinite(this.priorNodeDays) ? (this.priorNodeDays * nodes) / this.nodeCount : undefined;
  }

  /** Failures per node and day of `nodes` nodes that had `failures` (an infinitely weighty prior never moves). */
  private estimate(nodes: number, failures: number, now: Instant): number {
    return this.weighed(nodes, now, 1, failures);
  }

  /**
   * (prior x weight x `priorShare` + `observed`) / (weight + node-days) for `nodes` nodes: the Gamma-Poisson estimate
   * with the prior's failures counted `priorShare` times; the prior alone before any observation.
   */
  private weighed(nodes: number, now: Instant, priorShare: number, observed: number): number {
    const weight = this.weightOf(nodes);
    const total = weight === undefined ? 0 : weight + this.daysOn(nodes, now);
    if (weight === undefined || total <= 0) return this.priorPerNodeDay * priorShare;
    return (this.priorPerNodeDay * weight * priorShare + observed) / total;
  }

  /** The estimated failures per node and day at `now`, over the whole cluster. */
  perNodeDay(now: Instant): number {
    return this.estimate(this.nodeCount, this.failuresSeen(), now);
  }

  /** Each group's estimate at `now`, in the order the cluster first names them. */
  groups(now: Instant): GroupFailureRate[] {
    return this.records.map((r) => ({
      group: r.name,
      nodes: r.members,
      failures: r.failures,
      nodeDays: this.daysOn(r.members, now),
      perNodeDay: this.estimate(r.members, r.failures, now),
      events: r.events,
      meanEventSize: r.meanEventSize,
    }));
  }

  /** Per group, how many of `nodes` (indexes in the cluster) it holds: what `perNodeDayOn` weighs by. */
  countByGroup(nodes: readonly number[]): Int32Array {
    const counts = new Int32Array(this.records.length);
    for (const n of nodes) {
      const k = this.groupIndexOf[n] as number;
      counts[k] = (counts[k] as number) + 1;
    }
    return counts;
  }

  /**
   * The failures per node and day that, times `jobNodes`, give how often failures hit a job of
   * `jobNodes` nodes drawn from those `countByGroup` counted (in proportion to them). An event
   * that takes `s` of a group's `G` nodes hits the job's `k` nodes there with a chance of at
   * most k x s / G, so it counts min(G, k x s) / G events where a per-node rate counted k x s
   * failures: the same when nodes fail alone (and for the prior, taken as such), once for an
   * event that takes the group whole, not k times.
   */
  perNodeDayOn(counts: Int32Array, jobNodes: number, now: Instant): number {
    const eligible = counts.reduce((sum, count) => sum + count, 0);
    if (eligible === 0 || jobNodes <= 0) return this.perNodeDay(now);
    let hits = 0;
    counts.forEach((count, k) => {
      if (count === 0) return;
      const record = this.records[k] as GroupRecord;
      const share = (jobNodes * count) / eligible;
      hits += this.weighed(record.members, now, share, record.eventsHitting(share));
    });
    return hits / jobNodes;
  }
}
