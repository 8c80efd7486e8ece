import type { Instant } from './model.js';

export interface NodeBooking {
  start: Instant;
  end: Instant;
  /** A job id, or `failure:NODE` while the node is out of service. */
  owner: string;
  /** The owner gives way to SLA jobs (a waiting best-effort job); kept by the Machine Manager. */
  soft?: boolean;
}

/** Bookings a search looks past: the job being replaced, owners that would move, soft bookings. */
export interface Passable {
  ignoreOwner?: string;
  movable?: (owner: string) => boolean;
  soft?: boolean;
}

/** Questions a changed node answers by scanning before it rebuilds its gap index (a rebuild costs several scans). */
const SCANS_BEFORE_INDEX = 4;

interface GapIndex {
  valid: boolean;
  /** Ends at [0, size), starts at [size, 2 size), the max-tree at 2 size + v for v in [1, 2 size); the last booking's gap is infinite. */
  buf: Float64Array;
  size: number;
  count: number;
  /** The last position asked for (searches ask many nodes about the same instant). */
  lastT: number;
  lastLo: number;
}

function emptyGapIndex(): GapIndex {
  return { valid: false, buf: new Float64Array(0), size: 1, count: 0, lastT: Number.NaN, lastLo: 0 };
}

/** Index of the first booking of the index that ends after t. */
function firstEndAfter(index: GapIndex, t: Instant): number {
  if (index.lastT === t) return index.lastLo;
  const { buf, count } = index;
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((buf[mid] as number) <= t) lo = mid + 1;
    else hi = mid;
  }
  index.lastT = t;
  index.lastLo = lo;
  return lo;
}

/**
 * The bookings of one node, sorted by start and never overlapping, so both starts and
 * ends are sorted and every question is a binary search.
 */
export class NodeTimeline {
  readonly bookings: NodeBooking[] = [];

  /** True if nothing is booked in [start, end) other than by `ignoreOwner` or by owners that would move out of the way. */
  isFree(start: Instant, end: Instant, ignoreOwner?: string, movable?: (owner: string) => boolean, soft = false): boolean {
    if (ignoreOwner === undefined && movable === undefined) return end <= start || this.earliestGap(start, end - start, soft) === start;
    for (let i = this.firstEndingAfter(start); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start >= end) return true;
      if (b.owner !== ignoreOwner && !movable?.(b.owner)) return false;
    }
    return true;
  }

  /**
   * The earliest instant >= t from which the node is free for `duration` (bookings of
   * `ignoreOwner` and movable owners do not count). Scanning stops once the answer is
   * past `limit` (any instant after it is as good to a caller that cannot use it) or after
   * `budget` bookings in the way; the answer is then a lower bound, and never `t` itself:
   * `t` comes back only when the node is free from `t` for `duration`.
   */
  earliestFree(t: Instant, duration: number, pass: Passable = {}, limit = Number.POSITIVE_INFINITY, budget = Number.POSITIVE_INFINITY): Instant {
    if (pass.ignoreOwner === undefined && pass.movable === undefined) return this.earliestGap(t, duration, pass.soft === true);
    let candidate = t;
    let left = budget;
    for (let i = this.firstEndingAfter(t); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start >= candidate + duration || candidate > limit || left <= 0) return candidate;
      if ((pass.soft && b.soft) || b.owner === pass.ignoreOwner || pass.movable?.(b.owner)) continue;
      candidate = b.end; // starts and ends are sorted: this booking ends after the candidate
      left--;
    }
    return candidate;
  }

  /** End of the last booking that ends at or before t (how tightly a new job would pack), or -Infinity. */
  freeSince(t: Instant): number {
    if (!this.gapsAll.valid) {
      const i = this.firstEndingAfter(t) - 1;
      return i >= 0 ? (this.bookings[i] as NodeBooking).end : Number.NEGATIVE_INFINITY;
    }
    const lo = firstEndAfter(this.gapsAll, t);
    return lo > 0 ? (this.gapsAll.buf[lo - 1] as number) : Number.NEGATIVE_INFINITY;
  }

  /**
   * earliestFree through the gap index: exact, in O(log n) once the index is built (it is
   * rebuilt, in O(n), once a changed node is asked often enough).
   */
  private earliestGap(t: Instant, duration: number, firmOnly: boolean): Instant {
    const variant = firmOnly && this.softCount > 0 ? this.gapsFirm : this.gapsAll;
    if (!variant.valid && this.uncached++ < SCANS_BEFORE_INDEX) {
      // Just changed: a scan costs less than rebuilding the index, until the node is asked often.
      let candidate = t;
      for (let i = this.firstEndingAfter(t); i < this.bookings.length; i++) {
        const b = this.bookings[i] as NodeBooking;
        if (b.start >= candidate + duration) return candidate;
        if (firmOnly && b.soft) continue;
        candidate = b.end;
      }
      return candidate;
    }
    const gaps = this.gapIndex(firmOnly);
    const { buf, size, count } = gaps;
    const lo = firstEndAfter(gaps, t);
    if (lo >= count || (buf[size + lo] as number) >= t + duration) return t;
    // The first gap of `duration` after a booking from `lo` on (after the last one everything is free).
    const tree = 2 * size;
    let v = size + lo;
    if ((buf[tree + v] as number) < duration) {
      for (;;) {
        while (v & 1) v >>>= 1; // climb while a right child
        if (v <= 1) return buf[count - 1] as number; // unreachable: the last gap is infinite
        v += 1;
        if ((buf[tree + v] as number) >= duration) break;
      }
      while (v < size) {
        v <<= 1;
        if ((buf[tree + v] as number) < duration) v |= 1;
      }
    }
    return buf[v - size] as number;
  }

  /**
   * Per variant (all bookings; firm ones only): ends, starts and a max-tree over the gap
   * after each booking in one buffer (kept between rebuilds).
   */
  private readonly gapsAll: GapIndex = emptyGapIndex();
  private readonly gapsFirm: GapIndex = emptyGapIndex();
  private softCount = 0;

  private gapIndex(firmOnly: boolean): GapIndex {
    if (firmOnly && this.softCount === 0) return this.gapIndex(false);
    const index = firmOnly ? this.gapsFirm : this.gapsAll;
    if (index.valid) return index;
    const count = firmOnly ? this.bookings.length - this.softCount : this.bookings.length;
    let size = 1;
    while (size < count) size <<= 1;
    if (index.buf.length < 4 * size) index.buf = new Float64Array(8 * size);
    const buf = index.buf;
    let j = 0;
    for (const b of this.bookings) {
      if (firmOnly && b.soft) continue;
      buf[j] = b.end;
      buf[size + j] = b.start;
      j++;
    }
    const tree = 2 * size;
    for (j = 0; j < size; j++) buf[tree + size + j] = j + 1 < count ? (buf[size + j + 1] as number) - (buf[j] as number) : j + 1 === count ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    for (let v = size - 1; v >= 1; v--) buf[tree + v] = Math.max(buf[tree + 2 * v] as number, buf[tree + 2 * v + 1] as number);
    index.size = size;
    index.count = count;
    index.lastT = Number.NaN;
    index.valid = true;
    return index;
  }

  /** Questions answered by scanning since the last change. */
  private uncached = 0;

  /** The gap index is rebuilt when the node is asked often enough after a change. */
  private changed(): void {
    this.uncached = 0;
    this.gapsAll.valid = false;
    this.gapsFirm.valid = false;
  }

  add(booking: NodeBooking): void {
    this.changed();
    const i = this.firstEndingAfter(booking.start);
    const next = this.bookings[i];
    if (next && next.start < booking.end) {
      throw new Error(`node double-booked: ${booking.owner} [${booking.start}, ${booking.end}) overlaps ${next.owner} [${next.start}, ${next.end})`);
    }
    this.bookings.splice(i, 0, booking);
    if (booking.soft) this.softCount++;
  }

  /** Marks the owner's booking that starts at `start` soft or firm. */
  setSoft(owner: string, start: Instant, soft: boolean): void {
    for (let i = this.firstEndingAfter(start); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start > start) return;
      if (b.owner === owner && b.start === start) {
        this.changed();
        if (soft !== (b.soft === true)) this.softCount += soft ? 1 : -1;
        b.soft = soft; // set, never deleted: bookings keep one shape
        return;
      }
    }
  }

  remove(owner: string, start: Instant): boolean {
    for (let i = this.firstEndingAfter(start); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start > start) return false;
      if (b.owner === owner && b.start === start) {
        this.changed();
        if (b.soft) this.softCount--;
        this.bookings.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  /** Bookings overlapping [start, end). */
  overlapping(start: Instant, end: Instant): NodeBooking[] {
    const out: NodeBooking[] = [];
    for (let i = this.firstEndingAfter(start); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start >= end) break;
      out.push(b);
    }
    return out;
  }

  /** Index of the first booking with end > t. */
  private firstEndingAfter(t: Instant): number {
    let lo = 0;
    let hi = this.bookings.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.bookings[mid] as NodeBooking).end <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
