import { checkpointPlanAt, pieceMs, preparationMs, releaseMs, securedIntervals } from './job-timing.js';
import type { AdmissionDecision, Alternative, Instant, JobSpec, PlannedJob, Segment, StartSlot } from './model.js';
import { PlanReplanning } from './plan-replanning.js';
import { promiseRiskRefusal } from './promise-risk.js';
import { at, isBestEffort, type AdmitOptions } from './plan-book.js';

export { failureOwner, isBestEffort, type AdmitOptions } from './plan-book.js';

/**
 * The Planning Manager (002 section 4.2.2 and chapter 3): decides start times and
 * acceptance for every kind of job and keeps the plan consistent through failures,
 * repairs and early finishes. Pure and deterministic: time comes in as `now`, nothing
 * is read from a clock, and the same calls give the same plan.
 *
 * It is built in layers, one file each: the plan and its books (plan-book.ts), placement
 * (plan-placement.ts), what saves a job a failure hits (plan-suspension.ts), re-planning
 * (plan-replanning.ts), and here admission, start slots and counter-offers.
 */
export class PlanningManager extends PlanReplanning {
  // ---------------------------------------------------------------- admission
  /** Decides a request without booking anything. */
  probe(spec: JobSpec, now: Instant, options: AdmitOptions = {}): AdmissionDecision {
    this.clock(now);
    const refusal = this.validate(spec);
    if (refusal) return { accepted: false, reason: refusal };
    const placed = isBestEffort(spec)
      ? this.findPlacement(spec, now, options)
      : this.sparingThoseAhead(() => this.findPlacement(spec, now, options));
    if ('reason' in placed) return { accepted: false, reason: placed.reason };
    // A new promise only: one renegotiated keeps the risk it was accepted with.
    const risky =
      options.replacing === undefined
        ? promiseRiskRefusal(spec, () => this.failureRateOf(spec), this.cluster.timing.promiseRiskLimit)
        : undefined;
    if (risky) return { accepted: false, reason: risky };
    return { accepted: true, job: this.plannedJob(spec, placed) };
  }

  /**
   * Figure 3.4 steps 4, 6 and 7 for one new request: a reservation or deadline job is
   * inserted where it keeps its SLA without touching any accepted SLA job (waiting
   * best-effort jobs give way and move later); a best-effort or background job is never
   * rejected and goes first come first served into the earliest gap.
   */
  admit(spec: JobSpec, now: Instant, options: AdmitOptions = {}): AdmissionDecision & { moved?: string[] } {
    if (this.jobs.has(spec.id)) throw new Error(`job "${spec.id}" is already planned`);
    // A bid ranked before waiting best-effort work goes ahead of it: that work gives way and goes back after it.
    // Tags mostly rise as jobs arrive, so the waiting jobs are searched only when one may rank after this one.
    const overtakes = spec.queueTag !== undefined && spec.queueTag < this.highestTag && isBestEffort(spec);
    if (overtakes) this.clock(now);
    const behind = overtakes ? this.waitingTaggedAfter(spec.queueTag as number) : [];
    for (const id of behind) this.mm.unbook(id);
    const putBack = () => this.replaceBestEffort(behind.sort((a, b) => this.fcfs(a, b)));
    const decision = this.probe(spec, now, options);
    const refusal = decision.accepted ? options.accept?.(decision.job) : undefined;
    if (!decision.accepted || refusal !== undefined) {
      putBack();
      return decision.accepted ? { accepted: false, reason: refusal as string } : decision;
    }
    const moved = this.insert(decision.job, options.replacing);
    // Best-effort work does not wait while nodes are free now.
    const started = isBestEffort(spec) ? this.startWaitingNow(now) : [];
    return { ...decision, moved: [...new Set([...moved, ...putBack(), ...started])] };
  }

  /** The virtual time of the bid market: the latest start tag of best-effort work that has begun. */
  virtualTime(): number {
    let v = 0;
    for (const job of this.startedJobs())
      if (job.spec.queueTag !== undefined && job.spec.queueTag > v) v = job.spec.queueTag;
    return v;
  }

  /** Waiting best-effort jobs whose start tag ranks after `tag`. */
  protected waitingTaggedAfter(tag: number): string[] {
    const out: string[] = [];
    for (const job of this.jobs.values()) {
      if (job.spec.queueTag !== undefined && job.spec.queueTag > tag && this.isWaitingBestEffort(job.spec.id))
        out.push(job.spec.id);
    }
    return out;
  }

  /**
   * An interactive job (CrossBroker, Fernández del Castillo 2008): it starts within `boundMs` of now or is
   * refused at once, never queued. It is planned as a reservation of its runtime from the
   * earliest start in the bound. When there is none, running best-effort and background
   * jobs are suspended (cut at now: what their checkpoints secured is kept) one at a time,
   * those that lose least work per node first, until it fits; they go back into the plan after it,
   * first come first served. SLA jobs are never suspended for it. `suspend: false` (a
   * baseline for the simulator) only takes nodes that are free within the bound.
   */
  admitInteractive(
    spec: JobSpec,
    now: Instant,
    boundMs: number,
    options: AdmitOptions & { suspend?: boolean } = {},
  ): AdmissionDecision & { moved?: string[]; suspended?: string[] } {
    this.clock(now);
    const length = spec.runtimeSeconds * 1000;
    // Nodes kept prepared for sessions need only the hand-over; without a warm pool a session waits for cold nodes.
    const prepared = this.cluster.nodes.some((node) => node.warm);
    const startingAt = (start: Instant): JobSpec => ({
      ...spec,
      kind: 'Reservation',
      window: { start, end: start + length },
      ...(prepared ? { prepared } : {}),
    });
    let reason = `no ${spec.nodes} nodes are free within ${boundMs / 1000} s of now`;
    const startSoon = () => {
      const [slot] = this.slots(startingAt(now), now, 1, options);
      if (!slot || slot.start > now + boundMs) return undefined;
      const decision = this.admit(startingAt(slot.start), now, options);
      if (!decision.accepted) reason = decision.reason;
      return decision.accepted ? decision : undefined;
    };
    // Preparation longer than the bound: no suspension can help; the soonest start is the answer.
    const prepare = preparationMs(this.shapeFor(spec), false, prepared);
    if (prepare > boundMs) {
      const [soonest] = this.slots(startingAt(now), now, 1, options);
      return {
        accepted: false,
        reason:
          `an interactive job starts within ${boundMs / 1000} s or not at all: its nodes need ` +
          `${prepare / 1000} s of preparation (node initialisation, storage, mount and hand-over)` +
          (prepared ? '' : ' and no nodes are kept prepared for interactive sessions (WSAG_WARM_NODES)') +
          (soonest ? `; the soonest start the site can promise is ${at(soonest.start)}` : ''),
      };
    }
    const direct = startSoon();
    if (direct) return direct;
    if (options.suspend === false)
      return {
        accepted: false,
        reason: `an interactive job starts within ${boundMs / 1000} s or not at all: ${reason}`,
      };
    // The work a suspension throws away, per node: what ran since the piece began (less what its checkpoints secured).
    const runningPiece = (job: PlannedJob) => job.segments.find((s) => s.start <= now && now < s.end);
    const lostPerNode = (job: PlannedJob) => {
      const piece = runningPiece(job) as Segment;
      const shape = this.shape(job);
      const done = job.segments.filter((s) => s.end <= piece.start).reduce((n, s) => n + s.intervals, 0);
      const secured = securedIntervals(job, shape, now) - done;
      return now - piece.start - secured * (job.checkpoints.intervalSeconds + job.checkpoints.checkpointSeconds) * 1000;
    };
    const running = this.startedJobs()
      .filter((j) => isBestEffort(j.spec) && runningPiece(j) !== undefined)
      .sort((a, b) => lostPerNode(a) - lostPerNode(b) || (a.spec.id < b.spec.id ? -1 : 1));
    // Whether suspending `victims` would make room (nothing is kept), and suspending them for real.
    const undoable = <T>(victims: PlannedJob[], run: () => T, keep: (result: T) => boolean): T => {
      const snapshot = this.snapshot(victims.map((j) => j.spec.id));
      const trial = this.beginTrial();
      for (const job of victims) this.cut(job, now);
      const result = run();
      if (keep(result)) {
        this.commitTrial(trial);
      } else {
        this.rollbackTrial(trial);
        this.restoreSnapshot(snapshot);
      }
      return result;
    };
    const fitsWithout = (victims: PlannedJob[]) =>
      undoable(
        victims,
        () => {
          const [slot] = this.slots(startingAt(now), now, 1, options);
          return slot !== undefined && slot.start <= now + boundMs;
        },
        () => false,
      );
    const suspend = (victims: PlannedJob[]) => {
      const decision = undoable(victims, startSoon, (d) => d !== undefined);
      if (!decision) return undefined;
      const suspended = victims.map((j) => j.spec.id);
      const back = this.replaceBestEffort([...suspended].sort((a, b) => this.fcfs(a, b)));
      return { ...decision, moved: [...new Set([...(decision.moved ?? []), ...suspended, ...back])], suspended };
    };
    // One job if one is enough (the cheapest that is), else the shortest prefix of the cheapest that is.
    const single = running.find((job) => fitsWithout([job]));
    let victims = single ? [single] : undefined;
    if (!victims && running.length > 1 && fitsWithout(running)) {
      let [lower, upper] = [2, running.length];
      while (lower < upper) {
        const mid = (lower + upper) >> 1;
        if (fitsWithout(running.slice(0, mid))) upper = mid;
        else lower = mid + 1;
      }
      victims = running.slice(0, upper);
    }
    const decision = victims && suspend(victims);
    if (decision) return decision;
    const what =
      running.length === 0
        ? 'and no best-effort or background job runs that could make room'
        : `even with the ${running.length} running best-effort and background job(s) suspended`;
    return {
      accepted: false,
      reason:
        `an interactive job starts within ${boundMs / 1000} s or not at all: ${reason}, ${what} (SLA ` +
        `jobs are never suspended for it)`,
    };
  }

  /** Puts a job back exactly as it was planned (restart of the server); false if its nodes are no longer free. */
  restore(job: PlannedJob, options: AdmitOptions = {}): boolean {
    if (this.jobs.has(job.spec.id)) return false;
    if (job.segments.some((s) => !Number.isFinite(s.start) || !Number.isFinite(s.end) || s.end < s.start)) return false;
    for (const segment of job.segments) {
      for (const id of [...segment.nodes, ...segment.spare]) {
        if (!this.mm.hasNode(id)) return false;
        if (!this.mm.isFree(this.mm.nodeIndex(id), segment.start, segment.end, options.replacing)) return false;
      }
    }
    this.insert(job, options.replacing);
    return true;
  }

  /**
   * Up to `count` start slots for a request (advisory answers): where its nodes are free
   * for its whole slot, earliest first, each beginning when the previous would end or
   * where nodes become free. Deadlines are not checked: a slot after the deadline is a
   * counter-offer with a later deadline.
   */
  slots(spec: JobSpec, now: Instant, count: number, options: AdmitOptions = {}): StartSlot[] {
    this.clock(now);
    if (this.validate(spec) || spec.kind === 'Background') return [];
    const shape = this.shapeFor(spec);
    const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, now);
    if ('reason' in plan) return [];
    // A window's slot is the promise: its booking adds the nodes' preparation before and their release after.
    const before = spec.window ? preparationMs(shape, false, spec.prepared) : 0;
    const lengthMs = spec.window
      ? spec.window.end - spec.window.start
      : pieceMs(shape, plan, plan.count + 1, false, shape.booksWorstCase ? shape.timing.outages : 0, true);
    const bookedMs = spec.window ? before + lengthMs + releaseMs(shape) : lengthMs;
    const need = this.needFor(spec, shape, bookedMs, options.replacing);
    const out: StartSlot[] = [];
    let from = Math.max(now, (spec.window?.start ?? spec.earliestStart ?? now) - before);
    while (out.length < count) {
      const found = this.findSlot(need, from);
      if (!found) break;
      out.push({ start: found.start + before, end: found.start + before + lengthMs, nodes: spec.nodes });
      // The next slot begins where a booking ends or right after this one.
      from = Math.min(found.start + bookedMs, this.mm.profile.nextReleaseAfter(found.start) ?? Infinity);
    }
    return out;
  }

  /**
   * Counter-offers for a request that cannot be served as asked (negotiation): the
   * earliest later start (a reservation window moved), a later deadline (the earliest
   * completion), and the most nodes below the request that meet it as asked (runtime
   * scaled, assuming the work divides evenly over nodes).
   */
  alternatives(spec: JobSpec, now: Instant, options: AdmitOptions = {}): Alternative[] {
    this.clock(now);
    const out: Alternative[] = [];
    if (this.validate(spec)) return out;
    const [slot] = this.slots(spec, now, 1, options);
    if (slot) {
      if (spec.window) {
        const length = spec.window.end - spec.window.start;
        out.push({
          kind: 'LaterStart',
          spec: { ...spec, window: { start: slot.start, end: slot.start + length } },
          slot,
          description: `the same window moved to start at ${at(slot.start)}`,
        });
      } else if (spec.deadline !== undefined) {
        const later = this.earliestCompletion(spec, now, options);
        if (later !== undefined && later > spec.deadline) {
          const moved = { ...spec, deadline: later };
          const decision = this.probe(moved, now, options);
          if (decision.accepted) {
            const first = decision.job.segments[0] as Segment;
            out.push({
              kind: 'LaterDeadline',
              spec: moved,
              slot: { start: first.start, end: first.end, nodes: spec.nodes },
              description: `deadline ${at(later)} instead of ${at(spec.deadline)}`,
            });
          }
        }
      }
    }
    for (let nodes = spec.nodes - 1; nodes >= 1; nodes--) {
      const fewer: JobSpec = {
        ...spec,
        nodes,
        runtimeSeconds: spec.window ? spec.runtimeSeconds : Math.ceil((spec.runtimeSeconds * spec.nodes) / nodes),
      };
      const decision = this.probe(fewer, now, options);
      if (!decision.accepted) continue;
      const first = decision.job.segments[0] as Segment;
      // A window's slot is the promise.
      const slot = fewer.window ? { ...fewer.window, nodes } : { start: first.start, end: first.end, nodes };
      out.push({
        kind: 'FewerNodes',
        spec: fewer,
        slot,
        description:
          `${nodes} nodes instead of ${spec.nodes}` + `${spec.window ? '' : ` (runtime ${fewer.runtimeSeconds} s)`}`,
      });
      break;
    }
    return out;
  }

  protected earliestCompletion(spec: JobSpec, now: Instant, options: AdmitOptions): Instant | undefined {
    const relaxed = { ...spec, deadline: undefined, kind: 'Deadline' as const };
    const decision = this.probe(relaxed, now, { ...options, optimumCount: true });
    if (!decision.accepted) return undefined;
    const shape = this.shapeFor(spec);
    const first = decision.job.segments[0] as Segment;
    const worst = pieceMs(
      shape,
      decision.job.checkpoints,
      first.intervals,
      false,
      shape.deadlineCoversOutages ? shape.timing.outages : 0,
      true,
    );
    return Math.ceil((first.start + Math.max(worst, first.end - first.start)) / 1000) * 1000;
  }
}
