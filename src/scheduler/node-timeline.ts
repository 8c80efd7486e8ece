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

/**
 * The bookings of one node, sorted by start and never overlapping, so both starts and
 * ends are sorted. The question searches ask most, where the next free stretch of some
 * length begins, is answered in O(log n) from a gap index over all bookings and one over
 * the firm ones (soft bookings give way to SLA jobs); a booking or release changes a
 * small block and a path of the index, not the whole node.
 */
export class NodeTimeline {
  private readonly all = new GapList();
  private readonly firm = new GapList();

  /** All bookings in order (for inspection; searches use the index). */
  get bookings(): NodeBooking[] {
    return this.all.toArray();
  }

  /** True if nothing is booked in [start, end) other than by `ignoreOwner`, owners that would move out of the way, or (with `soft`) soft bookings. */
  isFree(start: Instant, end: Instant, ignoreOwner?: string, movable?: (owner: string) => boolean, soft = false): boolean {
    if (end <= start) return true;
    if (ignoreOwner === undefined && movable === undefined) return (soft ? this.firm : this.all).earliestGap(start, end - start) === start;
    for (const b of this.all.from(start)) {
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
  earliestFree(t: Instant, duration: number, pass: Passable = {}, limit = Number.POSITIVE_INFINITY, budget = Number.POSITIVE_INFINITY): Instant {
    if (pass.ignoreOwner === undefined && pass.movable === undefined) return (pass.soft ? this.firm : this.all).earliestGap(t, duration);
    let candidate = t;
    let left = budget;
    for (const b of this.all.from(t)) {
      if (b.start >= candidate + duration || candidate > limit || left <= 0) return candidate;
      if ((pass.soft && b.soft) || b.owner === pass.ignoreOwner || pass.movable?.(b.owner)) continue;
      candidate = b.end; // starts and ends are sorted: this booking ends after the candidate
      left--;
    }
    return candidate;
  }

  /** End of the last booking that ends at or before t (how tightly a new job would pack), or -Infinity. */
  freeSince(t: Instant): number {
    return this.all.endBefore(t);
  }

  add(booking: NodeBooking): void {
    const next = this.all.from(booking.start).next();
    if (!next.done && next.value.start < booking.end) {
      throw new Error(`node double-booked: ${booking.owner} [${booking.start}, ${booking.end}) overlaps ${next.value.owner} [${next.value.start}, ${next.value.end})`);
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

  /** Bookings overlapping [start, end). */
  overlapping(start: Instant, end: Instant): NodeBooking[] {
    const out: NodeBooking[] = [];
    for (const b of this.all.from(start)) {
      if (b.start >= end) break;
      out.push(b);
    }
    return out;
  }
}

/** Bookings per block: a change costs about this much, a question about this plus the index. */
const BLOCK = 16;

/** A block: its bookings, and their starts and ends as plain numbers (contiguous, so scans stay in cache). */
interface Block {
  items: NodeBooking[];
  starts: number[];
  ends: number[];
}

/**
 * Sorted, non-overlapping bookings in small blocks, with a max-tree over the blocks of
 * the longest gap each holds: inside it, or between the previous block's last end and
 * its first start. The first gap of some length after an instant is then a descent.
 */
class GapList {
  private readonly blocks: Block[] = [];
  /** Per block: the end of its last booking (sorted: blocks are found by it). */
  private readonly lastEnds: number[] = [];
  /** Per block: the longest gap before it (from the previous block's last end) or inside it. */
  private readonly gaps: number[] = [];
  /** Leaves from `size`: `gaps`, then -Infinity past the blocks; inner nodes the max of their children. */
  private tree = new Float64Array(2);
  private size = 1;

  toArray(): NodeBooking[] {
    return this.blocks.flatMap((b) => b.items);
  }

  /** Bookings in order from the first that ends after t. */
  *from(t: Instant): Generator<NodeBooking, void, undefined> {
    const bi = this.blockAfter(t);
    if (bi >= this.blocks.length) return;
    let oi = positionAfter((this.blocks[bi] as Block).ends, t);
    for (let k = bi; k < this.blocks.length; k++, oi = 0) {
      const items = (this.blocks[k] as Block).items;
      for (; oi < items.length; oi++) yield items[oi] as NodeBooking;
    }
  }

  /** End of the last booking that ends at or before t, or -Infinity. */
  endBefore(t: Instant): number {
    const bi = this.blockAfter(t);
    if (bi < this.blocks.length) {
      const ends = (this.blocks[bi] as Block).ends;
      const oi = positionAfter(ends, t);
      if (oi > 0) return ends[oi - 1] as number;
    }
    return bi > 0 ? (this.lastEnds[bi - 1] as number) : Number.NEGATIVE_INFINITY;
  }

  /** The earliest instant >= t from which nothing in the list overlaps a stretch of `duration`. */
  earliestGap(t: Instant, duration: number): Instant {
    const bi = this.blockAfter(t);
    if (bi >= this.blocks.length) return t;
    const { starts, ends } = this.blocks[bi] as Block;
    let candidate = t;
    for (let oi = positionAfter(ends, t); oi < starts.length; oi++) {
      if ((starts[oi] as number) >= candidate + duration) return candidate;
      candidate = ends[oi] as number;
    }
    // The first later block with a long enough gap before or inside it.
    const k = this.firstAtLeast(bi + 1, duration);
    if (k < 0) return this.lastEnds[this.blocks.length - 1] as number;
    candidate = this.lastEnds[k - 1] as number;
    const block = this.blocks[k] as Block;
    for (let oi = 0; oi < block.starts.length; oi++) {
      if ((block.starts[oi] as number) >= candidate + duration) return candidate;
      candidate = block.ends[oi] as number;
    }
    return candidate; // unreachable: that block holds such a gap
  }

  find(owner: string, start: Instant): NodeBooking | undefined {
    for (const b of this.from(start)) {
      if (b.start > start) return undefined;
      if (b.owner === owner && b.start === start) return b;
    }
    return undefined;
  }

  insert(booking: NodeBooking): void {
    if (this.blocks.length === 0) {
      this.blocks.push({ items: [booking], starts: [booking.start], ends: [booking.end] });
      this.lastEnds.push(booking.end);
      this.gaps.push(Number.POSITIVE_INFINITY);
      this.rebuild();
      return;
    }
    let bi = this.blockAfter(booking.start);
    if (bi >= this.blocks.length) bi = this.blocks.length - 1;
    const block = this.blocks[bi] as Block;
    const at = positionAfter(block.ends, booking.start);
    block.items.splice(at, 0, booking);
    block.starts.splice(at, 0, booking.start);
    block.ends.splice(at, 0, booking.end);
    this.lastEnds[bi] = block.ends[block.ends.length - 1] as number;
    if (block.items.length > 2 * BLOCK) {
      const tail: Block = { items: block.items.splice(BLOCK), starts: block.starts.splice(BLOCK), ends: block.ends.splice(BLOCK) };
      this.blocks.splice(bi + 1, 0, tail);
      this.lastEnds.splice(bi + 1, 0, tail.ends[tail.ends.length - 1] as number);
      this.lastEnds[bi] = block.ends[block.ends.length - 1] as number;
      this.gaps.splice(bi + 1, 0, 0);
      this.gaps[bi] = this.gapOf(bi);
      this.gaps[bi + 1] = this.gapOf(bi + 1);
      this.rebuild();
      return;
    }
    this.refresh(bi);
    this.refresh(bi + 1);
  }

  remove(owner: string, start: Instant): void {
    for (let bi = this.blockAfter(start); bi < this.blocks.length; bi++) {
      const block = this.blocks[bi] as Block;
      const oi = block.items.findIndex((b) => b.owner === owner && b.start === start);
      if (oi < 0) {
        if ((block.starts[block.starts.length - 1] as number) > start) return;
        continue;
      }
      block.items.splice(oi, 1);
      block.starts.splice(oi, 1);
      block.ends.splice(oi, 1);
      if (block.items.length === 0) {
        this.blocks.splice(bi, 1);
        this.lastEnds.splice(bi, 1);
        this.gaps.splice(bi, 1);
        if (bi < this.blocks.length) this.gaps[bi] = this.gapOf(bi); // its gap before now starts further back
        this.rebuild();
        return;
      }
      this.lastEnds[bi] = block.ends[block.ends.length - 1] as number;
      this.refresh(bi);
      this.refresh(bi + 1);
      return;
    }
  }

  /** Index of the first block whose last booking ends after t; blocks.length if none. */
  private blockAfter(t: Instant): number {
    return positionAfter(this.lastEnds, t);
  }

  /** The longest gap before (from the previous block's last end) or inside block k. */
  private gapOf(k: number): number {
    const { starts, ends } = this.blocks[k] as Block;
    let gap = k > 0 ? (starts[0] as number) - (this.lastEnds[k - 1] as number) : Number.POSITIVE_INFINITY;
    for (let i = 1; i < starts.length; i++) gap = Math.max(gap, (starts[i] as number) - (ends[i - 1] as number));
    return gap;
  }

  /** Block k's leaf changed: recompute it and its ancestors. */
  private refresh(k: number): void {
    if (k >= this.blocks.length) return;
    let v = this.size + k;
    this.gaps[k] = this.gapOf(k);
    this.tree[v] = this.gaps[k] as number;
    for (v >>= 1; v >= 1; v >>= 1) this.tree[v] = Math.max(this.tree[2 * v] as number, this.tree[2 * v + 1] as number);
  }

  /** The block count changed: the tree from `gaps` (kept up to date by the caller). */
  private rebuild(): void {
    let size = 1;
    while (size < this.blocks.length) size <<= 1;
    if (this.tree.length < 2 * size) this.tree = new Float64Array(4 * size);
    this.size = size;
    const tree = this.tree;
    for (let k = 0; k < size; k++) tree[size + k] = k < this.blocks.length ? (this.gaps[k] as number) : Number.NEGATIVE_INFINITY;
    for (let v = size - 1; v >= 1; v--) tree[v] = Math.max(tree[2 * v] as number, tree[2 * v + 1] as number);
  }

  /** The first block from `from` whose leaf is at least `value`, or -1. */
  private firstAtLeast(from: number, value: number): number {
    if (from >= this.blocks.length) return -1;
    const tree = this.tree;
    let v = this.size + from;
    if ((tree[v] as number) < value) {
      for (;;) {
        while (v & 1) v >>>= 1; // climb while a right child
        if (v <= 1) return -1;
        v += 1;
        if ((tree[v] as number) >= value) break;
      }
      while (v < this.size) {
        v <<= 1;
        if ((tree[v] as number) < value) v |= 1;
      }
    }
    return v - this.size;
  }
}

/** Index of the first of the sorted ends that is after t. */
function positionAfter(ends: number[], t: Instant): number {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ends[mid] as number) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
