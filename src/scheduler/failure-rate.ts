import type { Instant } from './model.js';

const dayMs = 86_400_000;

/**
 * The failure rate the site observes, per node and day: the configured rate as a prior worth
 * `priorNodeDays` of observation, and the failures seen over the node-days since the plan
 * began (a Gamma-Poisson estimate: (prior x weight + failures) / (weight + node-days)). With
 * few node-days behind it the estimate is the prior; with many, what the nodes did.
 */
export class FailureRateEstimate {
  private failures = 0;
  private since: Instant | undefined;

  constructor(
    private readonly priorPerNodeDay: number,
    private readonly priorNodeDays: number,
    private readonly nodes: number,
  ) {}

  /** Observation begins at the first instant the plan sees. */
  begin(now: Instant): void {
    this.since ??= now;
  }

  /** A node failed. */
  failed(now: Instant): void {
    this.begin(now);
    this.failures += 1;
  }

  /** Node-days observed by `now`. */
  nodeDays(now: Instant): number {
    return this.since === undefined ? 0 : (this.nodes * Math.max(0, now - this.since)) / dayMs;
  }

  failuresSeen(): number {
    return this.failures;
  }

  /** The estimated failures per node and day at `now` (a prior worth infinitely many node-days never moves). */
  perNodeDay(now: Instant): number {
    if (!Number.isFinite(this.priorNodeDays)) return this.priorPerNodeDay;
    const weight = this.priorNodeDays + this.nodeDays(now);
    if (weight <= 0) return this.priorPerNodeDay;
    return (this.priorPerNodeDay * this.priorNodeDays + this.failures) / weight;
  }
}
