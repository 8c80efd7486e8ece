import type { Instant } from './model.js';

export interface NodeBooking {
  start: Instant;
  end: Instant;
  /** A job id, or `failure:NODE` while the node is out of service. */
  owner: string;
  /** The owner gives way to SLA jobs (a waiting best-effort job); kept by the Machine Manager. */
  soft?: boolean;
}

/**
 * Where the hot lookups leave an instant for a wrapper to return: a number returned from a
 * call that is not inlined is boxed (an allocation), and searches ask for every node, so
 * they use the `...Into` forms and pass their own arrays.
 */
const answer = new Float64Array(1);
const ignored = new Float64Array(1);

/** Bookings a search looks past: the job being replaced, owners that would move, soft bookings. */
export interface Passable {
  ignoreOwner?: string;
  movable?: (owner: string) => boolean;
  soft?: boolean;
}

/**
 * The bookings of one node, sorted by start and never overlapping, so both starts and
 * ends are sorted. The question searches ask most, where the next free stretch of some
 * length begins, is answered from a gap index over all bookings and one over the firm
 * ones (soft bookings give way to SLA jobs): two binary searches, then chunk summaries
 * skip stretches without a long enough gap.
 */
export class NodeTimeline {
  private readonly all = new GapList();
  private readonly firm = new GapList();

  /** All bookings in order (for inspection; searches use the index). */
  get bookings(): NodeBooking[] {
    return this.all.toArray();
  }

  /**
   * True if nothing is booked in [start, end) other than by `ignoreOwner`, owners that would move out of the way, or
   * (with `soft`) soft bookings.
   */
  isFree(
    start: Instant,
    end: Instant,
    ignoreOwner?: string,
    movable?: (owner: string) => boolean,
    soft = false,
  ): boolean {
    if (end <= start) return true;
    if (ignoreOwner === undefined && movable === undefined)
      return (soft ? this.firm : this.all).isFreeFor(start, end - start);
    const list = this.all;
    for (let i = list.locate(start), n = list.count; i < n; i++) {
      const b = list.item(i);
      if (b.start >= end) return true;
      if (b.owner !== ignoreOwner && !movable?.(b.owner) && !(soft && b.soft)) return false;
    }
    return true;
  }

  /**
   * The earliest instant >= t from which the node is free for `duration` (bookings of
   * `ignoreOwner`, movable owners and, with `soft`, soft bookings do not count). With an
   * owner to ignore or a movable test, scanning stops once the answer is past `limit`
   * (any instant after it is as good to a caller that cannot use it) or after `budget`
   * bookings in the way; the answer is then a lower bound, and never `t` itself: `t`
   * comes back only when the node is free from `t` for `duration`.
   */
  earliestFree(
    t: Instant,
    duration: number,
    pass: Passable = {},
    limit = Number.POSITIVE_INFINITY,
    budget = Number.POSITIVE_INFINITY,
  ): Instant {
    this.earliestFreeInto(t, duration, pass, limit, budget, answer, ignored, 0);
    return answer[0] as number;
  }

  /**
   * `earliestFree`, written to out[at]; latest[at] receives the latest start in that same
   * free stretch (any start from out[at] to it is free for `duration` too), or -Infinity
   * when the answer comes from a scan past an owner and is only a lower bound.
   */
  earliestFreeInto(
    t: Instant,
    duration: number,
    pass: Passable,
    limit: number,
    budget: number,
    out: Float64Array,
    latest: Float64Array,
    at: number,
  ): void {
    if (pass.ignoreOwner === undefined && pass.movable === undefined) {
      (pass.soft ? this.firm : this.all).earliestGapInto(t, duration, out, latest, at);
      return;
    }
    out[at] = this.scanPast(t, duration, pass, limit, budget);
    latest[at] = Number.NEGATIVE_INFINITY;
  }

  /** earliestFree with an owner to look past: a scan of the bookings in the way, up to `limit` and `budget`. */
  private scanPast(t: Instant, duration: number, pass: Passable, limit: number, budget: number): Instant {
    let candidate = t;
    let left = budget;
    const list = this.all;
    for (let i = list.locate(t), n = list.count; i < n; i++) {
      const b = list.item(i);
      if (b.start >= candidate + duration || candidate > limit || left <= 0) return candidate;
      if ((pass.soft && b.soft) || b.owner === pass.ignoreOwner || pass.movable?.(b.owner)) continue;
      candidate = b.end; // starts and ends are sorted: this booking ends after the candidate
      left--;
    }
    return candidate;
  }

  /** End of the node's last booking (free for good from there), or -Infinity with none. */
  get lastEnd(): number {
    const n = this.all.count;
    return n === 0 ? Number.NEGATIVE_INFINITY : this.all.item(n - 1).end;
  }

  /** End of the last booking that ends at or before t (how tightly a new job would pack), or -Infinity. */
  freeSince(t: Instant): number {
    this.all.endBeforeInto(t, answer, ignored, 0);
    return answer[0] as number;
  }

  /**
   * `freeSince`, written to out[at]; until[at] receives the first instant after t where it changes (the next booking's
   * end).
   */
  freeSinceInto(t: Instant, out: Float64Array, until: Float64Array, at: number): void {
    this.all.endBeforeInto(t, out, until, at);
  }

  add(booking: NodeBooking): void {
    const next = this.all.firstEndingAfter(booking.start);
    if (next && next.start < booking.end) {
      throw new Error(
        `node double-booked: ${booking.owner} [${booking.start}, ${booking.end}) overlaps ${next.owner} [` +
          `${next.start}, ${next.end})`,
      );
    }
    this.all.insert(booking);
    if (!booking.soft) this.firm.insert(booking);
  }

  /** Marks the owner's booking that starts at `start` soft or firm. */
  setSoft(owner: string, start: Instant, soft: boolean): void {
    const b = this.all.find(owner, start);
    if (!b || (b.soft === true) === soft) return;
    if (soft) this.firm.remove(owner, start);
    b.soft = soft; // set, never deleted: bookings keep one shape
    if (!soft) this.firm.insert(b);
  }

  remove(owner: string, start: Instant): boolean {
    const b = this.all.find(owner, start);
    if (!b) return false;
    this.all.remove(owner, start);
    if (!b.soft) this.firm.remove(owner, start);
    return true;
  }

  /**
   * Moves the end of the owner's booking that starts at `start` (a job cut short, or put
   * back as it was by a rollback); the caller keeps it clear of the next booking.
   * False if there is no such booking.
   */
  setEnd(owner: string, start: Instant, end: Instant): boolean {
    const b = this.all.find(owner, start);
    if (!b) return false;
    b.end = end;
    this.all.endChanged(start, end);
    if (!b.soft) this.firm.endChanged(start, end);
    return true;
  }

  /**
   * Where the node's free stretch from `t` ends if bookings that `passable` accepts make way: `t` when any
   * booking holds the node at `t`, else the start of the first later booking that does not make way, or +Infinity.
   */
  freeUntil(t: Instant, passable: (b: NodeBooking) => boolean): Instant {
    const list = this.all;
    for (let i = list.locate(t), n = list.count; i < n; i++) {
      const b = list.item(i);
      if (b.start <= t) return t;
      if (!passable(b)) return b.start;
    }
    return Number.POSITIVE_INFINITY;
  }

  /** Bookings overlapping [start, end). */
  overlapping(start: Instant, end: Instant): NodeBooking[] {
    const out: NodeBooking[] = [];
    const list = this.all;
    for (let i = list.locate(start), n = list.count; i < n; i++) {
      const b = list.item(i);
      if (b.start >= end) return out;
      out.push(b);
    }
    return out;
  }

  /** Owners of the bookings overlapping [start, end), each once, in time order. */
  ownersOverlapping(start: Instant, end: Instant): string[] {
    const out: string[] = [];
    let seen: Set<string> | undefined; // for long answers; a short one is searched
    const list = this.all;
    for (let i = list.locate(start), n = list.count; i < n; i++) {
      const b = list.item(i);
      if (b.start >= end) break;
      if (seen) {
        if (seen.has(b.owner)) continue;
        seen.add(b.owner);
      } else if (out.includes(b.owner)) continue;
      else if (out.length === 16) seen = new Set(out).add(b.owner);
      out.push(b.owner);
    }
    return out;
  }
}

/** Bookings per chunk: a question scans at most one chunk of bookings, then chunk summaries. */
const CHUNK = 16;

/**
 * Bookings past which a change moves the entries after it with the built-in copy (shorter lists: by hand, cheaper than
 * the call).
 */
const LONG = 64;

/**
 * Sorted, non-overlapping bookings, flat: their starts and ends side by side in one typed
 * array (so a lookup touches a few cache lines, not a chain of objects), the booking
 * objects in a parallel array, and per chunk of CHUNK consecutive bookings its last end
 * and the longest gap before it (from the previous chunk's last end) or inside it. A
 * lookup is a binary search over the chunks and one inside a chunk; the first gap of
 * some length after an instant then skips whole chunks by their summaries. A booking or
 * release moves the later entries along (one memory move) and marks the gap summaries
 * from its chunk on as stale; a search recomputes a stale summary when it reads it.
 */
class GapList {
  /** Booking i is [times[2i], times[2i + 1]). */
  private times = new Float64Array(2 * CHUNK);
  private items: NodeBooking[] = [];
  private n = 0;
  private chunkLast = new Float64Array(2);
  private chunkGap = new Float64Array(2);
  /** Per chunk: 1 while its gap summary is stale. */
  private stale = new Uint8Array(2);
  /** Where `locate` found the first booking that ends after its instant (count if none). */
  at = 0;

  get count(): number {
    return this.n;
  }

  item(i: number): NodeBooking {
    return this.items[i] as NodeBooking;
  }

  toArray(): NodeBooking[] {
    return this.items.slice(0, this.n);
  }

  /**
   * Finds the first booking that ends after t (into `at`): iteration from there visits every booking that may overlap
   * [t, ...).
   */
  locate(t: Instant): number {
    const { chunkLast, times, n } = this;
    const chunks = Math.ceil(n / CHUNK);
    // The chunk: scanned when there are few (cheaper than the mispredicted branches of a binary search), else halved.
    let chunk = 0;
    if (chunks <= CHUNK) {
      while (chunk < chunks && (chunkLast[chunk] as number) <= t) chunk++;
    } else {
      let hi = chunks;
      while (chunk < hi) {
        const mid = (chunk + hi) >>> 1;
        if ((chunkLast[mid] as number) <= t) chunk = mid + 1;
        else hi = mid;
      }
    }
    if (chunk >= chunks) return (this.at = n);
    // Inside it, a scan: the ends it reads share a few cache lines.
    let i = chunk * CHUNK;
    const end = Math.min(n, i + CHUNK);
    while (i < end && (times[2 * i + 1] as number) <= t) i++;
    return (this.at = i);
  }

  /** The first booking that ends after t, or undefined. */
  firstEndingAfter(t: Instant): NodeBooking | undefined {
    const i = this.locate(t);
    return i < this.n ? this.items[i] : undefined;
  }

  /**
   * End of the last booking that ends at or before t (-Infinity if none), written to out[at], and the next end after t
   * to until[at].
   */
  endBeforeInto(t: Instant, out: Float64Array, until: Float64Array, at: number): void {
    const i = this.locate(t);
    out[at] = i > 0 ? (this.times[2 * i - 1] as number) : Number.NEGATIVE_INFINITY;
    until[at] = i < this.n ? (this.times[2 * i + 1] as number) : Number.POSITIVE_INFINITY;
  }

  /** True if nothing in the list overlaps [t, t + duration). */
  isFreeFor(t: Instant, duration: number): boolean {
    const i = this.locate(t);
    return i >= this.n || (this.times[2 * i] as number) >= t + duration;
  }

  /**
   * The earliest instant >= t from which nothing in the list overlaps a stretch of
   * `duration`, written to out[at], and the latest start of that free stretch to latest[at].
   */
  earliestGapInto(t: Instant, duration: number, out: Float64Array, latest: Float64Array, at: number): void {
    const n = this.n;
    let i = this.locate(t);
    out[at] = t;
    latest[at] = Number.POSITIVE_INFINITY;
    if (i >= n) return;
    const times = this.times;
    let candidate = t;
    const chunk = (i / CHUNK) | 0;
    if (this.stale[chunk] === 1) this.summariseGap(chunk);
    if ((this.chunkGap[chunk] as number) < duration) {
      // No gap in this chunk is long enough (t lies in one of them, or in a booking): past it.
      candidate = this.chunkLast[chunk] as number;
    } else {
      for (const end = Math.min(n, (chunk + 1) * CHUNK); i < end; i++) {
        if ((times[2 * i] as number) >= candidate + duration) {
          out[at] = candidate;
          latest[at] = (times[2 * i] as number) - duration;
          return;
        }
        candidate = times[2 * i + 1] as number;
      }
    }
    // The first later chunk with a long enough gap before or inside it.
    const chunks = Math.ceil(n / CHUNK);
    for (let k = chunk + 1; k < chunks; k++) {
      if (this.stale[k] === 1) this.summariseGap(k);
      if ((this.chunkGap[k] as number) < duration) continue;
      candidate = this.chunkLast[k - 1] as number;
      for (let j = k * CHUNK, end = Math.min(n, j + CHUNK); j < end; j++) {
        if ((times[2 * j] as number) >= candidate + duration) {
          out[at] = candidate;
          latest[at] = (times[2 * j] as number) - duration;
          return;
        }
        candidate = times[2 * j + 1] as number;
      }
      break; // unreachable: that chunk holds such a gap
    }
    out[at] = times[2 * n - 1] as number; // after the last booking
  }

  /**
   * The owner's booking that starts at `start`: bookings do not overlap, so it is the first that ends after `start`
   * (left in `at`).
   */
  find(owner: string, start: Instant): NodeBooking | undefined {
    const i = this.locate(start);
    if (i >= this.n || this.times[2 * i] !== start) return undefined;
    const b = this.items[i] as NodeBooking;
    return b.owner === owner ? b : undefined;
  }

  insert(booking: NodeBooking): void {
    const i = this.locate(booking.start);
    if (2 * (this.n + 1) > this.times.length) {
      const grown = new Float64Array(2 * this.times.length);
      grown.set(this.times.subarray(0, 2 * this.n));
      this.times = grown;
    }
    const { times, items } = this;
    if (this.n - i > LONG) {
      times.copyWithin(2 * i + 2, 2 * i, 2 * this.n);
      items.splice(i, 0, booking);
    } else {
      for (let j = 2 * this.n - 1; j >= 2 * i; j--) times[j + 2] = times[j] as number;
      items.push(booking);
      for (let j = this.n; j > i; j--) items[j] = items[j - 1] as NodeBooking;
      items[i] = booking;
    }
    times[2 * i] = booking.start;
    times[2 * i + 1] = booking.end;
    this.n++;
    this.changedFrom(i);
  }

  remove(owner: string, start: Instant): void {
    if (!this.find(owner, start)) return;
    const i = this.at;
    const { times, items } = this;
    if (this.n - i > LONG) {
      times.copyWithin(2 * i, 2 * i + 2, 2 * this.n);
      items.splice(i, 1);
    } else {
      for (let j = 2 * i; j < 2 * this.n - 2; j++) times[j] = times[j + 2] as number;
      for (let j = i; j < this.n - 1; j++) items[j] = items[j + 1] as NodeBooking;
      items.pop();
    }
    this.n--;
    this.changedFrom(i);
  }

  /**
   * The booking that starts at `start` now ends at `end` (its object already says so; the array still holds the old
   * end, by which it is found).
   */
  endChanged(start: Instant, end: Instant): void {
    const i = this.locate(start);
    if (i >= this.n || this.times[2 * i] !== start) throw new Error(`no booking starts at ${start}`);
    this.times[2 * i + 1] = end;
    const chunk = (i / CHUNK) | 0;
    const chunks = Math.ceil(this.n / CHUNK);
    if (i === Math.min(this.n, (chunk + 1) * CHUNK) - 1) this.chunkLast[chunk] = end;
    this.stale[chunk] = 1;
    if (chunk + 1 < chunks) this.stale[chunk + 1] = 1; // its gap before it starts at this chunk's last end
  }

  /**
   * Entries from position i on moved: the chunks' last ends from i's chunk on are read again, their gap summaries go
   * stale.
   */
  private changedFrom(i: number): void {
    const n = this.n;
    const chunks = Math.ceil(n / CHUNK);
    if (this.chunkLast.length < chunks) {
      const last = new Float64Array(2 * chunks);
      last.set(this.chunkLast);
      this.chunkLast = last;
      const gap = new Float64Array(2 * chunks);
      gap.set(this.chunkGap);
      this.chunkGap = gap;
      const stale = new Uint8Array(2 * chunks);
      stale.set(this.stale);
      this.stale = stale;
    }
    const { times, chunkLast } = this;
    const from = (i / CHUNK) | 0;
    for (let k = from; k < chunks; k++) chunkLast[k] = times[2 * Math.min(n, (k + 1) * CHUNK) - 1] as number;
    this.stale.fill(1, from, chunks);
  }

  /** Recomputes chunk k's gap summary: the longest gap before it (from the previous chunk's last end) or inside it. */
  private summariseGap(k: number): void {
    const { times, n } = this;
    const lo = k * CHUNK;
    const hi = Math.min(n, lo + CHUNK);
    let gap = k > 0 ? (times[2 * lo] as number) - (times[2 * lo - 1] as number) : Number.POSITIVE_INFINITY;
    for (let j = lo + 1; j < hi; j++) gap = Math.max(gap, (times[2 * j] as number) - (times[2 * j - 1] as number));
    this.chunkGap[k] = gap;
    this.stale[k] = 0;
  }
}
