import { kthSmallest } from './kth-smallest.js';
import type { Instant } from './model.js';
import type { FreeStretchMemo } from './free-stretch-memo.js';
import type { NodeTimeline, Passable } from './node-timeline.js';

/** Bookings in the way a slot search scans per node, when it must scan (an owner to look past), before it settles for a lower bound. */
const SCAN_BUDGET = 8;

/** What a slot search reads of the Machine Manager: its nodes' timelines and its scratch space. */
export interface SearchSpace {
  timeline(node: number): NodeTimeline;
  /** Each node's last booking end (-Infinity: none). */
  readonly lastBookingEnds: Float64Array;
  /** What earlier searches learnt from each node's timeline, while the node is unchanged. */
  readonly freeStretches: FreeStretchMemo;
  /** The scratch list of free nodes (node, since) that `choose` takes from. */
  readonly freeList: { nodes: Int32Array; since: Float64Array };
  /** Of the first `free` entries of the free list, the `count` to use (MachineManager.choose). */
  choose(free: number, count: number, oneIsland?: boolean): number[] | undefined;
  scratch(count: number): Float64Array;
  islandIndex(node: number): number;
  readonly islands: number;
  /** The per-node arrays of searches, kept for the next search once one is done. */
  readonly searchArrays: SearchArrayPool;
}

/** What a search keeps per node (see SlotSearch's fields), one cluster's worth. */
interface SearchArrays {
  bound: Float64Array;
  latest: Float64Array;
  since: Float64Array;
  sinceUntil: Float64Array;
}

/**
 * Search arrays handed from a finished search to the next, so a search does not allocate
 * (and the collector free) four cluster-sized arrays. A search that is never marked done
 * just leaves its arrays to the collector; a search made while another runs (a caller's
 * callback searching) takes arrays of its own.
 */
export class SearchArrayPool {
  private readonly idle: SearchArrays[] = [];

  constructor(private readonly nodes: number) {}

  /** Arrays of at least `length` entries. */
  take(length: number): SearchArrays {
    const size = Math.max(length, this.nodes);
    const array = () => new Float64Array(size);
    return (length <= this.nodes ? this.idle.pop() : undefined) ?? { bound: array(), latest: array(), since: array(), sinceUntil: array() };
  }

  give(arrays: SearchArrays): void {
    if (arrays.bound.length === this.nodes && this.idle.length < 4) this.idle.push(arrays);
  }
}

/** See MachineManager.search: the earliest start where `count` eligible nodes are free for `duration`. */
export class SlotSearch {
  /** Per eligible node: no free stretch of the duration begins before this (exact where it equals the instant asked). */
  private readonly bound: Float64Array;
  /** Per eligible node: free for the duration from any start between its bound and this (the stretch found with the bound). */
  private readonly latest: Float64Array;
  /** Per eligible node: when its last booking before the instant asked ended, and until when that answer holds (-Infinity: not known yet). */
  private readonly since: Float64Array;
  private readonly sinceUntil: Float64Array;
  /** Without owners to look past, a timeline's answer depends on the node alone: remembered across searches (FreeStretchMemo). */
  private readonly plain: boolean;
  /** The pool's arrays these four are views of; undefined once the search is done. */
  private arrays: SearchArrays | undefined;

  constructor(
    private readonly mm: SearchSpace,
    private readonly count: number,
    private readonly eligible: readonly number[],
    private readonly duration: number,
    private readonly options: Passable & { oneIsland?: boolean; limit?: Instant },
  ) {
    const n = eligible.length;
    const arrays = mm.searchArrays.take(n);
    this.arrays = arrays;
    this.bound = arrays.bound.subarray(0, n).fill(Number.NEGATIVE_INFINITY);
    this.latest = arrays.latest.subarray(0, n).fill(Number.NEGATIVE_INFINITY);
    this.since = arrays.since.subarray(0, n).fill(0);
    this.sinceUntil = arrays.sinceUntil.subarray(0, n).fill(Number.NEGATIVE_INFINITY);
    this.plain = options.ignoreOwner === undefined && options.movable === undefined;
  }

  /** The search is over: its arrays go to the next one, and it answers no more. */
  done(): void {
    if (this.arrays) this.mm.searchArrays.give(this.arrays);
    this.arrays = undefined;
  }

  /** The nodes for a start at `start`, or a lower bound (> start) for any start that could work; Infinity if none ever can. */
  at(start: Instant): { nodes: number[] } | { next: Instant } {
    const { count, eligible, bound, latest, since, sinceUntil, options, mm } = this;
    if (!this.arrays) throw new Error('a slot search was asked after it was done: its arrays belong to another search now');
    if (count === 0) return { nodes: [] };
    if (eligible.length < count) return { next: Number.POSITIVE_INFINITY };
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const list = mm.freeList;
    const lastEnds = mm.lastBookingEnds;
    const memo = mm.freeStretches;
    const { duration, plain } = this;
    const soft = options.soft === true;
    let free = 0;
    // `start` only grows from one call to the next (findSlot moves forward), so what was
    // found for an earlier instant holds until the instant it was found to hold until.
    for (let i = 0; i < eligible.length; i++) {
      if ((bound[i] as number) > start) continue; // not free at start, and its bound still holds
      const node = eligible[i] as number;
      const lastEnd = lastEnds[node] as number;
      if (lastEnd <= start) {
        // Free for good from its last booking's end, which is when it has been free since.
        bound[i] = start;
        latest[i] = Number.POSITIVE_INFINITY;
        since[i] = lastEnd;
        sinceUntil[i] = Number.POSITIVE_INFINITY;
      } else if ((latest[i] as number) >= start) bound[i] = start; // still inside the free stretch found before
      else if (!plain) mm.timeline(node).earliestFreeInto(start, duration, options, limit, SCAN_BUDGET, bound, latest, i);
      else if (!memo.recall(node, start, duration, soft, bound, latest, i)) {
        mm.timeline(node).earliestFreeInto(start, duration, options, limit, SCAN_BUDGET, bound, latest, i);
        memo.remember(node, start, duration, soft, bound[i] as number, latest[i] as number);
      }
      if (bound[i] !== start) continue;
      if ((sinceUntil[i] as number) <= start) mm.timeline(node).freeSinceInto(start, since, sinceUntil, i);
      list.nodes[free] = node;
      list.since[free] = since[i] as number;
      free++;
    }
    const nodes = free >= count ? mm.choose(free, count, options.oneIsland) : undefined;
    if (nodes) return { nodes };
    return { next: this.kthBound() };
  }

  /** The count-th smallest bound (in one island when one is required: the least over islands). */
  private kthBound(): Instant {
    const { count, eligible, bound, mm } = this;
    if (!this.options.oneIsland) {
      const values = mm.scratch(eligible.length);
      values.set(bound);
      return kthSmallest(values, eligible.length, count);
    }
    // Per island: the bounds of its nodes side by side in the scratch space.
    const offsets = new Int32Array(mm.islands + 1);
    for (const node of eligible) {
      const slot = mm.islandIndex(node) + 1;
      offsets[slot] = (offsets[slot] as number) + 1;
    }
    for (let island = 0; island < mm.islands; island++) offsets[island + 1] = (offsets[island + 1] as number) + (offsets[island] as number);
    const filled = offsets.slice(0, mm.islands);
    const values = mm.scratch(eligible.length);
    for (let i = 0; i < eligible.length; i++) {
      const island = mm.islandIndex(eligible[i] as number);
      values[filled[island] as number] = bound[i] as number;
      filled[island] = (filled[island] as number) + 1;
    }
    let next = Number.POSITIVE_INFINITY;
    for (let island = 0; island < mm.islands; island++) {
      const from = offsets[island] as number;
      const size = (offsets[island + 1] as number) - from;
      if (size >= count) next = Math.min(next, kthSmallest(values.subarray(from, from + size), size, count));
    }
    return next;
  }
}
