import type { Instant } from './model.js';

/**
 * Per node, the last answer a slot search got from the node's timeline without owners to
 * look past: for `duration` (over firm bookings only, or all), asked at `from`, the first
 * free stretch begins at `bound` and any start up to `latest` fits. Until the node's
 * bookings change, that answer holds for every later instant up to `latest`, so the next
 * admission's first pass over the cluster reads it from here instead of asking each node
 * again: between two admissions only the nodes one job booked have changed.
 */
export class FreeStretchMemo {
  /** NaN: nothing remembered for the node. */
  private readonly duration: Float64Array;
  private readonly soft: Uint8Array;
  private readonly from: Float64Array;
  private readonly bound: Float64Array;
  private readonly latest: Float64Array;

  constructor(nodes: number) {
    this.duration = new Float64Array(nodes).fill(Number.NaN);
    this.soft = new Uint8Array(nodes);
    this.from = new Float64Array(nodes);
    this.bound = new Float64Array(nodes);
    this.latest = new Float64Array(nodes);
  }

  /** The node's bookings changed: what was remembered no longer holds. */
  forget(node: number): void {
    this.duration[node] = Number.NaN;
  }

  /**
   * When an answer for the node holds at `start`, writes where its free stretch begins (at
   * `start` or later) to out[at] and the stretch's latest start to latestOut[at], and says so.
   */
  recall(
    node: number,
    start: Instant,
    duration: number,
    soft: boolean,
    out: Float64Array,
    latestOut: Float64Array,
    at: number,
  ): boolean {
    if (this.duration[node] !== duration || this.soft[node] !== (soft ? 1 : 0)) return false;
    if ((this.from[node] as number) > start || (this.latest[node] as number) < start) return false;
    out[at] = Math.max(this.bound[node] as number, start);
    latestOut[at] = this.latest[node] as number;
    return true;
  }

  remember(node: number, from: Instant, duration: number, soft: boolean, bound: number, latest: number): void {
    this.duration[node] = duration;
    this.soft[node] = soft ? 1 : 0;
    this.from[node] = from;
    this.bound[node] = bound;
    this.latest[node] = latest;
  }
}
