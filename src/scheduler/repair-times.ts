/** Fewer repairs than this say nothing of how long the next one takes: the problem horizon stands. */
const fewestRepairs = 3;

/** How long one kind of failure kept its nodes down: the repairs seen, and their median. */
export interface RepairTimeSummary {
  repairs: number;
  /** The median time a node stayed down, in hours (0 before any repair). */
  medianHours: number;
}

/** The repair times learned, apart for nodes that failed alone and with others of their group. */
export interface RepairTimesView {
  alone: RepairTimeSummary;
  withOthers: RepairTimeSummary;
}

/** Times in milliseconds, kept in ascending order. */
class SortedTimes {
  readonly values: number[] = [];

  add(value: number): void {
    this.values.splice(this.firstAbove(value), 0, value);
  }

  /** The index of the first value above `value`. */
  firstAbove(value: number): number {
    let low = 0;
    let high = this.values.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((this.values[mid] as number) > value) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  summary(): RepairTimeSummary {
    const n = this.values.length;
    return { repairs: n, medianHours: n === 0 ? 0 : (this.values[n >> 1] as number) / 3_600_000 };
  }
}

/**
 * How long failed nodes stay down, from the repairs the planner has seen (the time from a
 * node's failure to its repair). A node that failed with others of its group (a switch, a
 * power feed) waits for the repair of what took them all, which takes another time than a
 * single node's, so the two are learned apart. The planner keeps a failed node out of the
 * plan until it is more likely back than not: the median of the repairs that took longer
 * than it has been down so far (`remainingMs`), or for the problem horizon while too few such
 * repairs were seen.
 */
export class RepairTimes {
  private readonly alone = new SortedTimes();
  private readonly withOthers = new SortedTimes();

  /** A node was repaired after `downMs`; it had failed with others of its group, or alone. */
  repaired(downMs: number, withOthers: boolean): void {
    (withOthers ? this.withOthers : this.alone).add(Math.max(0, downMs));
  }

  /**
   * How much longer a node down for `downMs` so far is likely to stay down: the median of
   * the repairs of its kind that took longer, less the time it has been down; undefined while
   * fewer than `fewestRepairs` of them were seen.
   */
  remainingMs(downMs: number, withOthers: boolean): number | undefined {
    const times = withOthers ? this.withOthers : this.alone;
    const first = times.firstAbove(downMs);
    const longer = times.values.length - first;
    if (longer < fewestRepairs) return undefined;
    return (times.values[first + (longer >> 1)] as number) - downMs;
  }

  view(): RepairTimesView {
    return { alone: this.alone.summary(), withOthers: this.withOthers.summary() };
  }
}
