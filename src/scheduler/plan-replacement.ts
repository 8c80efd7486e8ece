import { sharedPlan } from './checkpoint-plan.js';
import { totalIntervals } from './job-timing.js';
import type { Instant, PlannedJob, Segment } from './model.js';
import type { Placement } from './plan-book.js';
import { PlanPlacement } from './plan-placement.js';

/** What gave way to a failed node's replacement, for the re-plan to put back and the caller to store. */
export interface MadeWay {
  /** Waiting best-effort work unbooked: the re-plan puts it back last (figure 3.4, step 7). */
  bestEffort: Set<string>;
  /** Waiting deadline jobs moved to another place that keeps their deadline. */
  moved: Set<string>;
}

/** Nodes tried for moving waiting deadline jobs aside, at most: each try re-places every job on the node. */
const moveAsideTries = 3;
/** Waiting deadline jobs moved aside for one problem, at most: each is placed again. */
const moversForProblem = 32;

/**
 * What takes a failed node's place (between placement and suspension): a node free for the
 * time it is needed, else one that only waiting best-effort work holds (it gives way), else
 * one that waiting deadline jobs hold, each moved to another place that still keeps its
 * deadline (all of them or none). The same moving aside gives a problem that finds no place
 * the nodes it needs (`placedMovingAside`).
 */
export abstract class PlanReplacement extends PlanPlacement {
  /** A problematic job's remaining work, placed as step 3 of figure 3.4 places it (plan-replanning.ts). */
  protected abstract placeProblem(job: PlannedJob, now: Instant): Segment[] | { reason: string };
  /** Books a problem's placed work after what it ran; waiting best-effort work in its way goes to `gaveWay`. */
  protected abstract bookPieces(job: PlannedJob, placed: Segment[], gaveWay?: Set<string>): void;

  /** Nodes that may take failed node `failed`'s place in `job`: eligible, on its island where it needs one. */
  protected replacementsFor(job: PlannedJob, failed: number): number[] {
    const island = this.cluster.nodes[failed]?.island;
    const oneIsland = job.spec.requirements.interconnect !== undefined;
    return this.eligibleFor(job.spec).filter(
      (n) => n !== failed && (!oneIsland || this.cluster.nodes[n]?.island === island),
    );
  }

  /** A node to take failed node `failed`'s place in `job` from `from` to `end`, or undefined. */
  protected replacementNode(
    job: PlannedJob,
    failed: number,
    from: Instant,
    end: Instant,
    madeWay: MadeWay,
  ): number | undefined {
    const eligible = this.replacementsFor(job, failed);
    const [free] = this.mm.map(1, eligible, from, end) ?? [];
    if (free !== undefined) return free;
    const [yielding] = this.mm.map(1, eligible, from, end, { soft: true }) ?? [];
    if (yielding !== undefined) {
      this.displaceWaiting(job.spec.id, from, end, [yielding], madeWay.bestEffort);
      return yielding;
    }
    return this.movedAside(job.spec.id, failed, eligible, from, end, madeWay);
  }

  /** A waiting deadline job that keeps its place in the plan but may move to another that keeps its deadline. */
  private isMovable(owner: string): boolean {
    const job = this.jobs.get(owner);
    return (
      job !== undefined &&
      job.spec.kind === 'Deadline' &&
      job.problem === undefined &&
      job.remoteStandby === undefined &&
      !this.hasStarted(job)
    );
  }

  /**
   * One of `eligible` whose holders from `from` to `end` are waiting best-effort work and
   * waiting deadline jobs, the deadline jobs moved elsewhere within their deadlines; tried in
   * a trial on a few nodes, rolled back where one of them finds no place.
   */
  private movedAside(
    id: string,
    failed: number,
    eligible: number[],
    from: Instant,
    end: Instant,
    madeWay: MadeWay,
  ): number | undefined {
    const movable = (owner: string) => owner !== id && this.isMovable(owner);
    const candidates = eligible.filter((n) => this.mm.isFree(n, from, end, undefined, movable, true));
    for (const node of candidates.slice(0, moveAsideTries)) {
      const holders = this.mm.ownersOn(node, from, end).filter((o) => o !== id);
      const movers = holders.filter(movable).map((o) => this.jobs.get(o) as PlannedJob);
      const before = this.snapshot(movers.map((job) => job.spec.id));
      const trial = this.beginTrial();
      const gaveWay = new Set<string>();
      this.displaceWaiting(id, from, end, [node], gaveWay);
      for (const job of movers) this.mm.unbook(job.spec.id);
      // Held for the failed node's place while the movers look for theirs (the caller books it for good), and the
      // failing node kept from them as its failure will be (it is booked once every job on it is dealt with).
      const hold = `replacing:${id}`;
      this.mm.book(hold, [node], from, end);
      const placed = this.keptOff(hold, failed, () => movers.every((job) => this.placeAgain(job, gaveWay)));
      if (placed) {
        this.commitTrial(trial);
        for (const owner of gaveWay) madeWay.bestEffort.add(owner);
        for (const job of movers) madeWay.moved.add(job.spec.id);
        return node;
      }
      this.rollbackTrial(trial);
      this.restoreSnapshot(before);
    }
    return undefined;
  }

  /**
   * A reservation whose nodes are not yet being prepared, placed again whole on other nodes
   * (away from failed node `failed`) when no single node takes the failed one's place: before
   * its preparation begins, any nodes free for the window will do. True when it was.
   */
  protected replacedWhole(job: PlannedJob, failed: number, madeWay: MadeWay): boolean {
    const window = job.spec.window;
    const first = job.segments[0];
    if (!window || !first || first.start <= this.now) return false;
    const trial = this.beginTrial();
    const gaveWay = new Set<string>();
    this.mm.unbook(job.spec.id);
    this.dropRemote(job); // a Full reservation's standby at the peer is booked again with its new place
    const placed = this.keptOff(`replacing:${job.spec.id}`, failed, () =>
      this.placeReservation(job.spec, this.shape(job), window.start, window.end, undefined, 0, totalIntervals(job)),
    );
    if ('reason' in placed || (placed.segments[0]?.start ?? 0) > first.start) {
      this.rollbackTrial(trial);
      return false;
    }
    this.rebook(job, placed, gaveWay);
    this.commitTrial(trial);
    for (const owner of gaveWay) madeWay.bestEffort.add(owner);
    return true;
  }

  /**
   * `place` with failed node `failed` kept from new placements, as its failure (booked once every job on it is dealt
   * with) will keep it: `hold` takes it wherever it is free to the end of its failure block, and the best-effort work
   * booked there stays firm (SLA searches would look past it). The hold is released after.
   */
  private keptOff<T>(hold: string, failed: number, place: () => T): T {
    const until = this.failed.get(failed)?.until ?? this.horizonEnd(this.now);
    this.holdFree(hold, failed, this.now, until);
    const soft = this.mm.ownersOn(failed, this.now, until).filter((o) => this.mm.isSoft(o));
    try {
      return this.whileFirm(soft, place);
    } finally {
      this.mm.unbook(hold);
    }
  }

  /**
   * A problem deadline job placed where waiting deadline jobs give up their places: the first `moversForProblem` of
   * those booked on its nodes before its deadline are unbooked, it is placed as step 3 places it, and each of them is
   * placed again as admission would, keeping its deadline (earliest booked first); where one finds no place, nothing
   * moves. Returns the jobs moved, the problem first, or undefined.
   */
  protected placedMovingAside(job: PlannedJob, gaveWay: Set<string>): string[] | undefined {
    const deadline = job.spec.deadline;
    if (job.spec.kind !== 'Deadline' || deadline === undefined || deadline <= this.now) return undefined;
    const owners = new Set<string>();
    for (const n of this.eligibleFor(job.spec))
      for (const owner of this.mm.ownersOn(n, this.now, deadline))
        if (owner !== job.spec.id && this.isMovable(owner)) owners.add(owner);
    if (owners.size === 0) return undefined;
    const movers = [...owners]
      .map((id) => this.jobs.get(id) as PlannedJob)
      .sort((a, b) => (a.segments[0]?.start ?? 0) - (b.segments[0]?.start ?? 0) || this.fcfs(a.spec.id, b.spec.id))
      .slice(0, moversForProblem);
    const before = this.snapshot([job.spec.id, ...movers.map((mover) => mover.spec.id)]);
    const trial = this.beginTrial();
    // What gives way is recorded apart: it is kept only if it all holds.
    const displaced = new Set<string>();
    for (const mover of movers) this.mm.unbook(mover.spec.id);
    const placed = this.placeProblem(job, this.now);
    if (!('reason' in placed)) {
      this.bookPieces(job, placed, displaced);
      if (movers.every((mover) => this.placeAgain(mover, displaced))) {
        this.commitTrial(trial);
        for (const owner of displaced) gaveWay.add(owner);
        return [job.spec.id, ...movers.map((mover) => mover.spec.id)];
      }
    }
    this.rollbackTrial(trial);
    this.restoreSnapshot(before);
    return undefined;
  }

  /** A waiting deadline job placed again as admission would place it now (waiting best-effort work gives way). */
  private placeAgain(job: PlannedJob, gaveWay: Set<string>): boolean {
    const placed = this.findPlacement(job.spec, this.now, {});
    if ('reason' in placed) return false;
    this.rebook(job, placed, gaveWay);
    return true;
  }

  /** Books a job (its old bookings gone) where `placed` says; waiting best-effort work in the way gives way. */
  private rebook(job: PlannedJob, placed: Placement, gaveWay: Set<string>): void {
    for (const s of placed.segments) this.displaceWaiting(job.spec.id, s.start, s.end, this.nodeIndices(s), gaveWay);
    job.segments = placed.segments;
    job.checkpoints = sharedPlan(placed.checkpoints);
    for (const s of job.segments) this.bookSegment(job, s);
    this.segmentsChanged(job);
  }
}
