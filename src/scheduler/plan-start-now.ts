import { intervalsWithin, type JobShape, pieceMs } from './job-timing.js';
import type { Instant, JobSpec, PlannedJob, Segment } from './model.js';
import type { NodeBooking } from './node-timeline.js';
import { PlanSuspension } from './plan-suspension.js';

/**
 * Best-effort work on the nodes free now (docs/scheduler.md, "Best-effort work ahead of its
 * turn"). The plan books every waiting job for its whole estimated run, first come first
 * served, so nodes stay idle wherever no waiting job's run fits before the next booking in
 * the plan. With `bestEffortStartsAhead`, when nodes are free, waiting best-effort jobs, first
 * come first served, start at once wherever their run fits before the next firm booking;
 * waiting jobs booked there move to their next gap. Such a job yields while it runs: SLA work
 * is placed first where it needs none of its nodes, and only where it must, on the nodes of
 * those that have run least, which stop where the SLA work needs them (keeping what their
 * checkpoints secured) and go on later. No firm booking ever moves for them. Checkpointed jobs
 * whose run fits no free stretch run there in pieces, to their last checkpoint that fits.
 */
export abstract class PlanStartNow extends PlanSuspension {
  /** Starts waiting best-effort jobs on the nodes free at `now`. Returns the ids of the jobs that moved. */
  protected startWaitingNow(now: Instant): string[] {
    const moved: string[] = [];
    if (!this.cluster.timing.bestEffortStartsAhead) return moved;
    // Cheap first: how many nodes nothing holds now, and which waiting jobs are small and short enough for them.
    const freeCount = this.cluster.nodes.length - this.mm.profile.at(now);
    if (freeCount <= 0) return moved;
    const small = this.waitingOn(now, freeCount);
    if (small.length === 0) return moved;
    const horizon = now + small.reduce((longest, j) => Math.max(longest, runOf(j)), 0);
    let free = this.freeNow(now, horizon);
    // Only jobs whose run fits the stretches of as many nodes as they need, whatever those nodes are.
    let ends = [...free.values()].sort((a, b) => b - a);
    const waiting = small
      .filter((j) => (ends[nodesOf(j) - 1] ?? now) - now >= runOf(j))
      .sort((a, b) => this.fcfs(a.spec.id, b.spec.id));
    for (const job of waiting) {
      if ((ends[nodesOf(job) - 1] ?? now) - now < runOf(job) || !this.waitsForARun(job)) continue;
      const piece = this.runNow(job, now, free);
      if (!piece) continue;
      const aside = this.startAhead(job, piece);
      this.ahead.add(job.spec.id);
      moved.push(job.spec.id, ...aside);
      // The jobs that moved aside may have taken free nodes.
      if (aside.length > 0) free = this.freeNow(now, horizon);
      else for (const n of this.nodeIndices(piece)) free.delete(n);
      if (free.size === 0) break;
      ends = [...free.values()].sort((a, b) => b - a);
    }
    if (free.size > 0) moved.push(...this.startPiecesNow(now, small));
    return moved;
  }

  /**
   * Checkpointed waiting jobs whose run fits no free stretch: first come first served, each computes the whole
   * intervals that fit the longest stretches nothing at all is booked on (no waiting job moves for a piece),
   * checkpoints, and books the rest of its run after. The piece yields as a run ahead of its turn does.
   */
  private startPiecesNow(now: Instant, waiting: PlannedJob[]): string[] {
    const moved: string[] = [];
    // Cheap first: only jobs that may run in pieces make the free stretches worth reading.
    const candidates = waiting
      .filter((job) => this.waitsForARun(job) && nextRun(job).intervals >= 2)
      .map((job) => ({ job, shape: this.shape(job) }))
      .filter(({ shape }) => shape.checkpointed)
      .sort((a, b) => this.fcfs(a.job.spec.id, b.job.spec.id));
    if (candidates.length === 0) return moved;
    const free = this.freeStretches(now, () => false);
    for (const { job, shape } of candidates) {
      if (free.size < nodesOf(job)) continue;
      const piece = this.pieceNow(job, shape, now, free);
      if (!piece) continue;
      const id = job.spec.id;
      const left = nextRun(job).intervals - piece.intervals;
      const rest = this.placeRun(job.spec, shape, job.checkpoints, piece.end, left, true, id);
      if ('reason' in rest) continue;
      this.bookNextRun(job, [piece, ...rest.segments]);
      this.ahead.add(id);
      moved.push(id);
      for (const n of this.nodeIndices(piece)) free.delete(n);
      // The rest may be booked within other nodes' free stretches: they end there now.
      for (const later of rest.segments)
        for (const n of this.nodeIndices(later)) {
          const until = free.get(n);
          if (until !== undefined) free.set(n, Math.min(until, later.start));
        }
    }
    return moved;
  }

  /** A piece from `now` of the whole intervals that fit the longest free stretches it may run on, if one fits. */
  private pieceNow(job: PlannedJob, shape: JobShape, now: Instant, free: Map<number, Instant>): Segment | undefined {
    const eligible = this.eligibleLookup(job.spec);
    const longest = [...free.keys()].filter((n) => eligible[n] === 1);
    longest.sort((a, b) => (free.get(b) as Instant) - (free.get(a) as Instant) || a - b);
    const count = nodesOf(job);
    const chosen =
      job.spec.requirements.interconnect === undefined ? longest.slice(0, count) : this.oneIsland(longest, count);
    if (!chosen || chosen.length < count) return undefined;
    const until = Math.min(...chosen.map((n) => free.get(n) as Instant));
    const { restart, intervals: left } = nextRun(job);
    const intervals = intervalsWithin(shape, job.checkpoints, until - now, restart, left - 1);
    if (intervals < 1) return undefined;
    const end = now + pieceMs(shape, job.checkpoints, intervals, restart, 0, false);
    return { ...this.segment(job.spec, chosen, now, end, restart, intervals), yields: true };
  }

  /** Jobs started ahead of their turn that may still run so (each is checked when read). */
  private readonly ahead = new Set<string>();

  /**
   * `place` as if the best-effort jobs running ahead of their turn did not yield; where that finds nothing, with the
   * fewest of them yielding that lets it, those that have run least first.
   */
  protected sparingThoseAhead<T extends object>(place: () => T | { reason: string }): T | { reason: string } {
    const ahead: PlannedJob[] = [];
    for (const id of this.ahead) {
      const job = this.jobs.get(id);
      if (job && this.runsAhead(job)) ahead.push(job);
      else if (!job?.segments.some((s) => s.yields && s.end > this.now)) this.ahead.delete(id);
    }
    if (ahead.length === 0) return place();
    const ran = (j: PlannedJob) => j.spec.nodes * (this.now - (this.currentSegment(j) as Segment).start);
    ahead.sort((a, b) => ran(a) - ran(b));
    // The first `yielding` of them yield; the others are firm while `place` runs.
    const withYielding = (yielding: number) =>
      this.whileFirm(
        ahead.slice(yielding).map((j) => j.spec.id),
        place,
      );
    let found = withYielding(0);
    if (!('reason' in found)) return found;
    found = place();
    if ('reason' in found) return found;
    // More of them yielding never takes a placement away: the fewest that find one, by bisection.
    let lo = 1;
    let hi = ahead.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const tried = withYielding(mid);
      if ('reason' in tried) lo = mid + 1;
      else {
        hi = mid;
        found = tried;
      }
    }
    return found;
  }

  /** The job runs now on a piece started ahead of its turn, and gives way. */
  private runsAhead(job: PlannedJob): boolean {
    const current = this.currentSegment(job);
    return (
      current?.yields === true && current.start <= this.now && current.end > this.now && this.mm.isSoft(job.spec.id)
    );
  }

  /**
   * Nodes nothing holds at `now`, with where their free stretch ends once waiting best-effort work booked before
   * `horizon` (as far as any waiting run reaches) makes way.
   */
  private freeNow(now: Instant, horizon: Instant): Map<number, Instant> {
    return this.freeStretches(now, (b) => b.start < horizon && b.soft === true && this.waitsForItsStart(b.owner));
  }

  /** Nodes nothing holds at `now`, with where their free stretch ends once the bookings `makesWay` accepts make way. */
  private freeStretches(now: Instant, makesWay: (b: NodeBooking) => boolean): Map<number, Instant> {
    const free = new Map<number, Instant>();
    for (let n = 0; n < this.cluster.nodes.length; n++) {
      const until = this.mm.timeline(n).freeUntil(now, makesWay);
      if (until > now) free.set(n, until);
    }
    return free;
  }

  /** Waiting best-effort work, not a job that yields while it runs or waits for the rest of its run. */
  private waitsForItsStart(owner: string): boolean {
    const job = this.jobs.get(owner);
    return job !== undefined && job.segments.length > 0 && !this.hasStarted(job);
  }

  /** Best-effort jobs waiting for their one booked run on at most `freeCount` nodes. */
  private waitingOn(now: Instant, freeCount: number): PlannedJob[] {
    const waiting: PlannedJob[] = [];
    for (const id of this.waitingBestEffort) {
      const job = this.jobs.get(id);
      if (!job || !this.waitsForARun(job)) {
        this.waitingBestEffort.delete(id);
        continue;
      }
      if (job.problem !== undefined || (job.spec.earliestStart ?? now) > now) continue;
      // One without checkpoints that ran before starts over: ahead of its turn it could lose its run again.
      if (job.segments.length > 1 && !this.shape(job).checkpointed) continue;
      if (nodesOf(job) <= freeCount) waiting.push(job);
    }
    return waiting;
  }

  /** Its run from `now` on the free nodes whose stretches end soonest after it, if any fit it whole. */
  private runNow(job: PlannedJob, now: Instant, free: Map<number, Instant>): Segment | undefined {
    const booked = nextRun(job);
    const run = runOf(job);
    const count = nodesOf(job);
    const eligible = this.eligibleLookup(job.spec);
    const fits: number[] = [];
    for (const [n, until] of free) if (until - now >= run && eligible[n] === 1) fits.push(n);
    if (fits.length < count) return undefined;
    // The tightest stretches, so that longer ones stay for longer runs.
    fits.sort((a, b) => (free.get(a) as Instant) - (free.get(b) as Instant) || a - b);
    const chosen =
      job.spec.requirements.interconnect === undefined ? fits.slice(0, count) : this.oneIsland(fits, count);
    if (!chosen) return undefined;
    const ids = chosen.map((n) => this.cluster.nodes[n]?.id as string);
    const nodes = ids.slice(0, job.spec.nodes);
    return { ...booked, start: now, end: now + run, nodes, spare: ids.slice(job.spec.nodes), yields: true };
  }

  /** The nodes a job may run on, as a lookup by node index (specs do not change their requirements). */
  private eligibleLookup(spec: JobSpec): Uint8Array {
    let lookup = this.eligibleOf.get(spec);
    if (!lookup) {
      lookup = new Uint8Array(this.cluster.nodes.length);
      for (const n of this.eligibleFor(spec)) lookup[n] = 1;
      this.eligibleOf.set(spec, lookup);
    }
    return lookup;
  }

  private readonly eligibleOf = new WeakMap<JobSpec, Uint8Array>();

  /** The first `count` of `nodes` (in their order) on the island that has that many. */
  private oneIsland(nodes: number[], count: number): number[] | undefined {
    const byIsland = new Map<number, number[]>();
    for (const n of nodes) {
      const island = this.mm.islandIndex(n);
      const members = byIsland.get(island) ?? [];
      members.push(n);
      if (members.length === count) return members;
      byIsland.set(island, members);
    }
    return undefined;
  }

  /** Books the job's run from now; waiting best-effort jobs in the way move to their next gap. Returns their ids. */
  private startAhead(job: PlannedJob, piece: Segment): string[] {
    const id = job.spec.id;
    const inTheWay = new Set<string>();
    this.displaceWaiting(id, piece.start, piece.end, this.nodeIndices(piece), inTheWay);
    this.bookNextRun(job, [piece]);
    return this.replaceBestEffort([...inTheWay].sort((a, b) => this.fcfs(a, b)));
  }

  /** The job's next run (its last segment) becomes `runs`, booked in its place; what it ran before stays. */
  private bookNextRun(job: PlannedJob, runs: Segment[]): void {
    this.mm.unbook(job.spec.id);
    job.segments = [...job.segments.slice(0, -1), ...runs];
    this.segmentsChanged(job);
    for (const s of runs) this.bookSegment(job, s);
    this.syncSoftness(job);
  }
}

/** The run a waiting job is booked for: its last segment. */
function nextRun(job: PlannedJob): Segment {
  return job.segments.at(-1) as Segment;
}

/** How many nodes the job's next run holds, spares included. */
function nodesOf(job: PlannedJob): number {
  return job.spec.nodes + nextRun(job).spare.length;
}

/** How long the job's next run lasts. */
function runOf(job: PlannedJob): number {
  const booked = nextRun(job);
  return booked.end - booked.start;
}
