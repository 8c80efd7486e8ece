import type { Instant } from './model.js';

/** Breakpoints per block before it splits in two: a change costs about this much, not the whole profile. */
const BLOCK = 64;

/** A run of consecutive breakpoints: `used[i]` holds from `times[i]` to the next breakpoint. */
interface Block {
  times: number[];
  used: number[];
}

/**
 * The Planning Manager's hardware-independent view: how many nodes are busy at each
 * instant, as a step function. Each breakpoint's count holds until the next one; zero
 * before the first breakpoint and after the last. Breakpoints are kept canonical (none
 * repeats the count before it), in sorted blocks of up to 2 × `blockSize`, so a booking
 * adds or drops a breakpoint in one small block (plus the counts it covers) instead of
 * shifting every later breakpoint. Finding where `k` nodes are free for a duration is
 * one forward scan from the breakpoint at or before the start, found by two binary
 * searches, so admission costs O(log n + breakpoints scanned).
 */
export class CapacityProfile {
  private readonly blocks: Block[] = [];
  /** First time of each block, for the binary search. */
  private readonly firsts: number[] = [];
  private count = 0;
  /** Where `locate` found the breakpoint: block and offset (block -1: none at or before). */
  private foundBlock = -1;
  private foundOffset = 0;

  constructor(private readonly blockSize = BLOCK) {}

  /** Adds `delta` busy nodes over [start, end). */
  add(start: Instant, end: Instant, delta: number): void {
    if (end <= start || delta === 0) return;
    this.breakpoint(start);
    this.breakpoint(end);
    this.locate(start);
    let i = this.foundOffset;
    cover: for (let b = this.foundBlock; b < this.blocks.length; b++, i = 0) {
      const { times, used } = this.blocks[b] as Block;
      for (; i < times.length; i++) {
        if ((times[i] as number) >= end) break cover;
        used[i] = (used[i] as number) + delta;
      }
    }
    // Drop breakpoints that no longer change the count, so releases do not leave clutter.
    this.merge(end);
    this.merge(start);
  }

  /** Busy nodes at instant t. */
  at(t: Instant): number {
    if (!this.locate(t)) return 0;
    return (this.blocks[this.foundBlock] as Block).used[this.foundOffset] as number;
  }

  /** Most busy nodes at any instant of [start, end). */
  maxOver(start: Instant, end: Instant): number {
    let peak = 0;
    let b = 0;
    let i = 0;
    if (this.locate(start)) {
      b = this.foundBlock;
      i = this.foundOffset;
      peak = (this.blocks[b] as Block).used[i] as number;
      i++;
    }
    for (; b < this.blocks.length; b++, i = 0) {
      const { times, used } = this.blocks[b] as Block;
      for (; i < times.length; i++) {
        if ((times[i] as number) >= end) return peak;
        if ((used[i] as number) > peak) peak = used[i] as number;
      }
    }
    return peak;
  }

  /** Busy node-milliseconds over [start, end): the integral of the count (demand pricing reads the load from it). */
  busyArea(start: Instant, end: Instant): number {
    if (end <= start) return 0;
    let area = 0;
    let b = 0;
    let i = 0;
    let from = start;
    let count = 0;
    if (this.locate(start)) {
      b = this.foundBlock;
      i = this.foundOffset + 1;
      count = (this.blocks[b] as Block).used[this.foundOffset] as number;
    }
    for (; b < this.blocks.length; b++, i = 0) {
      const { times, used } = this.blocks[b] as Block;
      for (; i < times.length; i++) {
        const t = times[i] as number;
        if (t >= end) return area + count * (end - from);
        area += count * (t - from);
        from = t;
        count = used[i] as number;
      }
    }
    return area + count * (end - from);
  }

  /**
   * The earliest t >= from such that at most `maxUsed` nodes are busy throughout
   * [t, t + duration). Candidates are `from` and breakpoints (where nodes become free).
   */
  firstFit(from: Instant, duration: number, maxUsed: number): Instant {
    let candidate = from;
    let b = 0;
    let i = 0;
    if (this.locate(from)) {
      b = this.foundBlock;
      i = this.foundOffset;
      if (((this.blocks[b] as Block).used[i] as number) > maxUsed) candidate = Number.NaN;
      i++;
    }
    for (; b < this.blocks.length; b++, i = 0) {
      const { times, used } = this.blocks[b] as Block;
      for (; i < times.length; i++) {
        const t = times[i] as number;
        if (!Number.isNaN(candidate) && t >= candidate + duration) return candidate;
        if ((used[i] as number) > maxUsed) candidate = Number.NaN;
        else if (Number.isNaN(candidate)) candidate = t;
      }
    }
    // After the last breakpoint nothing is busy.
    return Number.isNaN(candidate) ? this.lastTime() : candidate;
  }

  /** The first breakpoint strictly after t (where the count changes), or undefined. */
  nextChangeAfter(t: Instant): Instant | undefined {
    let b = 0;
    let i = 0;
    if (this.locate(t)) {
      b = this.foundBlock;
      i = this.foundOffset + 1;
    }
    for (; b < this.blocks.length; b++, i = 0) {
      const times = (this.blocks[b] as Block).times;
      if (i < times.length) return times[i];
    }
    return undefined;
  }

  /** The first breakpoint strictly after t where the count drops (a booking ends), or undefined. */
  nextReleaseAfter(t: Instant): Instant | undefined {
    let b = 0;
    let i = 0;
    let previous = 0;
    if (this.locate(t)) {
      b = this.foundBlock;
      i = this.foundOffset;
      previous = (this.blocks[b] as Block).used[i] as number;
      i++;
    }
    for (; b < this.blocks.length; b++, i = 0) {
      const { times, used } = this.blocks[b] as Block;
      for (; i < times.length; i++) {
        if ((used[i] as number) < previous) return times[i];
        previous = used[i] as number;
      }
    }
    return undefined;
  }

  /**
   * Maximal intervals inside [from, until) where at most `maxUsed` nodes are busy:
   * the gaps a piece of a job may use (partial execution, 002 section 3.5.3).
   */
  windows(from: Instant, until: Instant, maxUsed: number): Array<{ start: Instant; end: Instant }> {
    const out: Array<{ start: Instant; end: Instant }> = [];
    let b = 0;
    let i = 0;
    let open: Instant | undefined = from;
    if (this.locate(from)) {
      b = this.foundBlock;
      i = this.foundOffset;
      if (((this.blocks[b] as Block).used[i] as number) > maxUsed) open = undefined;
      i++;
    }
    scan: for (; b < this.blocks.length; b++, i = 0) {
      const { times, used } = this.blocks[b] as Block;
      for (; i < times.length; i++) {
        const t = times[i] as number;
        if (t >= until) break scan;
        const free = (used[i] as number) <= maxUsed;
        if (free && open === undefined) open = t;
        if (!free && open !== undefined) {
          if (t > open) out.push({ start: open, end: t });
          open = undefined;
        }
      }
    }
    if (open !== undefined && until > open) out.push({ start: open, end: until });
    return out;
  }

  get size(): number {
    return this.count;
  }

  private lastTime(): number {
    const last = this.blocks[this.blocks.length - 1] as Block;
    return last.times[last.times.length - 1] as number;
  }

  /** Finds the last breakpoint at or before t (into foundBlock/foundOffset); false if there is none. */
  private locate(t: Instant): boolean {
    const firsts = this.firsts;
    let lo = 0;
    let hi = firsts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((firsts[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    const b = lo - 1;
    this.foundBlock = b;
    if (b < 0) return false;
    const times = (this.blocks[b] as Block).times;
    lo = 0;
    hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((times[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    this.foundOffset = lo - 1;
    return true;
  }

  /** Ensures a breakpoint at t, carrying the count that held there. */
  private breakpoint(t: Instant): void {
    if (!this.locate(t)) {
      // Before every breakpoint (or none yet): a new first breakpoint with count zero.
      if (this.blocks.length === 0) {
        this.blocks.push({ times: [t], used: [0] });
        this.firsts.push(t);
      } else {
        const first = this.blocks[0] as Block;
        first.times.unshift(t);
        first.used.unshift(0);
        this.firsts[0] = t;
        this.splitIfFull(0);
      }
      this.count++;
      return;
    }
    const b = this.foundBlock;
    const i = this.foundOffset;
    const block = this.blocks[b] as Block;
    if (block.times[i] === t) return;
    block.times.splice(i + 1, 0, t);
    block.used.splice(i + 1, 0, block.used[i] as number);
    this.count++;
    this.splitIfFull(b);
  }

  private splitIfFull(b: number): void {
    const block = this.blocks[b] as Block;
    if (block.times.length <= 2 * this.blockSize) return;
    const tail: Block = { times: block.times.splice(this.blockSize), used: block.used.splice(this.blockSize) };
    this.blocks.splice(b + 1, 0, tail);
    this.firsts.splice(b + 1, 0, tail.times[0] as number);
  }

  /** Drops the breakpoint at t if its count equals the one before it. */
  private merge(t: Instant): void {
    if (!this.locate(t)) return;
    const b = this.foundBlock;
    const i = this.foundOffset;
    const block = this.blocks[b] as Block;
    if (block.times[i] !== t) return;
    const previous = b > 0 ? (this.blocks[b - 1] as Block).used : undefined;
    const before = i > 0 ? (block.used[i - 1] as number) : previous ? (previous[previous.length - 1] as number) : 0;
    if (block.used[i] !== before) return;
    block.times.splice(i, 1);
    block.used.splice(i, 1);
    this.count--;
    if (block.times.length === 0) {
      this.blocks.splice(b, 1);
      this.firsts.splice(b, 1);
    } else if (i === 0) {
      this.firsts[b] = block.times[0] as number;
    }
  }
}
