import type { Instant } from './model.js';
import type { RepairInstants } from './node-standing.js';

const dayMs = 86_400_000;
/** The test's level: recently repaired nodes are chosen last once chance explains their failures less often. */
const significance = 0.05;
/** Fewer failures after a repair are a coincidence whatever the test says: one early failure proves nothing. */
const fewestFailures = 3;

/** How nodes repaired recently have failed, against the others. */
export interface RecentRepairRate {
  /** How long after its repair a node counts as repaired recently. */
  hours: number;
  /** Failures of nodes within that time of their repair, and the node-days they spent there. */
  failures: number;
  nodeDays: number;
  perNodeDay: number;
  /** The same for the other nodes in service (settled, or never repaired while the plan ran). */
  othersFailures: number;
  othersNodeDays: number;
  othersPerNodeDay: number;
  /** Whether the difference is more than chance, so nodes repaired recently are chosen last. */
  chosenLast: boolean;
}

/**
 * Whether nodes fail again soon after a repair. Failure gaps are often Weibull with a shape
 * below one (Schroeder and Gibson 2006): a node's hazard is highest just after its repair and
 * falls with the time it has run since. The planner counts apart the failures of nodes within
 * `hours` of their repair and the node-days spent there, and chooses those nodes last once
 * there are three such failures or more and they are more than chance at the others' rate (a
 * one-sided Poisson test at 5 %).
 * Where failures come at one rate whatever a node's age, the test stays quiet and nothing
 * changes; nodes never repaired while the plan ran count as settled.
 */
export class RecentRepairs implements RepairInstants {
  private since: Instant | undefined;
  /** Each node's last repair: NaN when it was not repaired since the plan began, or is out of service. */
  readonly repairedAt: Float64Array;
  lastRepair = Number.NEGATIVE_INFINITY;
  private readonly failedAt: Float64Array;
  private freshMsClosed = 0;
  private downMsClosed = 0;
  private freshFailures = 0;
  private otherFailures = 0;

  constructor(
    private readonly nodes: number,
    readonly settleMs: number,
  ) {
    this.repairedAt = new Float64Array(nodes).fill(Number.NaN);
    this.failedAt = new Float64Array(nodes).fill(Number.NaN);
  }

  /** Observation begins at the first instant the plan sees. */
  begin(now: Instant): void {
    this.since ??= now;
  }

  /** Node `node` (its index in the cluster) failed at `now`. */
  failed(now: Instant, node: number): void {
    this.begin(now);
    if (!Number.isNaN(this.failedAt[node] as number)) return;
    const age = now - (this.repairedAt[node] as number);
    if (age < this.settleMs) {
      this.freshFailures++;
      this.freshMsClosed += age;
    } else {
      this.otherFailures++;
      if (!Number.isNaN(age)) this.freshMsClosed += this.settleMs;
    }
    this.repairedAt[node] = Number.NaN;
    this.failedAt[node] = now;
  }

  /** Node `node` is back in service at `now`. */
  repaired(now: Instant, node: number): void {
    this.begin(now);
    const failedAt = this.failedAt[node] as number;
    if (Number.isNaN(failedAt)) return;
    this.downMsClosed += now - failedAt;
    this.failedAt[node] = Number.NaN;
    this.repairedAt[node] = now;
    this.lastRepair = Math.max(this.lastRepair, now);
  }

  /** The node-milliseconds spent repaired recently, and out of service, by `now`. */
  private exposure(now: Instant): { fresh: number; down: number } {
    let fresh = this.freshMsClosed;
    let down = this.downMsClosed;
    for (let node = 0; node < this.nodes; node++) {
      const repaired = this.repairedAt[node] as number;
      if (!Number.isNaN(repaired)) fresh += Math.min(this.settleMs, Math.max(0, now - repaired));
      const failed = this.failedAt[node] as number;
      if (!Number.isNaN(failed)) down += Math.max(0, now - failed);
    }
    return { fresh, down };
  }

  rate(now: Instant): RecentRepairRate {
    const { fresh, down } = this.exposure(now);
    const total = this.since === undefined ? 0 : this.nodes * Math.max(0, now - this.since);
    const nodeDays = fresh / dayMs;
    const othersNodeDays = Math.max(0, total - fresh - down) / dayMs;
    const othersPerNodeDay = othersNodeDays > 0 ? this.otherFailures / othersNodeDays : 0;
    const expected = othersPerNodeDay * nodeDays;
    return {
      hours: this.settleMs / 3_600_000,
      failures: this.freshFailures,
      nodeDays,
      perNodeDay: nodeDays > 0 ? this.freshFailures / nodeDays : 0,
      othersFailures: this.otherFailures,
      othersNodeDays,
      othersPerNodeDay,
      chosenLast:
        this.settleMs > 0 &&
        this.freshFailures >= fewestFailures &&
        poissonAtLeast(this.freshFailures, expected) < significance,
    };
  }
}

/** P(X >= k) for X Poisson with mean `mean`. */
export function poissonAtLeast(k: number, mean: number): number {
  if (k <= 0) return 1;
  if (mean <= 0) return 0;
  let term = Math.exp(-mean);
  let below = term;
  for (let i = 1; i < k; i++) {
    term *= mean / i;
    below += term;
  }
  return Math.max(0, 1 - below);
}
