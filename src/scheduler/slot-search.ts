import { kthSmallest } from './kth-smallest.js';
import type { Instant } from './model.js';
import type { FreeStretchMemo } from './free-stretch-memo.js';
import type { EligibleListBlocks, FreeStretchBlocks } from './free-stretch-blocks.js';
import type { NodeTimeline, Passable } from './node-timeline.js';

/**
 * Bookings in the way a slot search scans per node, when it must scan (an owner to look past), before it settles for a
 * lower bound.
 */
const SCAN_BUDGET = 8;

/** A block's state in a search with blocks (SlotSearch.blockState). */
const UNTOUCHED = 0;
const PASSED = 1;
const LOOKED_AT = 2;

/** What a slot search reads of the Machine Manager: its nodes' timelines and its scratch space. */
export interface SearchSpace {
  timeline(node: number): NodeTimeline;
  /** Each node's last booking end (-Infinity: none). */
  readonly lastBookingEnds: Float64Array;
  /** What earlier searches learnt from each node's timeline, while the node is unchanged. */
  readonly freeStretches: FreeStretchMemo;
  /** What searches learnt of blocks of the eligible lists the Machine Manager handed out. */
  readonly freeStretchBlocks: EligibleListBlocks;
  /** The scratch list of free nodes (node, since) that `choose` takes from. */
  readonly freeList: { nodes: Int32Array; since: Float64Array };
  /** Of the first `free` entries of the free list, the `count` to use (MachineManager.choose). */
  choose(free: number, count: number, start: Instant, oneIsland?: boolean): number[] | undefined;
  scratch(count: number): Float64Array;
  islandIndex(node: number): number;
  readonly islands: number;
  /** The per-node arrays of searches, kept for the next search once one is done. */
  readonly searchArrays: SearchArrayPool;
}

/** What a search keeps per node and per block (see SlotSearch's fields), one cluster's worth. */
interface SearchArrays {
  bound: Float64Array;
  latest: Float64Array;
  since: Float64Array;
  sinceUntil: Float64Array;
  blockState: Uint8Array;
  passedAt: Float64Array;
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
    const arrays = length <= this.nodes ? this.idle.pop() : undefined;
    return (
      arrays ?? {
        bound: array(),
        latest: array(),
        since: array(),
        sinceUntil: array(),
        blockState: new Uint8Array(size),
        passedAt: array(),
      }
    );
  }

  give(arrays: SearchArrays): void {
    if (arrays.bound.length === this.nodes && this.idle.length < 4) this.idle.push(arrays);
  }
}

/** See MachineManager.search: the earliest start where `count` eligible nodes are free for `duration`. */
export class SlotSearch {
  /**
   * Per eligible node: no free stretch of the duration begins before this (exact where it equals the instant asked).
   */
  private readonly bound: Float64Array;
  /**
   * Per eligible node: free for the duration from any start between its bound and this (the stretch found with the
   * bound).
   */
  private readonly latest: Float64Array;
  /**
   * Per eligible node: when its last booking before the instant asked ended, and until when that answer holds
   * (-Infinity: not known yet).
   */
  private readonly since: Float64Array;
  private readonly sinceUntil: Float64Array;
  /**
   * Without owners to look past, a timeline's answer depends on the node alone: remembered across searches
   * (FreeStretchMemo).
   */
  private readonly plain: boolean;
  /** The pool's arrays these four are views of; undefined once the search is done. */
  private arrays: SearchArrays | undefined;
  /**
   * With blocks (a plain search over a list the Machine Manager handed out),
   * the four arrays are filled a block at a time, once the search looks at the block's
   * nodes; until then the block is passed whole while its blocks entry says no node is
   * free (FreeStretchBlocks). Per block: UNTOUCHED, PASSED (first at passedAt) or LOOKED_AT.
   */
  private readonly blocks: FreeStretchBlocks | undefined;
  private readonly blockState: Uint8Array;
  private readonly passedAt: Float64Array;
  /** Blocks looked at so far: once all are, the search scans like one without blocks. */
  private lookedAt = 0;
  private firstPass = true;

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
    this.bound = arrays.bound.subarray(0, n);
    this.latest = arrays.latest.subarray(0, n);
    this.since = arrays.since.subarray(0, n);
    this.sinceUntil = arrays.sinceUntil.subarray(0, n);
    this.plain = options.ignoreOwner === undefined && options.movable === undefined;
    const blocks = this.plain ? mm.freeStretchBlocks.of(eligible) : undefined;
    this.blocks = blocks?.worthUsing() ? blocks : undefined;
    this.blockState = arrays.blockState;
    this.passedAt = arrays.passedAt;
    if (this.blocks) this.blockState.fill(UNTOUCHED, 0, this.blocks.count);
    else this.reset(0, n);
  }

  /**
   * Positions [lo, hi) as a search begins: nothing known of them (`since` is read only once written, with sinceUntil).
   */
  private reset(lo: number, hi: number): void {
    const { bound, latest, sinceUntil } = this;
    for (let i = lo; i < hi; i++) {
      bound[i] = Number.NEGATIVE_INFINITY;
      latest[i] = Number.NEGATIVE_INFINITY;
      sinceUntil[i] = Number.NEGATIVE_INFINITY;
    }
  }

  /** The search is over: its arrays go to the next one, and it answers no more. */
  done(): void {
    if (this.arrays) this.mm.searchArrays.give(this.arrays);
    this.arrays = undefined;
  }

  /**
   * The nodes for a start at `start`, or a lower bound (> start) for any start that could work; Infinity if none ever
   * can.
   */
  at(start: Instant): { nodes: number[] } | { next: Instant } {
    const { count, eligible, options, mm, unlookedBlocks: blocks } = this;
    if (!this.arrays)
      throw new Error('a slot search was asked after it was done: its arrays belong to another search now');
    if (count === 0) return { nodes: [] };
    if (eligible.length < count) return { next: Number.POSITIVE_INFINITY };
    const free = blocks ? this.scanBlocks(blocks, start) : this.scan(0, eligible.length, start, 0);
    const nodes = free >= count ? mm.choose(free, count, start, options.oneIsland) : undefined;
    if (nodes) return { nodes };
    return { next: this.kthBound() };
  }

  /**
   * The first pass over blocks, and the passes after it while some block is still passed:
   * blocks looked at are scanned (consecutive ones in one go); the others are passed while
   * what was learnt of them says no node is free, else looked at and learnt of anew.
   */
  private scanBlocks(blocks: FreeStretchBlocks, start: Instant): number {
    const state = this.blockState;
    const soft = this.options.soft === true;
    let passed = 0;
    let free = 0;
    let run = -1; // first position of the blocks looked at not scanned yet
    for (let b = 0; b < blocks.count; b++) {
      if (state[b] === LOOKED_AT) {
        if (run < 0) run = blocks.first(b);
        continue;
      }
      if (run >= 0) free = this.scan(run, blocks.first(b), start, free);
      run = -1;
      if (blocks.passes(b, start, this.duration, soft)) {
        if (state[b] === UNTOUCHED) this.passedAt[b] = start;
        state[b] = PASSED;
        passed++;
        continue;
      }
      this.lookAt(blocks, b);
      free = this.scan(blocks.first(b), blocks.end(b), start, free);
      blocks.learn(b, start, this.duration, soft, this.bound);
    }
    if (this.firstPass) blocks.passed(passed);
    this.firstPass = false;
    return run >= 0 ? this.scan(run, this.eligible.length, start, free) : free;
  }

  /** The blocks, while some are not looked at yet: once all are, the search scans like one without blocks. */
  private get unlookedBlocks(): FreeStretchBlocks | undefined {
    return this.blocks && this.lookedAt < this.blocks.count ? this.blocks : undefined;
  }

  /**
   * Block `b` from now on looked at node by node: its positions as they would be had the search looked from the start.
   */
  private lookAt(blocks: FreeStretchBlocks, b: number): void {
    const state = this.blockState;
    const lo = blocks.first(b);
    const hi = blocks.end(b);
    this.reset(lo, hi);
    // Passed so far: no node was free at any instant asked since, and each one's bound is what looking at the first
    // would have found.
    if (state[b] === PASSED) this.scan(lo, hi, this.passedAt[b] as number, -1);
    state[b] = LOOKED_AT;
    this.lookedAt++;
  }

  /**
   * Positions [lo, hi) at `start`: each one's bound brought up to `start` (from what the
   * search knows, the memo, or the node's timeline) and those free at `start` added to the
   * free list from `free` on; returns the new length. With `free` -1, only the bounds.
   */
  private scan(lo: number, hi: number, start: Instant, free: number): number {
    const { eligible, bound, latest, since, sinceUntil, options, mm, duration, plain } = this;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const list = mm.freeList;
    const lastEnds = mm.lastBookingEnds;
    const memo = mm.freeStretches;
    const soft = options.soft === true;
    // `start` only grows from one call to the next (findSlot moves forward), so what was
    // found for an earlier instant holds until the instant it was found to hold until.
    for (let i = lo; i < hi; i++) {
      if ((bound[i] as number) > start) continue; // not free at start, and its bound still holds
      const node = eligible[i] as number;
      const lastEnd = lastEnds[node] as number;
      if (lastEnd <= start) {
        // Free for good from its last booking's end, which is when it has been free since.
        bound[i] = start;
        latest[i] = Number.POSITIVE_INFINITY;
        since[i] = lastEnd;
        sinceUntil[i] = Number.POSITIVE_INFINITY;
      } else if ((latest[i] as number) >= start)
        bound[i] = start; // still inside the free stretch found before
      else if (!plain)
        mm.timeline(node).earliestFreeInto(start, duration, options, limit, SCAN_BUDGET, bound, latest, i);
      else if (!memo.recall(node, start, duration, soft, bound, latest, i)) {
        mm.timeline(node).earliestFreeInto(start, duration, options, limit, SCAN_BUDGET, bound, latest, i);
        memo.remember(node, start, duration, soft, bound[i] as number, latest[i] as number);
      }
      if (bound[i] !== start || free < 0) continue;
      if ((sinceUntil[i] as number) <= start) mm.timeline(node).freeSinceInto(start, since, sinceUntil, i);
      list.nodes[free] = node;
      list.since[free] = since[i] as number;
      free++;
    }
    return free;
  }

  /** The count-th smallest bound (in one island when one is required: the least over islands). */
  private kthBound(): Instant {
    const { count, eligible, bound, mm } = this;
    const blocks = this.unlookedBlocks;
    // With one node wanted, the least bound is the answer in one island too: every node has one.
    if (blocks && (count === 1 || !this.options.oneIsland)) return this.kthBoundOverBlocks(blocks);
    if (blocks) this.lookAtAll(blocks);
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
    for (let island = 0; island < mm.islands; island++)
      offsets[island + 1] = (offsets[island + 1] as number) + (offsets[island] as number);
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

  /** Every block looked at (the islands' count-th bounds need every node's bound). */
  private lookAtAll(blocks: FreeStretchBlocks): void {
    const state = this.blockState;
    for (let b = 0; b < blocks.count; b++) if (state[b] !== LOOKED_AT) this.lookAt(blocks, b);
  }

  /**
   * kthBound with blocks passed whole: with one node wanted, the least of the bounds of the
   * blocks looked at and the passed blocks' least bounds; with more, passed blocks are
   * looked at while their least bounds come before the count-th smallest bound so far.
   */
  private kthBoundOverBlocks(blocks: FreeStretchBlocks): Instant {
    const { count, eligible, bound, mm } = this;
    const state = this.blockState;
    if (count === 1) {
      let least = Number.POSITIVE_INFINITY;
      for (let b = 0; b < blocks.count; b++) {
        if (state[b] !== LOOKED_AT) least = Math.min(least, blocks.leastBound(b));
        else for (let i = blocks.first(b); i < blocks.end(b); i++) least = Math.min(least, bound[i] as number);
      }
      return least;
    }
    const values = mm.scratch(eligible.length);
    let m = 0;
    const take = (b: number) => {
      values.set(bound.subarray(blocks.first(b), blocks.end(b)), m);
      m += blocks.end(b) - blocks.first(b);
    };
    for (let b = 0; b < blocks.count; b++) if (state[b] === LOOKED_AT) take(b);
    // Rounds: every passed block whose least bound comes before the count-th so far is looked at; that count-th only
    // falls.
    for (;;) {
      const kth = m >= count ? kthSmallest(values, m, count) : Number.POSITIVE_INFINITY;
      let lookedAt = false;
      for (let b = 0; b < blocks.count; b++) {
        if (state[b] === LOOKED_AT || blocks.leastBound(b) >= kth) continue;
        this.lookAt(blocks, b);
        take(b);
        lookedAt = true;
      }
      if (!lookedAt) return kth;
    }
  }
}
