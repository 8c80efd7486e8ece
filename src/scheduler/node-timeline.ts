import type { Instant } from './model.js';

export interface NodeBooking {
  start: Instant;
  end: Instant;
  /** A job id, or `failure:NODE` while the node is out of service. */
  owner: string;
}

/**
 * The bookings of one node, sorted by start and never overlapping, so both starts and
 * ends are sorted and every question is a binary search.
 */
export class NodeTimeline {
  readonly bookings: NodeBooking[] = [];

  /** True if nothing is booked in [start, end) other than by `ignoreOwner` or by owners that would move out of the way. */
  isFree(start: Instant, end: Instant, ignoreOwner?: string, movable?: (owner: string) => boolean): boolean {
    for (let i = this.firstEndingAfter(start); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start >= end) return true;
      if (b.owner !== ignoreOwner && !movable?.(b.owner)) return false;
    }
    return true;
  }

  /** End of the last booking that ends at or before t (how tightly a new job would pack), or -Infinity. */
  freeSince(t: Instant): number {
    const i = this.firstEndingAfter(t) - 1;
    return i >= 0 ? (this.bookings[i] as NodeBooking).end : Number.NEGATIVE_INFINITY;
  }

  add(booking: NodeBooking): void {
    const i = this.firstEndingAfter(booking.start);
    const next = this.bookings[i];
    if (next && next.start < booking.end) {
      throw new Error(`node double-booked: ${booking.owner} [${booking.start}, ${booking.end}) overlaps ${next.owner} [${next.start}, ${next.end})`);
    }
    this.bookings.splice(i, 0, booking);
  }

  remove(owner: string, start: Instant): boolean {
    for (let i = this.firstEndingAfter(start); i < this.bookings.length; i++) {
      const b = this.bookings[i] as NodeBooking;
      if (b.start > start) return false;
      if (b.owner === owner && b.start === start) {
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
