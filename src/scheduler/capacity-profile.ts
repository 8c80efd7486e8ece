import type { Instant } from './model.js';

/**
 * The Planning Manager's hardware-independent view: how many nodes are busy at each
 * instant, as a step function. `used[i]` holds over [times[i], times[i+1]); zero before
 * the first breakpoint and after the last. Finding where `k` nodes are free for a
 * duration is one forward scan from the first breakpoint at or before the start
 * (binary search), so admission costs O(log n + breakpoints scanned).
 */
export class CapacityProfile {
  private readonly times: number[] = [];
  private readonly used: number[] = [];

  /** Adds `delta` busy nodes over [start, end). */
  add(start: Instant, end: Instant, delta: number): void {
    if (end <= start || delta === 0) return;
    const i = this.breakpoint(start);
    const j = this.breakpoint(end);
    for (let k = i; k < j; k++) this.used[k] = (this.used[k] as number) + delta;
    // Drop breakpoints that no longer change the count, so releases do not leave clutter.
    this.merge(j);
    this.merge(i);
  }

  /** Busy nodes at instant t. */
  at(t: Instant): number {
    const i = this.indexAtOrBefore(t);
    return i < 0 ? 0 : (this.used[i] as number);
  }

  /** Most busy nodes at any instant of [start, end). */
  maxOver(start: Instant, end: Instant): number {
    let i = this.indexAtOrBefore(start);
    let peak = i < 0 ? 0 : (this.used[i] as number);
    for (i = i + 1; i < this.times.length && (this.times[i] as number) < end; i++) peak = Math.max(peak, this.used[i] as number);
    return peak;
  }

  /**
   * The earliest t >= from such that at most `maxUsed` nodes are busy throughout
   * [t, t + duration). Candidates are `from` and breakpoints (where nodes become free).
   */
  firstFit(from: Instant, duration: number, maxUsed: number): Instant {
    let i = this.indexAtOrBefore(from);
    let candidate = from;
    if (i >= 0 && (this.used[i] as number) > maxUsed) candidate = Number.NaN;
    for (i = i + 1; i < this.times.length; i++) {
      const t = this.times[i] as number;
      if (!Number.isNaN(candidate) && t >= candidate + duration) return candidate;
      if ((this.used[i] as number) > maxUsed) candidate = Number.NaN;
      else if (Number.isNaN(candidate)) candidate = t;
    }
    // After the last breakpoint nothing is busy.
    return Number.isNaN(candidate) ? (this.times[this.times.length - 1] as number) : candidate;
  }

  /** The first breakpoint strictly after t (where the count changes), or undefined. */
  nextChangeAfter(t: Instant): Instant | undefined {
    const i = this.indexAtOrBefore(t) + 1;
    return i < this.times.length ? this.times[i] : undefined;
  }

  /** The first breakpoint strictly after t where the count drops (a booking ends), or undefined. */
  nextReleaseAfter(t: Instant): Instant | undefined {
    for (let i = this.indexAtOrBefore(t) + 1; i < this.times.length; i++) {
      if ((this.used[i] as number) < (i > 0 ? (this.used[i - 1] as number) : 0)) return this.times[i];
    }
    return undefined;
  }

  /**
   * Maximal intervals inside [from, until) where at most `maxUsed` nodes are busy:
   * the gaps a piece of a job may use (partial execution, 002 section 3.5.3).
   */
  windows(from: Instant, until: Instant, maxUsed: number): Array<{ start: Instant; end: Instant }> {
    const out: Array<{ start: Instant; end: Instant }> = [];
    let i = this.indexAtOrBefore(from);
    let open: Instant | undefined = i < 0 || (this.used[i] as number) <= maxUsed ? from : undefined;
    for (i = i + 1; i < this.times.length && (this.times[i] as number) < until; i++) {
      const t = this.times[i] as number;
      const free = (this.used[i] as number) <= maxUsed;
      if (free && open === undefined) open = t;
      if (!free && open !== undefined) {
        if (t > open) out.push({ start: open, end: t });
        open = undefined;
      }
    }
    if (open !== undefined && until > open) out.push({ start: open, end: until });
    return out;
  }

  get size(): number {
    return this.times.length;
  }

  /** Index of the last breakpoint at or before t; -1 if none. */
  private indexAtOrBefore(t: Instant): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** Ensures a breakpoint at t and returns its index. */
  private breakpoint(t: Instant): number {
    const i = this.indexAtOrBefore(t);
    if (i >= 0 && this.times[i] === t) return i;
    const before = i >= 0 ? (this.used[i] as number) : 0;
    this.times.splice(i + 1, 0, t);
    this.used.splice(i + 1, 0, before);
    return i + 1;
  }

  private merge(i: number): void {
    if (i < 0 || i >= this.times.length) return;
    const before = i > 0 ? (this.used[i - 1] as number) : 0;
    if (this.used[i] === before) {
      this.times.splice(i, 1);
      this.used.splice(i, 1);
    }
  }
}
