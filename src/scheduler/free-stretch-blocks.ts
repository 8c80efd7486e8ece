import type { Instant } from './model.js';

/** Positions of an eligible list summed up together, and nodes (by index) whose changes are stamped together. */
export const SEARCH_BLOCK = 64;

/** Below this share of blocks passed (moving average), searches look at every node directly... */
const MIN_PASSING = 0.1;
/** ...but for one search in this many. */
const WORTH_A_LOOK = 16;

/**
 * When the nodes' bookings last changed, per range of SEARCH_BLOCK node indices, as a
 * count of changes: a booking change stamps one number, whatever the lists the node is on.
 */
class ChangeStamps {
  private count = 0;
  private readonly stamps: Float64Array;

  constructor(
    nodes: number,
    private readonly size: number,
  ) {
    this.stamps = new Float64Array(Math.ceil(nodes / size));
  }

  changed(node: number): void {
    this.stamps[Math.floor(node / this.size)] = ++this.count;
  }

  get now(): number {
    return this.count;
  }

  /** Whether a node from index `first` to `last` may have changed after stamp `stamp`. */
  changedSince(first: number, last: number, stamp: number): boolean {
    for (let r = Math.floor(first / this.size); r <= Math.floor(last / this.size); r++)
      if ((this.stamps[r] as number) > stamp) return true;
    return false;
  }
}

/**
 * What slot searches learnt of an eligible list's nodes, a block of SEARCH_BLOCK positions
 * at a time, for one duration and softness: asked at `from`, no node of the block had a
 * free stretch of the duration beginning before `minBound` (the least of the nodes' first
 * free starts, exactly). So for any instant from `from` until `minBound` no node of the
 * block is free, and the block's least bound is still `minBound`, while none of its nodes'
 * bookings changed: a search passes the block without looking at its nodes. On a busy
 * cluster that spares each admission's first pass from reading every node's memo, which
 * had become the largest part of a CreateAgreement's scheduling (docs/benchmarks.md).
 */
export class FreeStretchBlocks {
  readonly count: number;
  /** NaN: nothing learnt. */
  private readonly duration: Float64Array;
  private readonly soft: Uint8Array;
  private readonly minBound: Float64Array;
  private readonly from: Float64Array;
  /** The change stamp when learnt, and the range of node indices the block's nodes lie in. */
  private readonly learntAt: Float64Array;
  private readonly firstNode: Int32Array;
  private readonly lastNode: Int32Array;
  private readonly length: number;
  /** The share of blocks recent searches passed (a moving average), and the searches asked for. */
  private passing = 1;
  private searches = 0;

  constructor(
    eligible: readonly number[],
    private readonly size: number,
    private readonly changes: ChangeStamps,
  ) {
    this.count = Math.ceil(eligible.length / size);
    this.duration = new Float64Array(this.count).fill(Number.NaN);
    this.soft = new Uint8Array(this.count);
    this.minBound = new Float64Array(this.count);
    this.from = new Float64Array(this.count);
    this.learntAt = new Float64Array(this.count);
    this.firstNode = new Int32Array(this.count);
    this.lastNode = new Int32Array(this.count);
    this.length = eligible.length;
    for (let b = 0; b < this.count; b++) {
      const nodes = eligible.slice(this.first(b), this.end(b));
      this.firstNode[b] = Math.min(...nodes);
      this.lastNode[b] = Math.max(...nodes);
    }
  }

  /** Block `b`'s first position in the list. */
  first(b: number): number {
    return b * this.size;
  }

  /** The position after block `b`'s last. */
  end(b: number): number {
    return Math.min((b + 1) * this.size, this.length);
  }

  /**
   * Whether no node of block `b` is free for `duration` at `t`: learnt for them, asked at or before `t`, with every
   * bound later, and nothing changed since.
   */
  passes(b: number, t: Instant, duration: number, soft: boolean): boolean {
    return (
      this.duration[b] === duration &&
      this.soft[b] === (soft ? 1 : 0) &&
      (this.from[b] as number) <= t &&
      (this.minBound[b] as number) > t &&
      !this.changes.changedSince(this.firstNode[b] as number, this.lastNode[b] as number, this.learntAt[b] as number)
    );
  }

  /**
   * Whether a search should go by blocks: where searches seldom pass a block (requests of
   * many durations, a cluster with free nodes everywhere) looking at every node directly
   * costs less, and one search in WORTH_A_LOOK still goes by blocks to learn anew.
   */
  worthUsing(): boolean {
    this.searches++;
    return this.passing >= MIN_PASSING || this.searches % WORTH_A_LOOK === 0;
  }

  /** A search's first pass passed `passed` blocks. */
  passed(passed: number): void {
    this.passing = 0.8 * this.passing + (0.2 * passed) / this.count;
  }

  /** The least bound of block `b`'s nodes (when `passes` says so). */
  leastBound(b: number): Instant {
    return this.minBound[b] as number;
  }

  /**
   * What a search asked at `from` learnt of block `b`: each position's first free start at or after `from`, in
   * bound[first, end).
   */
  learn(b: number, from: Instant, duration: number, soft: boolean, bound: Float64Array): void {
    let least = Number.POSITIVE_INFINITY;
    for (let i = this.first(b); i < this.end(b); i++) least = Math.min(least, bound[i] as number);
    this.duration[b] = duration;
    this.soft[b] = soft ? 1 : 0;
    this.minBound[b] = least;
    this.from[b] = from;
    this.learntAt[b] = this.changes.now;
  }
}

/**
 * The blocks of the eligible lists the Machine Manager hands out, and the stamps of the nodes' changes they all check.
 */
export class EligibleListBlocks {
  private readonly lists = new WeakMap<readonly number[], FreeStretchBlocks>();
  private readonly changes: ChangeStamps;

  constructor(
    nodes: number,
    private readonly size: number = SEARCH_BLOCK,
  ) {
    this.changes = new ChangeStamps(nodes, size);
  }

  /** Gives `eligible`, a list that stays as it is, blocks. */
  register(eligible: readonly number[]): void {
    if (eligible.length > 0 && !this.lists.has(eligible))
      this.lists.set(eligible, new FreeStretchBlocks(eligible, this.size, this.changes));
  }

  of(eligible: readonly number[]): FreeStretchBlocks | undefined {
    return this.lists.get(eligible);
  }

  /** The node's bookings changed: what was learnt of the blocks it is in no longer holds. */
  forget(node: number): void {
    this.changes.changed(node);
  }
}
