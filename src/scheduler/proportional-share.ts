/**
 * Tycoon's proportional share (Sandholm 2007, section 3.2) for best-effort and background work
 * in a planning scheduler: spare capacity is shared among bidders in proportion to their
 * bids (a rate per node-hour), recomputed as bids arrive. Whole nodes cannot be split by
 * bid at one instant, so the shares hold over time, by start-time fair queueing: each job
 * gets a start tag S = max(F of the bidder's previous job, V) and F = S + node-seconds /
 * rate; waiting work runs in start-tag order, V being the tag of the latest work begun. A
 * bidder with a backlog then gets node-time at rate/(sum of the backlogged rates), within
 * one job of each bidder's; a bidder that was idle does not bank credit (its tags start at V).
 */
export class ProportionalShare {
  private readonly finish = new Map<string, number>();

  /** The start tag of a job of `nodeSeconds` for `bidder` bidding `rate`, with the market at virtual time `v`. */
  tag(bidder: string, rate: number, nodeSeconds: number, v: number): number {
    if (!(rate > 0)) throw new Error(`a bid must be above 0, got ${rate}`);
    const start = Math.max(this.finish.get(bidder) ?? 0, v);
    this.finish.set(bidder, start + nodeSeconds / rate);
    return start;
  }
}
