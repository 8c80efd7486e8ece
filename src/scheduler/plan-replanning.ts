import { intervalsWithin, type JobShape, pieceMs, securedIntervals, totalIntervals } from './job-timing.js';
import type { Instant, PlannedJob, ReplanReport, Segment } from './model.js';
import { PlanStartNow } from './plan-start-now.js';
import type { MadeWay } from './plan-replacement.js';
import { at, beyondHorizonPrefix, failureOwner, isBestEffort } from './plan-book.js';

/**
 * Re-planning (the fourth layer; SCHEDULER.md figure 3.4): the clock moving on, a job
 * finishing early, a node failing or repaired, and solving the jobs in P.
 */
export abstract class PlanReplanning extends PlanStartNow {
  // ---------------------------------------------------------------- events
  /**
   * Moves the plan's clock to `now`: jobs whose last segment ended leave the plan, and so
   * do problematic jobs whose deadline or window has passed unsolved (their promise is
   * broken; `problem` says why). Both are returned for accounting. A node still failed at
   * the end of its failure block is taken out for another problem horizon.
   */
  advance(now: Instant): { report?: ReplanReport; left: PlannedJob[] } {
    this.clock(now);
    let report: ReplanReport | undefined;
    const renewed = [...this.failed].filter(([, failure]) => failure.until <= now);
    // Nodes of a group failure come back to the plan one at a time: the others are kept from the work each re-plan
    // places, which they would only send back to P.
    for (const [node, failure] of renewed) {
      this.failed.delete(node);
      this.holdFree(
        failureOwner(this.cluster.nodes[node]?.id as string),
        node,
        now,
        this.failureBlockEnd(node, failure.since, now),
      );
    }
    for (const [node, failure] of renewed) {
      const nodeId = this.cluster.nodes[node]?.id as string;
      this.mm.unbook(failureOwner(nodeId), now);
      const renewal = this.takeOut(nodeId, node, now, failure.since);
      report = report ? mergedReports(report, renewal) : renewal;
    }
    // A job whose last segment has ended has started; an unsolved one is in P: the indexes hold both.
    const candidates = new Set([...this.startedJobs(), ...this.problemJobs()]);
    const left: PlannedJob[] = [];
    this.keptShort(now);
    for (const job of candidates) {
      const last = job.segments[job.segments.length - 1];
      const unsolvedPast =
        job.problem !== undefined &&
        !job.segments.some((s) => s.end > now) &&
        (job.spec.deadline ?? job.spec.window?.end ?? Infinity) <= now;
      if ((last && last.end <= now && job.problem === undefined) || unsolvedPast) left.push(job);
    }
    this.inOrder(left);
    for (const job of left) this.release(job.spec.id);
    return { ...(report ? { report } : {}), left };
  }

  /** A job finished (early or on time): its nodes are free from `now`, and waiting jobs may take the gap. */
  jobFinished(id: string, now: Instant): ReplanReport {
    this.clock(now);
    const job = this.jobs.get(id);
    const report: ReplanReport = { moved: [], suspended: [], problematic: [], solved: [] };
    if (!job) return report;
    const freed = job.segments
      .filter((s) => s.end > now)
      .map((s) => ({ start: Math.max(now, s.start), end: s.end, nodes: this.nodeIndices(s) }));
    this.release(id);
    // Reservations running short take freed nodes first: their promise was made before any waiting job's.
    report.moved = this.regrowShort(now);
    report.solved = [...report.moved];
    report.moved.push(...this.fillGaps(now, freed));
    report.moved.push(...this.startWaitingNow(now));
    // Problems waiting for capacity get another chance now that some is free.
    if (this.problemsInHorizon(now, this.horizonEnd(now)).length > 0) {
      const replanned = this.replan(now);
      report.moved.push(...replanned.moved);
      report.suspended.push(...replanned.suspended);
      report.solved.push(...replanned.solved);
    }
    return this.withProblems(report);
  }

  /** Reservations running short of nodes (after a failure) that free nodes make whole again. */
  protected regrowShort(now: Instant): string[] {
    const grown: string[] = [];
    for (const job of this.problemJobs()) if (job.spec.window && this.regrow(job, now)) grown.push(job.spec.id);
    return grown;
  }

  /**
   * A node failed at `now`: jobs with work on it within the problem horizon become
   * problematic (running ones keep what their checkpoints secured); Enhanced and Full
   * jobs restart at once on their spare nodes; then the SLA-aware algorithm re-plans P,
   * suspending best-effort and then SLA jobs and running pieces in gaps when it must.
   */
  nodeFailed(nodeId: string, now: Instant): ReplanReport {
    this.clock(now);
    const node = this.mm.nodeIndex(nodeId);
    if (this.failed.has(node)) return this.withProblems({ moved: [], suspended: [], problematic: [], solved: [] });
    this.failureRate.failed(now, node);
    this.recentRepairs.failed(now, node);
    return this.takeOut(nodeId, node, now, now);
  }

  /**
   * The end of a failure block of a node failed since `since`, from `now`: the problem horizon's end, or the instant it
   * is more likely repaired than not where the repairs seen say that is later (big jobs planned where it would still
   * be down would only go back to P at each renewal).
   */
  private failureBlockEnd(node: number, since: Instant, now: Instant): Instant {
    const remaining = this.repairTimes.remainingMs(now - since, this.failureRate.failedWithOthers(node));
    return Math.max(this.horizonEnd(now), remaining === undefined ? now : now + remaining);
  }

  /** A reservation whose window has closed only releases its nodes: a failure then takes nothing it promised. */
  private releasing(job: PlannedJob): boolean {
    return job.spec.window !== undefined && job.spec.window.end <= this.now;
  }

  /** Such a reservation's release of the failed node ends now; its other nodes are released as planned. */
  private releaseEarly(job: PlannedJob, nodeId: string): void {
    const now = this.now;
    const ahead = (segments: Segment[]) =>
      new Set(segments.filter((s) => s.end > now).flatMap((s) => [...s.nodes, ...s.spare]));
    const held = ahead(job.segments);
    job.segments = job.segments.flatMap((s) => {
      if (s.end <= now || (!s.nodes.includes(nodeId) && !s.spare.includes(nodeId))) return [s];
      const nodes = s.nodes.filter((n) => n !== nodeId);
      const spare = s.spare.filter((n) => n !== nodeId);
      const { continues: _before, ...rest } = s;
      const before: Segment[] = s.start < now ? [{ ...s, end: now }] : [];
      // Spares stand by for working nodes: with none left to release, theirs ends too.
      if (nodes.length === 0) return before;
      return [...before, { ...rest, start: now, nodes, spare, intervals: 0, restart: false, continues: true }];
    });
    this.segmentsChanged(job);
    // The bookings follow the description: a node it no longer holds from now is unbooked from now.
    const kept = ahead(job.segments);
    for (const n of held) if (!kept.has(n)) this.mm.unbook(job.spec.id, now, this.mm.nodeIndex(n));
  }

  /**
   * Takes a node failed since `since` out of the plan for its failure block (the problem horizon, or longer while it
   * is likely still down): a failure, or a renewal at the block's end (not counted again).
   */
  private takeOut(nodeId: string, node: number, now: Instant, since: Instant): ReplanReport {
    const blockEnd = this.failureBlockEnd(node, since, now);
    // Failed from now on: replacements and spares are sought elsewhere.
    this.failed.set(node, { since, until: blockEnd });
    const affected: string[] = [];
    for (const id of this.mm.ownersOn(node, now, blockEnd).sort()) {
      const job = this.jobs.get(id);
      if (job && this.releasing(job)) this.releaseEarly(job, nodeId);
      else if (job) affected.push(id);
    }
    const beyond = this.mm
      .ownersOn(node, blockEnd, Number.POSITIVE_INFINITY)
      .filter((o) => this.jobs.has(o) && !affected.includes(o));
    const problems: string[] = [];
    // What gives up its nodes to a failed node's replacement: best-effort work the re-plan puts back, moved jobs.
    const madeWay: MadeWay = { bestEffort: new Set(), moved: new Set() };
    for (const id of affected) {
      const job = this.jobs.get(id) as PlannedJob;
      if (
        this.lostSpareOnly(job, nodeId, now, madeWay) ||
        this.restartOnSpare(job, nodeId, node, now) ||
        this.replaceWaitingNode(job, nodeId, node, now, madeWay) ||
        this.keepSurvivors(job, nodeId, node, now, madeWay)
      ) {
        // Off the node now: a warning that it was planned there beyond an earlier horizon no longer holds.
        if (job.problem?.startsWith(beyondHorizonPrefix(nodeId))) delete job.problem;
        continue;
      }
      this.cut(job, now);
      if (job.segments.length > 0) job.outagesLeft = Math.max(0, job.outagesLeft - 1); // it was running: an outage used
      this.setProblem(job, `node ${nodeId} failed at ${at(now)}`);
      problems.push(id);
    }
    const warning = `${beyondHorizonPrefix(nodeId)} at ${at(now)}; beyond the problem horizon (${at(blockEnd)})`;
    for (const id of beyond) this.setProblem(this.jobs.get(id) as PlannedJob, warning);
    this.mm.book(failureOwner(nodeId), [node], now, blockEnd);
    this.mm.setDown(node, true);
    this.judgeRecentRepairs(now);
    // What the block cut beyond the problem horizon is placed again now, not left in P until the horizon reaches it.
    const report = this.replan(now, madeWay.bestEffort, blockEnd);
    report.moved.push(...affected.filter((id) => !problems.includes(id) && this.jobs.has(id)), ...madeWay.moved);
    // Work the failure stopped leaves its other nodes free.
    report.moved.push(...this.startWaitingNow(now));
    return this.withProblems(report);
  }

  /**
   * A node is back: its failure block ends now, jobs planned on it beyond the horizon are safe again, and P is
   * re-planned.
   */
  nodeRepaired(nodeId: string, now: Instant): ReplanReport {
    this.clock(now);
    const node = this.mm.nodeIndex(nodeId);
    const failure = this.failed.get(node);
    if (!failure) return this.withProblems({ moved: [], suspended: [], problematic: [], solved: [] });
    this.mm.unbook(failureOwner(nodeId), now);
    this.failed.delete(node);
    this.mm.setDown(node, false);
    this.recentRepairs.repaired(now, node);
    this.repairTimes.repaired(now - failure.since, this.failureRate.failedWithOthers(node));
    this.judgeRecentRepairs(now);
    for (const owner of this.mm.ownersOn(node, now, Number.POSITIVE_INFINITY)) {
      const job = this.jobs.get(owner);
      // A warning that it was planned on the node is over; a run on the chance it needs less stays in P.
      if (
        job?.problem !== undefined &&
        job.segments.some((s) => s.end > now) &&
        !job.segments.some((s) => s.onChance && s.end > now)
      )
        delete job.problem;
    }
    const grown = this.regrowShort(now);
    const report = this.replan(now);
    report.moved.push(...grown);
    report.solved.push(...grown);
    report.moved.push(...this.fillGaps(now, [{ start: now, end: failure.until, nodes: [node] }]));
    report.moved.push(...this.startWaitingNow(now));
    return this.withProblems(report);
  }

  /** Nodes repaired recently are chosen last while they have failed more often than chance allows. */
  private judgeRecentRepairs(now: Instant): void {
    const rate = this.recentRepairs.rate(now);
    this.mm.chooseSettledFirst(rate.chosenLast ? this.recentRepairs.settleMs : 0, this.recentRepairs);
  }

  /**
   * Reservations that ran short of nodes to their window's end were kept, not given up: they are no longer problems.
   */
  protected keptShort(now: Instant): void {
    for (const job of this.problemJobs()) {
      const last = job.segments.at(-1);
      if (job.spec.window && last && job.spec.window.end <= now && last.end >= job.spec.window.end) delete job.problem;
    }
  }

  protected withProblems(report: ReplanReport): ReplanReport {
    this.keptShort(this.now);
    report.problematic = this.problematic();
    report.moved = [...new Set(report.moved)].filter((id) => this.jobs.has(id));
    return report;
  }

  // ---------------------------------------------------------------- figure 3.4
  /**
   * The SLA-aware algorithm of figure 3.4 on the current plan. R, S_res and S_nonres
   * outside P keep their places (steps 2 and 5); waiting best-effort jobs give way where a
   * problem needs their room (those displaced go back last, step 7); problematic SLA jobs
   * starting before `horizonEnd` (the problem horizon's end, or a longer failure block's)
   * are placed by order (running first, then waiting, value descending) without touching
   * S_nonres (step 3). What remains in P triggers suspension of best-effort jobs, then of
   * SLA jobs (3.5.2), and partial execution (3.5.3).
   */
  protected replan(now: Instant, gaveWay: Iterable<string> = [], horizonEnd = this.horizonEnd(now)): ReplanReport {
    const report: ReplanReport = { moved: [], suspended: [], problematic: [], solved: [] };
    // Waiting best-effort jobs give way where a problem needs their room (the searches look
    // past them) and go back last; the others keep their places, so a re-plan costs what it
    // moves, not the size of the plan.
    const displaced = new Set<string>(gaveWay);
    this.displaced = displaced;
    const problems = this.problemsInHorizon(now, horizonEnd);
    const bestEffortProblems = problems.filter((id) => isBestEffort((this.jobs.get(id) as PlannedJob).spec));
    try {
      let unsolved = this.solve(
        problems.filter((id) => !bestEffortProblems.includes(id)),
        now,
        report,
      );
      if (unsolved.length > 0) unsolved = this.suspendAndSolve(unsolved, now, report, 'best-effort');
      if (unsolved.length > 0) unsolved = this.suspendAndSolve(unsolved, now, report, 'sla');
      if (unsolved.length > 0) unsolved = this.solveMovingAside(unsolved, displaced, report);
      if (unsolved.length > 0 && this.cluster.timing.chanceShare < 1) this.runOnChance(unsolved, now, report);
    } finally {
      this.displaced = undefined;
    }
    for (const id of bestEffortProblems) delete (this.jobs.get(id) as PlannedJob).problem;
    const again = [
      ...new Set([
        ...displaced,
        ...bestEffortProblems,
        ...report.suspended.filter((id) => isBestEffort((this.jobs.get(id) as PlannedJob).spec)),
      ]),
    ];
    report.moved.push(...this.replaceBestEffort(again.sort((a, b) => this.fcfs(a, b))));
    return report;
  }

  /** P within the horizon, ordered: running before waiting, then value descending, then id. */
  protected problemsInHorizon(now: Instant, horizonEnd: Instant): string[] {
    // A reservation whose window is over has nothing left to place: it leaves with the clock (`advance`).
    const inP = this.problemJobs().filter(
      (j) =>
        !j.segments.some((s) => s.end > now) &&
        this.startsBefore(j, horizonEnd) &&
        !(j.spec.window && j.spec.window.end <= now),
    );
    const rank = (j: PlannedJob) => (j.segments.length > 0 ? 0 : 1);
    inP.sort((a, b) => rank(a) - rank(b) || b.spec.value - a.spec.value || (a.spec.id < b.spec.id ? -1 : 1));
    return inP.map((j) => j.spec.id);
  }

  protected startsBefore(job: PlannedJob, t: Instant): boolean {
    if (job.spec.window) return job.spec.window.start < t;
    return (job.spec.earliestStart ?? Number.NEGATIVE_INFINITY) < t;
  }

  /** Step 3 for each problem in order; returns those still unsolved (their reason updated). */
  protected solve(problems: string[], now: Instant, report: ReplanReport): string[] {
    const unsolved: string[] = [];
    for (const id of problems) {
      const job = this.jobs.get(id) as PlannedJob;
      const placed = this.placeProblem(job, now);
      if ('reason' in placed) {
        this.setProblem(job, `${job.problem?.split(': cannot')[0] ?? 'problem'}: cannot ${placed.reason}`);
        unsolved.push(id);
        continue;
      }
      this.bookPieces(job, placed);
      delete job.problem;
      report.solved.push(id);
      report.moved.push(id);
    }
    return unsolved;
  }

  /** Problems placed where waiting deadline jobs move aside within their deadlines; returns those still unsolved. */
  private solveMovingAside(problems: string[], gaveWay: Set<string>, report: ReplanReport): string[] {
    return problems.filter((id) => {
      const job = this.jobs.get(id) as PlannedJob;
      const moved = this.placedMovingAside(job, gaveWay);
      if (!moved) return true;
      delete job.problem;
      report.solved.push(id);
      report.moved.push(...moved);
      return false;
    });
  }

  protected bookPieces(job: PlannedJob, placed: Segment[], gaveWay = this.displaced): void {
    for (const s of placed)
      this.displaceWaiting(
        job.spec.id,
        s.start,
        s.end,
        [...s.nodes, ...s.spare].map((n) => this.mm.nodeIndex(n)),
        gaveWay,
      );
    for (const s of placed) this.bookSegment(job, s);
    job.segments = [...job.segments, ...placed];
    this.segmentsChanged(job);
  }

  /**
   * Deadline jobs still in P after every suspension: their estimated run does not fit before the deadline, even
   * covering no outage. Each runs anyway where nodes are free for at least `chanceShare` of that run (the longest
   * share that fits, from the earliest start) and stops by its deadline: a job that needs less than its estimate, as
   * most do, still keeps its promise. It stays in P while it runs; should it not finish, what its checkpoints secured
   * is kept, and it is placed again or its promise is broken at the deadline.
   */
  protected runOnChance(ids: readonly string[], now: Instant, report: ReplanReport): void {
    for (const id of ids) {
      const job = this.jobs.get(id) as PlannedJob;
      const spec = job.spec;
      if (spec.kind !== 'Deadline' || spec.deadline === undefined) continue;
      const shape = this.shape(job);
      const remaining = totalIntervals(job) - securedIntervals(job, shape, now);
      const restart = remaining < totalIntervals(job) || job.segments.length > 0;
      const wholeMs = pieceMs(shape, job.checkpoints, remaining, restart, 0, true);
      const from = Math.max(now, spec.earliestStart ?? now);
      const piece = this.chancePiece(job, shape, from, wholeMs, remaining, restart);
      if (!piece) continue;
      this.bookPieces(job, [piece]);
      this.setProblem(job, `${job.problem ?? 'problem'}; runs from ${at(piece.start)} on the chance it needs less`);
      report.moved.push(id);
    }
  }

  /**
   * The longest share of the run that fits before the deadline (at least `chanceShare` of it): a run that fits fits
   * shorter too, so the longest is found by halving the range, to a hundredth of the run.
   */
  private chancePiece(
    job: PlannedJob,
    shape: JobShape,
    from: Instant,
    wholeMs: number,
    remaining: number,
    restart: boolean,
  ): Segment | undefined {
    const deadline = job.spec.deadline as Instant;
    const slotFor = (lengthMs: number) =>
      this.findSlot(
        { ...this.needFor(job.spec, shape, lengthMs), spare: 0 },
        from,
        deadline - lengthMs,
        this.standbyFits(job.spec, lengthMs),
      );
    const second = (ms: number) => Math.floor(ms / 1000) * 1000; // promises are stated in whole seconds
    let shortest = Math.ceil((wholeMs * this.cluster.timing.chanceShare) / 1000) * 1000;
    let longest = second(Math.min(wholeMs - 1000, deadline - from));
    if (shortest > longest) return undefined;
    // Most often its nodes are free from now to the deadline.
    let best = slotFor(longest);
    let bestMs = longest;
    if (!best) {
      best = slotFor(shortest);
      if (!best) return undefined;
      bestMs = shortest;
      const precision = Math.max(1000, second(wholeMs / 100));
      while (longest - shortest > precision) {
        const middle = second((shortest + longest) / 2);
        const found = slotFor(middle);
        if (found) [best, bestMs, shortest] = [found, middle, middle];
        else longest = middle - 1000;
      }
    }
    // The whole intervals it checkpoints on the way: what it secures should the job need all of its estimate.
    const secures = intervalsWithin(shape, job.checkpoints, bestMs, restart, remaining - 1);
    return { ...this.segment(job.spec, best.nodes, best.start, best.start + bestMs, restart, secures), onChance: true };
  }

  /** A problematic job's remaining work: whole if it fits its SLA, else in pieces through gaps (3.5.3). */
  protected placeProblem(job: PlannedJob, now: Instant): Segment[] | { reason: string } {
    const shape = this.shape(job);
    const secured = securedIntervals(job, shape, now);
    const remaining = totalIntervals(job) - secured;
    const spec = job.spec;
    if (!spec.window && remaining <= 0) return []; // every interval secured: it has finished
    if (spec.window) {
      if (spec.window.end <= now) return { reason: `keep the reservation: its window ended at ${at(spec.window.end)}` };
      const placed = this.placeReservation(
        spec,
        shape,
        Math.max(now, spec.window.start),
        spec.window.end,
        undefined,
        secured,
        totalIntervals(job),
      );
      return 'reason' in placed ? { reason: `keep the reservation: ${placed.reason}` } : placed.segments;
    }
    const from = Math.max(now, spec.earliestStart ?? now);
    const restart = secured > 0 || job.segments.length > 0;
    const whole = this.placeRun(spec, shape, job.checkpoints, from, remaining, restart, undefined, job.outagesLeft);
    if (!('reason' in whole)) return whole.segments;
    if (spec.kind !== 'Deadline' || !shape.checkpointed) return { reason: `restart in time: ${whole.reason}` };
    const pieces = this.placeInPieces(job, shape, from, remaining);
    if (pieces) return pieces;
    const fewer = this.placeCoveringFewer(job, shape, from, remaining, restart);
    if (Array.isArray(fewer)) return fewer;
    const unprotected = fewer
      ? `; nor covering fewer outages: ${fewer.reason.replace(this.deadlineReason(spec, ''), '')}`
      : '';
    return { reason: `restart in time: ${whole.reason}; no gaps for partial execution either${unprotected}` };
  }

  /**
   * A deadline job that cannot be placed to meet its deadline under every outage its level still covers is placed
   * covering fewer (the most that fit, down to none), whole or in pieces: it then meets the deadline unless more
   * failures hit it, where leaving it unplaced breaks the promise for certain. Its remaining promise is what the plan
   * now covers (`outagesLeft`). Undefined when it covers none already; else why not even uncovered.
   */
  private placeCoveringFewer(
    job: PlannedJob,
    shape: JobShape,
    from: Instant,
    remaining: number,
    restart: boolean,
  ): Segment[] | { reason: string } | undefined {
    const covered = job.outagesLeft;
    let refused: { reason: string } | undefined;
    for (let outages = covered - 1; outages >= 0; outages--) {
      const whole = this.placeRun(job.spec, shape, job.checkpoints, from, remaining, restart, undefined, outages);
      job.outagesLeft = outages;
      const placed = 'reason' in whole ? this.placeInPieces(job, shape, from, remaining) : whole.segments;
      if (placed) return placed;
      if ('reason' in whole) refused = whole;
    }
    job.outagesLeft = covered;
    return refused;
  }
}

/** Two re-plans' reports as one: everything either moved, suspended or solved; what the later one left in P. */
function mergedReports(first: ReplanReport, later: ReplanReport): ReplanReport {
  return {
    moved: [...new Set([...first.moved, ...later.moved])],
    suspended: [...new Set([...first.suspended, ...later.suspended])],
    solved: [...new Set([...first.solved, ...later.solved])],
    problematic: later.problematic,
  };
}
