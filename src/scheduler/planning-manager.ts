import { isoTime } from '../domain/time.js';
import { CapacityProfile } from './capacity-profile.js';
import type { CheckpointPlan } from './checkpoint-plan.js';
import { InstantQueue } from './instant-queue.js';
import { checkpointPlanAt, pieceMs, securedIntervals, shapeOf, totalIntervals, type JobShape } from './job-timing.js';
import { MachineManager } from './machine-manager.js';
import type { AdmissionDecision, Alternative, ClusterDescription, Instant, JobSpec, PlannedJob, ReplanReport, Segment, StartSlot } from './model.js';

const at = (t: Instant) => isoTime(new Date(t));

/** Where a job could go: its first segment and the concrete nodes. */
interface Placement {
  segments: Segment[];
  checkpoints: CheckpointPlan;
}

interface Need {
  nodes: number;
  spare: number;
  eligible: readonly number[];
  oneIsland: boolean;
  lengthMs: number;
  replacing?: string;
  /** Waiting best-effort jobs give way (figure 3.4 inserts B last). */
  displaceWaiting: boolean;
}

export interface AdmitOptions {
  /** A job this one would replace (renegotiation): its capacity counts as free for the new one. */
  replacing?: string;
  /** The caller's last word on the placement found (the agreement's objectives): a reason refuses it, and nothing is booked. */
  accept?: (job: PlannedJob) => string | undefined;
}

/**
 * The Planning Manager (002 section 4.2.2 and chapter 3): decides start times and
 * acceptance for every kind of job and keeps the plan consistent through failures,
 * repairs and early finishes. Pure and deterministic: time comes in as `now`, nothing
 * is read from a clock, and the same calls give the same plan.
 */
export class PlanningManager {
  readonly mm: MachineManager;
  private readonly jobs = new Map<string, PlannedJob>();
  private readonly shapes = new Map<string, JobShape>();
  private readonly remote = new CapacityProfile();
  /** Failed nodes (by index) and the end of their failure block. */
  private readonly failed = new Map<number, { since: Instant; until: Instant }>();
  private now: Instant = Number.NEGATIVE_INFINITY;
  /**
   * Indexes so an event costs what it touches, not the size of the plan. Each holds a
   * superset of what it names (every entry is checked when read, and dropped once it no
   * longer holds), so they stay right without knowing every way a job changes:
   * - `inP`: jobs that may be in P (every `problem` is set through `setProblem` or `insert`);
   * - `started`: jobs that may have started (first segment at or before the clock), fed by
   *   `startsAhead` as the clock passes the first starts queued by `segmentsChanged`;
   * - `order`: each job's place in `jobs`, so lists built from the indexes come out in the
   *   order a scan of all jobs gives.
   */
  private readonly inP = new Set<string>();
  private readonly started = new Set<string>();
  private readonly startsAhead = new InstantQueue();
  private readonly order = new Map<string, number>();
  private inserted = 0;

  constructor(readonly cluster: ClusterDescription) {
    this.mm = new MachineManager(cluster.nodes);
  }

  get size(): number {
    return this.jobs.size;
  }

  job(id: string): PlannedJob | undefined {
    return this.jobs.get(id);
  }

  allJobs(): IterableIterator<PlannedJob> {
    return this.jobs.values();
  }

  /** P: jobs whose promise is endangered, with the reason. */
  problematic(): Array<{ id: string; reason: string }> {
    return this.inOrder(this.problemJobs()).map((j) => ({ id: j.spec.id, reason: j.problem as string }));
  }

  /** The jobs in P (in no particular order). */
  private problemJobs(): PlannedJob[] {
    const out: PlannedJob[] = [];
    for (const id of this.inP) {
      const job = this.jobs.get(id);
      if (job?.problem !== undefined) out.push(job);
      else this.inP.delete(id);
    }
    return out;
  }

  /** The jobs that have started (first segment at or before the clock), in no particular order. */
  private startedJobs(): PlannedJob[] {
    const out: PlannedJob[] = [];
    for (const id of this.started) {
      const job = this.jobs.get(id);
      if (job && this.hasStarted(job)) out.push(job);
      else this.started.delete(id);
    }
    return out;
  }

  /** Jobs in the order of the plan (as `allJobs` gives them). */
  private inOrder(jobs: PlannedJob[]): PlannedJob[] {
    return jobs.sort((a, b) => (this.order.get(a.spec.id) as number) - (this.order.get(b.spec.id) as number));
  }

  private setProblem(job: PlannedJob, reason: string): void {
    job.problem = reason;
    this.inP.add(job.spec.id);
  }

  /** A job's segments changed: a first start at or before the clock has started, a later one is queued for the clock. */
  private segmentsChanged(job: PlannedJob): void {
    const first = job.segments[0];
    if (!first) return;
    if (first.start <= this.now) this.started.add(job.spec.id);
    else this.startsAhead.push(first.start, job.spec.id);
  }

  shape(job: PlannedJob): JobShape {
    let shape = this.shapes.get(job.spec.id);
    if (!shape) {
      shape = shapeOf(job.spec, this.cluster.timing);
      this.shapes.set(job.spec.id, shape);
    }
    return shape;
  }

  isFailed(nodeId: string): boolean {
    return this.failed.has(this.mm.nodeIndex(nodeId));
  }

  // ---------------------------------------------------------------- admission

  /** Decides a request without booking anything. */
  probe(spec: JobSpec, now: Instant, options: AdmitOptions = {}): AdmissionDecision {
    this.clock(now);
    const refusal = this.validate(spec);
    if (refusal) return { accepted: false, reason: refusal };
    const placed = this.findPlacement(spec, now, options);
    if ('reason' in placed) return { accepted: false, reason: placed.reason };
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
    return { ...decision, moved: [...new Set([...moved, ...putBack()])] };
  }

  /** The virtual time of the bid market: the latest start tag of best-effort work that has begun. */
  virtualTime(): number {
    let v = 0;
    for (const job of this.startedJobs()) if (job.spec.queueTag !== undefined && job.spec.queueTag > v) v = job.spec.queueTag;
    return v;
  }

  /** No planned job has a start tag above this (it only rises: an upper bound is all `admit` needs). */
  private highestTag = Number.NEGATIVE_INFINITY;

  /** Waiting best-effort jobs whose start tag ranks after `tag`. */
  private waitingTaggedAfter(tag: number): string[] {
    const out: string[] = [];
    for (const job of this.jobs.values()) {
      if (job.spec.queueTag !== undefined && job.spec.queueTag > tag && this.isWaitingBestEffort(job.spec.id)) out.push(job.spec.id);
    }
    return out;
  }

  /**
   * An interactive job (CrossBroker, seed 001): it starts within `boundMs` of now or is
   * refused at once, never queued. It is planned as a reservation of its runtime from the
   * earliest start in the bound. When there is none, running best-effort and background
   * jobs are suspended (cut at now: what their checkpoints secured is kept) one at a time,
   * those that lose least work per node first, until it fits; they go back into the plan after it,
   * first come first served. SLA jobs are never suspended for it. `suspend: false` (a
   * baseline for the simulator) only takes nodes that are free within the bound.
   */
  admitInteractive(spec: JobSpec, now: Instant, boundMs: number, options: AdmitOptions & { suspend?: boolean } = {}): AdmissionDecision & { moved?: string[]; suspended?: string[] } {
    this.clock(now);
    const length = spec.runtimeSeconds * 1000;
    const startingAt = (start: Instant): JobSpec => ({ ...spec, kind: 'Reservation', window: { start, end: start + length } });
    let reason = `no ${spec.nodes} nodes are free within ${boundMs / 1000} s of now`;
    const startSoon = () => {
      const [slot] = this.slots(startingAt(now), now, 1, options);
      if (!slot || slot.start > now + boundMs) return undefined;
      const decision = this.admit(startingAt(slot.start), now, options);
      if (!decision.accepted) reason = decision.reason;
      return decision.accepted ? decision : undefined;
    };
    const direct = startSoon();
    if (direct) return direct;
    if (options.suspend === false) return { accepted: false, reason: `an interactive job starts within ${boundMs / 1000} s or not at all: ${reason}` };
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
    const fitsWithout = (victims: PlannedJob[]) => undoable(victims, () => {
      const [slot] = this.slots(startingAt(now), now, 1, options);
      return slot !== undefined && slot.start <= now + boundMs;
    }, () => false);
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
    const what = running.length === 0 ? 'and no best-effort or background job runs that could make room' : `even with the ${running.length} running best-effort and background job(s) suspended`;
    return { accepted: false, reason: `an interactive job starts within ${boundMs / 1000} s or not at all: ${reason}, ${what} (SLA jobs are never suspended for it)` };
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

  /** Removes a job and everything it booked (terminated, rejected, expired). */
  release(id: string): void {
    if (!this.jobs.has(id)) return;
    this.mm.unbook(id);
    this.dropRemote(this.jobs.get(id) as PlannedJob);
    this.jobs.delete(id);
    this.order.delete(id);
    this.inP.delete(id);
    this.started.delete(id);
    this.shapes.delete(id);
    this.mm.setSoft(id, false);
  }

  /** Moves a job to another id (a hold becoming an agreement). */
  rename(from: string, to: string): boolean {
    const job = this.jobs.get(from);
    if (!job || this.jobs.has(to)) return false;
    const segments = job.segments;
    this.release(from);
    const renamed: PlannedJob = { ...job, spec: { ...job.spec, id: to }, segments };
    this.insert(renamed);
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
    const shape = shapeOf(spec, this.cluster.timing);
    const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, now);
    if ('reason' in plan) return [];
    const lengthMs = spec.window ? spec.window.end - spec.window.start : pieceMs(shape, plan, plan.count + 1, false, shape.booksWorstCase ? shape.timing.outages : 0, true);
    const need = this.needFor(spec, shape, lengthMs, options.replacing);
    const out: StartSlot[] = [];
    let from = Math.max(now, spec.window?.start ?? spec.earliestStart ?? now);
    while (out.length < count) {
      const found = this.findSlot(need, from);
      if (!found) break;
      out.push({ start: found.start, end: found.start + lengthMs, nodes: spec.nodes });
      // The next slot begins where a booking ends or right after this one.
      from = Math.min(found.start + lengthMs, this.mm.profile.nextReleaseAfter(found.start) ?? Infinity);
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
        out.push({ kind: 'LaterStart', spec: { ...spec, window: { start: slot.start, end: slot.start + length } }, slot, description: `the same window moved to start at ${at(slot.start)}` });
      } else if (spec.deadline !== undefined) {
        const later = this.earliestCompletion(spec, now, options);
        if (later !== undefined && later > spec.deadline) {
          const moved = { ...spec, deadline: later };
          const decision = this.probe(moved, now, options);
          if (decision.accepted) {
            const first = decision.job.segments[0] as Segment;
            out.push({ kind: 'LaterDeadline', spec: moved, slot: { start: first.start, end: first.end, nodes: spec.nodes }, description: `deadline ${at(later)} instead of ${at(spec.deadline)}` });
          }
        }
      }
    }
    for (let nodes = spec.nodes - 1; nodes >= 1; nodes--) {
      const fewer: JobSpec = { ...spec, nodes, runtimeSeconds: spec.window ? spec.runtimeSeconds : Math.ceil((spec.runtimeSeconds * spec.nodes) / nodes) };
      const decision = this.probe(fewer, now, options);
      if (!decision.accepted) continue;
      const first = decision.job.segments[0] as Segment;
      out.push({ kind: 'FewerNodes', spec: fewer, slot: { start: first.start, end: first.end, nodes }, description: `${nodes} nodes instead of ${spec.nodes}${spec.window ? '' : ` (runtime ${fewer.runtimeSeconds} s)`}` });
      break;
    }
    return out;
  }

  // ---------------------------------------------------------------- placement

  private validate(spec: JobSpec): string | undefined {
    // No time or count that is not a finite number enters the capacity profile: it would corrupt it for every later job.
    const numbers = [spec.nodes, spec.runtimeSeconds, spec.arrival, spec.earliestStart, spec.deadline, spec.window?.start, spec.window?.end, spec.storageGB];
    if (numbers.some((n) => n !== undefined && !Number.isFinite(n))) return 'the request holds a time or a count that is not a finite number';
    if (spec.window && spec.window.end <= spec.window.start) return 'the reservation window ends before it starts';
    const usable = this.mm.eligible(spec.requirements, isBestEffort(spec)).length;
    if (spec.nodes < 1) return 'a job needs at least one node';
    if (spec.nodes + shapeOf(spec, this.cluster.timing).spare > usable) {
      const spare = shapeOf(spec, this.cluster.timing).spare;
      const policies = spec.requirements.securityPolicies;
      const hosts = spec.requirements.candidateHosts;
      const policyNote =
        (policies ? ` (sla:SecurityPolicy ${policies.join(', ')}: ${this.mm.eligible({ securityPolicies: policies }, true).length} node(s) of the cluster meet it)` : '') +
        (hosts ? ` (jsdl:CandidateHosts ${hosts.join(', ')}: ${this.mm.eligible({ candidateHosts: hosts }, true).length} of them are nodes of the cluster)` : '');
      return `${spec.nodes} nodes${spare ? ` plus ${spare} spare node(s) for ${spec.level} service` : ''} requested but the cluster has ${usable} ${usable === this.cluster.nodes.length ? 'nodes' : 'nodes that meet the requirements'}${isBestEffort(spec) ? '' : ' available to SLA jobs'}${policyNote}`;
    }
    if (spec.requirements.interconnect !== undefined) {
      const largest = this.mm.largestIsland(this.mm.eligible(spec.requirements, isBestEffort(spec)));
      const spare = shapeOf(spec, this.cluster.timing).spare;
      if (spec.nodes + spare > largest) {
        return `${spec.nodes + spare} nodes on ${spec.requirements.interconnect} must share one interconnect island, but the largest suitable island has ${largest}`;
      }
    }
    if (spec.window) {
      if (spec.window.end <= spec.window.start) return `reservation window ends (${at(spec.window.end)}) before it starts (${at(spec.window.start)})`;
      if (spec.window.start < this.now) return `reservation window starts in the past (${at(spec.window.start)}, now ${at(this.now)})`;
      return undefined;
    }
    if (!(spec.runtimeSeconds > 0)) return 'a runtime estimate (sla:RuntimeEstimate) or a reservation window is required to plan the job';
    if (spec.deadline !== undefined && spec.deadline <= this.now) return `deadline ${at(spec.deadline)} has already passed (now ${at(this.now)})`;
    if (spec.level === 'Full' && this.cluster.peerStandbyNodes < spec.nodes) {
      return `Full service needs ${spec.nodes} standby nodes reserved at a peer provider, but ${this.cluster.peerStandbyNodes === 0 ? 'no peer standby capacity is configured' : `only ${this.cluster.peerStandbyNodes} are configured`}`;
    }
    return undefined;
  }

  private needFor(spec: JobSpec, shape: JobShape, lengthMs: number, replacing?: string): Need {
    return {
      nodes: spec.nodes,
      spare: shape.spare,
      eligible: this.mm.eligible(spec.requirements, isBestEffort(spec)),
      oneIsland: spec.requirements.interconnect !== undefined,
      lengthMs,
      ...(replacing !== undefined ? { replacing } : {}),
      displaceWaiting: !isBestEffort(spec),
    };
  }

  /** The whole placement of a new job as the rules of its kind and level demand, or why not. */
  private findPlacement(spec: JobSpec, now: Instant, options: AdmitOptions): Placement | { reason: string } {
    const shape = shapeOf(spec, this.cluster.timing);
    if (spec.window) return this.placeReservation(spec, shape, spec.window.start, spec.window.end, options.replacing, 0, totalIntervalsOf(shape, spec, spec.window.start));
    const from = Math.max(now, spec.earliestStart ?? now);
    const plan = checkpointPlanAt(spec, shape, from);
    if ('reason' in plan) return { reason: this.deadlineReason(spec, plan.reason) };
    return this.placeRun(spec, shape, plan, from, plan.count + 1, false, options.replacing);
  }

  /** A reservation keeps its window; only the nodes may change. */
  private placeReservation(spec: JobSpec, shape: JobShape, start: Instant, end: Instant, replacing: string | undefined, doneIntervals: number, total: number): Placement | { reason: string } {
    const checkpoints = checkpointPlanAt({ ...spec, deadline: undefined }, shape, start);
    if ('reason' in checkpoints) return checkpoints;
    const need = this.needFor(spec, shape, end - start, replacing);
    const nodes = this.mapAt(need, start);
    if (!nodes) {
      const free = this.freeThroughout(need, start, end);
      return {
        reason:
          `${spec.nodes}${shape.spare ? ` + ${shape.spare} spare` : ''} nodes are not free from ${at(start)} to ${at(end)}: ` +
          `${free} of ${need.eligible.length} ${need.eligible.length === this.cluster.nodes.length ? '' : 'suitable '}nodes are free throughout that window`,
      };
    }
    const remote = this.remoteCheck(spec, start, end);
    if (remote) return { reason: remote };
    return {
      checkpoints,
      segments: [this.segment(spec, nodes, start, end, doneIntervals > 0, Math.max(1, total - doneIntervals))],
    };
  }

  /** A run of `intervals` intervals from `from` on: earliest fit, within the deadline for SLA jobs. */
  private placeRun(spec: JobSpec, shape: JobShape, plan: CheckpointPlan, from: Instant, intervals: number, restart: boolean, replacing?: string, outagesLeft?: number): Placement | { reason: string } {
    const outages = outagesLeft ?? shape.timing.outages;
    const lengthMs = pieceMs(shape, plan, intervals, restart, shape.booksWorstCase ? outages : 0, true);
    const worstMs = pieceMs(shape, plan, intervals, restart, shape.deadlineCoversOutages ? outages : 0, true);
    const need = this.needFor(spec, shape, lengthMs, replacing);
    const latestStart = spec.deadline !== undefined && spec.kind === 'Deadline' ? spec.deadline - Math.max(lengthMs, worstMs) : undefined;
    const standbyFrom = spec.level === 'Full' ? (t: Instant) => this.remote.firstFit(t, lengthMs, this.cluster.peerStandbyNodes - spec.nodes) : undefined;
    const found = this.findSlot(need, from, latestStart, (start) => this.remoteCheck(spec, start, start + lengthMs) === undefined, standbyFrom);
    if (!found) {
      if (latestStart !== undefined && latestStart < from) {
        return { reason: this.lateReason(spec, plan, from + Math.max(lengthMs, worstMs), shape) };
      }
      const earliest = this.findSlot({ ...need }, from);
      if (earliest && spec.deadline !== undefined) return { reason: this.lateReason(spec, plan, earliest.start + Math.max(lengthMs, worstMs), shape) };
      return { reason: this.remoteCheck(spec, from, from + lengthMs) ?? `${spec.nodes} nodes are never free for ${Math.ceil(lengthMs / 1000)} s` };
    }
    return { checkpoints: plan, segments: [this.segment(spec, found.nodes, found.start, found.start + lengthMs, restart, intervals)] };
  }

  private lateReason(spec: JobSpec, plan: CheckpointPlan, completion: Instant, shape: JobShape): string {
    const how = shape.checkpointed ? `with ${plan.count} checkpoint${plan.count === 1 ? '' : 's'}${shape.deadlineCoversOutages ? ` and ${shape.timing.outages} covered outage${shape.timing.outages === 1 ? '' : 's'}` : ''}` : 'without checkpoints';
    return `deadline ${at(spec.deadline as Instant)} cannot be met: earliest ${shape.deadlineCoversOutages ? 'worst-case ' : ''}completion ${how} is ${at(completion)} on ${spec.nodes} nodes`;
  }

  private deadlineReason(spec: JobSpec, why: string): string {
    return spec.deadline !== undefined ? `deadline ${at(spec.deadline)} cannot be met: ${why}` : why;
  }

  private earliestCompletion(spec: JobSpec, now: Instant, options: AdmitOptions): Instant | undefined {
    const relaxed = { ...spec, deadline: undefined, kind: 'Deadline' as const };
    const decision = this.probe(relaxed, now, options);
    if (!decision.accepted) return undefined;
    const shape = shapeOf(spec, this.cluster.timing);
    const first = decision.job.segments[0] as Segment;
    const worst = pieceMs(shape, decision.job.checkpoints, first.intervals, false, shape.deadlineCoversOutages ? shape.timing.outages : 0, true);
    return Math.ceil((first.start + Math.max(worst, first.end - first.start)) / 1000) * 1000;
  }

  private segment(spec: JobSpec, nodes: number[], start: Instant, end: Instant, restart: boolean, intervals: number): Segment {
    const ids = nodes.map((n) => this.cluster.nodes[n]?.id as string);
    return { start, end, nodes: ids.slice(0, spec.nodes), spare: ids.slice(spec.nodes), restart, intervals };
  }

  /** Full: the peer's standby nodes over the job's slot. */
  private remoteCheck(spec: JobSpec, start: Instant, end: Instant): string | undefined {
    if (spec.level !== 'Full') return undefined;
    const free = this.cluster.peerStandbyNodes - this.remote.maxOver(start, end);
    return free >= spec.nodes ? undefined : `Full service needs ${spec.nodes} standby nodes at a peer provider from ${at(start)} to ${at(end)}; ${free} of ${this.cluster.peerStandbyNodes} are free then`;
  }

  /**
   * The earliest start >= from (and <= latestStart) where the MM can map the need; the
   * PM's profile skips instants where too many nodes are busy, the MM's search instants
   * where too few of the same nodes are free throughout, and `earliest` (when given)
   * instants where a constraint of the caller's fails; `accept` has the last word.
   * Waiting best-effort jobs are not counted against SLA jobs: they move.
   */
  findSlot(need: Need, from: Instant, latestStart?: Instant, accept?: (start: Instant) => boolean, earliest?: (t: Instant) => Instant): { start: Instant; nodes: number[] } | undefined {
    const total = this.cluster.nodes.length;
    const slack = need.replacing !== undefined ? this.peakNodesOf(need.replacing) : 0;
    const filter = need.displaceWaiting ? this.mm.firmProfile : this.mm.profile;
    // Waiting best-effort jobs are soft in the Machine Manager: SLA searches look past them.
    const search = this.mm.search(need.nodes + need.spare, need.eligible, need.lengthMs, {
      ...(need.replacing !== undefined ? { ignoreOwner: need.replacing } : {}),
      oneIsland: need.oneIsland,
      soft: need.displaceWaiting,
      ...(latestStart !== undefined ? { limit: latestStart } : {}),
    });
    let t = from;
    for (;;) {
      t = filter.firstFit(t, need.lengthMs, total - need.nodes - need.spare + slack);
      if (latestStart !== undefined && t > latestStart) return undefined;
      // A constraint of the caller's that can say where it holds next (a peer's standby nodes).
      const later = earliest?.(t) ?? t;
      if (later > t) {
        t = later;
        continue;
      }
      const mapped = search.at(t);
      if ('next' in mapped) {
        // Not enough of the same nodes free throughout: no start before `next` works either.
        if (mapped.next === Number.POSITIVE_INFINITY) return undefined;
        t = mapped.next;
        continue;
      }
      if (!accept || accept(t)) return { start: t, nodes: mapped.nodes };
      // The next instant anything changes: a booking of any kind ends or begins.
      const next = Math.min(this.mm.profile.nextChangeAfter(t) ?? Infinity, filter.nextChangeAfter(t) ?? Infinity);
      if (next === Infinity) return undefined; // nothing changes after t: what fails now fails forever
      t = next;
    }
  }

  private mapAt(need: Need, start: Instant): number[] | undefined {
    const end = start + need.lengthMs;
    // Waiting best-effort jobs are soft in the Machine Manager: SLA placements look past them.
    const options = { ...(need.replacing !== undefined ? { ignoreOwner: need.replacing } : {}), oneIsland: need.oneIsland, soft: need.displaceWaiting };
    return this.mm.map(need.nodes + need.spare, need.eligible, start, end, options);
  }

  private freeThroughout(need: Need, start: Instant, end: Instant): number {
    return need.eligible.filter((n) => this.mm.isFree(n, start, end, need.replacing, undefined, need.displaceWaiting)).length;
  }

  private peakNodesOf(owner: string): number {
    return this.mm.bookingsOf(owner).length;
  }

  /** A best-effort or background job that has not started gives way to SLA jobs (figure 3.4 places B last). */
  private isWaitingBestEffort(owner: string): boolean {
    const job = this.jobs.get(owner);
    return job !== undefined && isBestEffort(job.spec) && !this.hasStarted(job);
  }

  private hasStarted(job: PlannedJob): boolean {
    const first = job.segments[0];
    return first !== undefined && first.start <= this.now;
  }

  private plannedJob(spec: JobSpec, placed: Placement): PlannedJob {
    const shape = shapeOf(spec, this.cluster.timing);
    return {
      spec,
      segments: placed.segments,
      checkpoints: placed.checkpoints,
      outagesLeft: shape.timing.outages,
      ...(spec.level === 'Full' ? { remoteStandby: spec.nodes } : {}),
    };
  }

  /** Books a job's segments; waiting best-effort jobs in the way are moved to their next gap. Returns the moved ids. */
  private insert(job: PlannedJob, replacing?: string): string[] {
    const id = job.spec.id;
    const displaced = new Set<string>();
    for (const segment of job.segments) {
      const nodes = [...segment.nodes, ...segment.spare].map((n) => this.mm.nodeIndex(n));
      for (const n of nodes) {
        for (const owner of this.mm.ownersOn(n, segment.start, segment.end)) {
          if (owner !== replacing && owner !== id && this.isWaitingBestEffort(owner)) displaced.add(owner);
        }
      }
    }
    for (const owner of displaced) this.mm.unbook(owner);
    this.jobs.set(id, job);
    if (job.spec.queueTag !== undefined && job.spec.queueTag > this.highestTag) this.highestTag = job.spec.queueTag;
    if (!this.order.has(id)) this.order.set(id, this.inserted++);
    if (job.problem !== undefined) this.inP.add(id);
    this.segmentsChanged(job);
    this.mm.setSoft(id, isBestEffort(job.spec));
    for (const segment of job.segments) this.bookSegment(job, segment, replacing);
    this.syncSoftness(job);
    this.shapes.set(id, shapeOf(job.spec, this.cluster.timing));
    return this.replaceBestEffort([...displaced].sort((a, b) => this.fcfs(a, b)));
  }

  private nodeIndices(segment: Segment): number[] {
    return [...segment.nodes, ...segment.spare].map((n) => this.mm.nodeIndex(n));
  }

  /** Books a segment's nodes (and the peer's standby nodes for Full). */
  private bookSegment(job: PlannedJob, segment: Segment, replacing?: string): void {
    const nodes = [...segment.nodes, ...segment.spare].map((n) => this.mm.nodeIndex(n));
    this.mm.book(job.spec.id, nodes, segment.start, segment.end, replacing);
    if (job.remoteStandby) this.remoteAdd(segment.start, segment.end, job.remoteStandby);
  }

  /**
   * A waiting best-effort job is soft: SLA searches look past it. Once it starts it is
   * firm (running jobs are only ever suspended by a re-plan), so its start is queued and
   * `clock` hardens it when time reaches it.
   */
  private syncSoftness(job: PlannedJob): void {
    if (!isBestEffort(job.spec)) return;
    const started = this.hasStarted(job);
    this.mm.setSoft(job.spec.id, !started);
    const first = job.segments[0];
    if (!started && first) this.softStarts.push(first.start, job.spec.id);
  }

  /** Starts of waiting best-effort jobs: when the clock passes one, the job is firm. */
  private readonly softStarts = new InstantQueue();

  /** Every public entry point moves the plan's clock here; best-effort jobs that have started become firm. */
  private clock(now: Instant): void {
    this.now = Math.max(this.now, now);
    for (const id of this.softStarts.takeUntil(this.now)) {
      const job = this.jobs.get(id);
      if (job && this.hasStarted(job)) this.mm.setSoft(id, false);
    }
    for (const id of this.startsAhead.takeUntil(this.now)) if (this.jobs.has(id)) this.started.add(id);
  }

  private dropRemote(job: PlannedJob): void {
    if (!job.remoteStandby) return;
    for (const s of job.segments) this.remoteAdd(s.start, s.end, -job.remoteStandby);
  }

  /** Changes to the peer's standby profile, journalled like the MM's so trials roll back. */
  private remoteAdd(start: Instant, end: Instant, delta: number): void {
    this.remote.add(start, end, delta);
    this.remoteLog?.push({ start, end, delta });
  }

  private remoteLog: RemoteChange[] | undefined;

  private beginTrial(): Trial {
    const outer = this.remoteLog;
    this.remoteLog = outer ?? [];
    return { mark: this.mm.begin(), remoteMark: this.remoteLog.length, outer };
  }

  private commitTrial(trial: Trial): void {
    // A nested trial logs into its outer trial's list already: the outer one can still roll it back.
    this.mm.commit(trial.mark);
    this.remoteLog = trial.outer;
  }

  private rollbackTrial(trial: Trial): void {
    this.mm.rollback(trial.mark);
    const log = this.remoteLog ?? [];
    for (const { start, end, delta } of log.splice(trial.remoteMark).reverse()) this.remote.add(start, end, -delta);
    this.remoteLog = trial.outer;
  }

  /** Best-effort order: by start tag where both jobs were sold by bid, else first come first served. */
  private fcfs(a: string, b: string): number {
    const ja = this.jobs.get(a) as PlannedJob;
    const jb = this.jobs.get(b) as PlannedJob;
    const tagged = ja.spec.queueTag !== undefined && jb.spec.queueTag !== undefined;
    return (tagged ? (ja.spec.queueTag as number) - (jb.spec.queueTag as number) : 0) || ja.spec.arrival - jb.spec.arrival || (a < b ? -1 : a > b ? 1 : 0);
  }

  /** Step 7: best-effort jobs (unbooked by the caller) go back first come first served, into the earliest gap from now. */
  private replaceBestEffort(ids: string[]): string[] {
    const moved: string[] = [];
    for (const id of ids) {
      const job = this.jobs.get(id) as PlannedJob;
      const shape = this.shape(job);
      const secured = securedIntervals(job, shape, this.now);
      const remaining = totalIntervals(job) - secured;
      const from = Math.max(this.now, job.spec.earliestStart ?? this.now);
      const past = job.segments.filter((s) => s.end <= this.now);
      if (remaining <= 0) {
        // All its work is secured (it was past its expected end): it has finished.
        job.segments = past;
        this.segmentsChanged(job);
        delete job.problem;
        continue;
      }
      const placed = this.placeRun(job.spec, shape, job.checkpoints, from, remaining, secured > 0);
      if ('reason' in placed) {
        this.setProblem(job, placed.reason); // only when the cluster has no suitable nodes left at all
        job.segments = past;
        this.segmentsChanged(job);
        continue;
      }
      job.segments = [...past, ...placed.segments];
      this.segmentsChanged(job);
      for (const s of placed.segments) this.bookSegment(job, s);
      this.syncSoftness(job);
      delete job.problem;
      moved.push(id);
    }
    return moved;
  }

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
    for (const [node, failure] of [...this.failed]) {
      if (failure.until > now) continue;
      const nodeId = this.cluster.nodes[node]?.id as string;
      this.failed.delete(node);
      this.mm.unbook(failureOwner(nodeId), now);
      report = this.nodeFailed(nodeId, now);
    }
    // A job whose last segment has ended has started; an unsolved one is in P: the indexes hold both.
    const candidates = new Set([...this.startedJobs(), ...this.problemJobs()]);
    const left: PlannedJob[] = [];
    for (const job of candidates) {
      const last = job.segments[job.segments.length - 1];
      const unsolvedPast = job.problem !== undefined && !job.segments.some((s) => s.end > now) && (job.spec.deadline ?? job.spec.window?.end ?? Infinity) <= now;
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
    const freed = job.segments.filter((s) => s.end > now).map((s) => ({ start: Math.max(now, s.start), end: s.end, nodes: this.nodeIndices(s) }));
    this.release(id);
    report.moved = this.fillGaps(now, freed);
    // Problems waiting for capacity get another chance now that some is free.
    if (this.problemsInHorizon(now, now + this.cluster.timing.problemHorizonSeconds * 1000).length > 0) {
      const replanned = this.replan(now);
      report.moved.push(...replanned.moved);
      report.suspended.push(...replanned.suspended);
      report.solved.push(...replanned.solved);
    }
    return this.withProblems(report);
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
    const horizonEnd = now + this.cluster.timing.problemHorizonSeconds * 1000;
    if (this.failed.has(node)) return this.withProblems({ moved: [], suspended: [], problematic: [], solved: [] });
    const affected = this.mm.ownersOn(node, now, horizonEnd).filter((o) => this.jobs.has(o)).sort();
    const beyond = this.mm.ownersOn(node, horizonEnd, Number.POSITIVE_INFINITY).filter((o) => this.jobs.has(o) && !affected.includes(o));
    const problems: string[] = [];
    for (const id of affected) {
      const job = this.jobs.get(id) as PlannedJob;
      if (this.lostSpareOnly(job, nodeId, now) || this.restartOnSpare(job, nodeId, node, now) || this.replaceWaitingNode(job, nodeId, node, now) || this.keepSurvivors(job, nodeId, node, now)) {
        // Off the node now: a warning that it was planned there beyond an earlier horizon no longer holds.
        if (job.problem?.startsWith(beyondHorizonPrefix(nodeId))) delete job.problem;
        continue;
      }
      this.cut(job, now);
      if (job.segments.length > 0) job.outagesLeft = Math.max(0, job.outagesLeft - 1); // it was running: an outage used
      this.setProblem(job, `node ${nodeId} failed at ${at(now)}`);
      problems.push(id);
    }
    const warning = `${beyondHorizonPrefix(nodeId)} at ${at(now)}; beyond the problem horizon (${at(horizonEnd)})`;
    for (const id of beyond) this.setProblem(this.jobs.get(id) as PlannedJob, warning);
    this.mm.book(failureOwner(nodeId), [node], now, horizonEnd);
    this.failed.set(node, { since: now, until: horizonEnd });
    const report = this.replan(now);
    report.moved.push(...affected.filter((id) => !problems.includes(id) && this.jobs.has(id)));
    return this.withProblems(report);
  }

  /** A node is back: its failure block ends now, jobs planned on it beyond the horizon are safe again, and P is re-planned. */
  nodeRepaired(nodeId: string, now: Instant): ReplanReport {
    this.clock(now);
    const node = this.mm.nodeIndex(nodeId);
    const failure = this.failed.get(node);
    if (!failure) return this.withProblems({ moved: [], suspended: [], problematic: [], solved: [] });
    this.mm.unbook(failureOwner(nodeId), now);
    this.failed.delete(node);
    for (const owner of this.mm.ownersOn(node, now, Number.POSITIVE_INFINITY)) {
      const job = this.jobs.get(owner);
      if (job?.problem !== undefined && job.segments.some((s) => s.end > now)) delete job.problem;
    }
    const report = this.replan(now);
    report.moved.push(...this.fillGaps(now, [{ start: now, end: failure.until, nodes: [node] }]));
    return this.withProblems(report);
  }

  private withProblems(report: ReplanReport): ReplanReport {
    report.problematic = this.problematic();
    report.moved = [...new Set(report.moved)].filter((id) => this.jobs.has(id));
    return report;
  }

  /** A failed spare (not a working node) is dropped; the job carries on with one spare fewer. */
  private lostSpareOnly(job: PlannedJob, nodeId: string, now: Instant): boolean {
    const current = job.segments.find((s) => s.end > now);
    if (!current || current.nodes.includes(nodeId) || !current.spare.includes(nodeId)) return false;
    for (const s of job.segments) if (s.end > now) s.spare = s.spare.filter((n) => n !== nodeId);
    this.mm.unbook(job.spec.id, now, this.mm.nodeIndex(nodeId));
    return true;
  }

  /**
   * Enhanced and Full: a job that has not started keeps its slot when one of its working
   * nodes fails. A node free throughout the slot takes the failed one's place, or else one
   * of the job's own spare nodes does, which uses up one covered outage. Re-planning it
   * from scratch instead could lose the slot to other problems, though the spares were
   * booked for exactly this. False when neither works: the job is then re-planned.
   */
  private replaceWaitingNode(job: PlannedJob, nodeId: string, node: number, now: Instant): boolean {
    if (job.segments.some((s) => s.start <= now && now < s.end)) return false; // running: restartOnSpare's case
    const future = job.segments.filter((s) => s.end > now && (s.nodes.includes(nodeId) || s.spare.includes(nodeId)));
    const segment = future[0];
    if (future.length !== 1 || !segment || segment.spare.length === 0 || !segment.nodes.includes(nodeId)) return false;
    const island = this.cluster.nodes[node]?.island;
    const oneIsland = job.spec.requirements.interconnect !== undefined;
    const eligible = this.mm.eligible(job.spec.requirements, isBestEffort(job.spec)).filter((n) => n !== node && (!oneIsland || this.cluster.nodes[n]?.island === island));
    const [free] = this.mm.map(1, eligible, segment.start, segment.end) ?? [];
    if (free === undefined && job.outagesLeft <= 0) return false;
    this.mm.unbook(job.spec.id, now, node);
    let replaced: Segment;
    if (free !== undefined) {
      const freeId = this.cluster.nodes[free]?.id as string;
      replaced = { ...segment, nodes: segment.nodes.map((n) => (n === nodeId ? freeId : n)) };
      this.mm.book(job.spec.id, [free], segment.start, segment.end);
    } else {
      const [spare, ...rest] = segment.spare as [string, ...string[]];
      replaced = { ...segment, nodes: segment.nodes.map((n) => (n === nodeId ? spare : n)), spare: rest };
      job.outagesLeft -= 1;
    }
    job.segments = job.segments.map((s) => (s === segment ? replaced : s));
    this.segmentsChanged(job);
    return true;
  }

  /**
   * Enhanced and Full: a running job whose working node failed restarts from its last
   * checkpoint on one of its own spare nodes, inside the time it booked for outages.
   */
  private restartOnSpare(job: PlannedJob, nodeId: string, node: number, now: Instant): boolean {
    const index = job.segments.findIndex((s) => s.start <= now && now < s.end);
    const current = job.segments[index];
    if (!current || job.spec.window || current.spare.length === 0 || job.outagesLeft <= 0 || !current.nodes.includes(nodeId)) return false;
    const shape = this.shape(job);
    const secured = securedIntervals(job, shape, now);
    const securedBefore = securedIntervals({ ...job, segments: job.segments.slice(0, index) }, shape, now);
    const remaining = totalIntervals(job) - secured;
    if (remaining <= 0) return false; // past its expected end: it has finished, nothing to restart
    const needed = pieceMs(shape, job.checkpoints, remaining, true, job.outagesLeft - 1, true);
    if (now + needed > current.end) return false;
    const [spare, ...rest] = current.spare as [string, ...string[]];
    const nodes = current.nodes.map((n) => (n === nodeId ? spare : n));
    if (current.start === now) {
      // Nothing ran yet: the piece starts as planned with a spare in the failed node's place.
      job.segments.splice(index, 1, { ...current, nodes, spare: rest });
    } else {
      const restarted: Segment = { start: now, end: current.end, nodes, spare: rest, restart: true, intervals: remaining };
      const ran: Segment = { ...current, end: now, intervals: secured - securedBefore };
      job.segments.splice(index, 1, ran, restarted);
    }
    job.outagesLeft -= 1;
    this.segmentsChanged(job);
    this.mm.unbook(job.spec.id, now, node);
    return true;
  }

  /**
   * A reservation (a fixed window: never moved, never suspended) whose working node failed
   * keeps its surviving nodes for the rest of the window: the failed node's place goes to
   * one of its spares, else to a node free throughout the rest of the window (not a buffer
   * node: those stay with best-effort work), else the reservation carries on with the
   * nodes it has left. Giving it up whole would break the promise for every node, and hand
   * the survivors to other work; with fewer nodes only its NodesAvailable objective is
   * broken, for the time it is short.
   */
  private keepSurvivors(job: PlannedJob, nodeId: string, node: number, now: Instant): boolean {
    if (!job.spec.window || !job.segments.some((s) => s.end > now && s.nodes.includes(nodeId))) return false;
    const island = this.cluster.nodes[node]?.island;
    const oneIsland = job.spec.requirements.interconnect !== undefined;
    const eligible = this.mm.eligible(job.spec.requirements, false).filter((n) => n !== node && (!oneIsland || this.cluster.nodes[n]?.island === island));
    // Decide every affected piece first: a piece left with no node at all is given up the usual way.
    const changes = job.segments.map((s) => {
      if (s.end <= now || !s.nodes.includes(nodeId)) return undefined;
      const from = Math.max(now, s.start);
      if (s.spare.length > 0) return { from, replacement: s.spare[0] as string, spare: s.spare.slice(1), book: undefined };
      const [free] = this.mm.map(1, eligible, from, s.end) ?? [];
      return { from, replacement: free === undefined ? undefined : (this.cluster.nodes[free]?.id as string), spare: s.spare, book: free };
    });
    if (changes.some((c, i) => c && c.replacement === undefined && (job.segments[i] as Segment).nodes.length === 1)) return false;
    const segments: Segment[] = [];
    job.segments.forEach((s, i) => {
      const change = changes[i];
      if (!change) {
        segments.push(s);
        return;
      }
      const { from, replacement, spare, book } = change;
      if (book !== undefined) this.mm.book(job.spec.id, [book], from, s.end);
      const nodes = s.nodes.flatMap((n) => (n !== nodeId ? [n] : replacement !== undefined ? [replacement] : []));
      if (from > s.start) segments.push({ ...s, end: from, intervals: 0 }, { ...s, start: from, nodes, spare, restart: false });
      else segments.push({ ...s, nodes, spare });
    });
    job.segments = segments;
    this.segmentsChanged(job);
    this.mm.unbook(job.spec.id, now, node);
    return true;
  }

  /** Stops a job at `now`: past segments stay, the running one is cut, future ones are dropped. */
  private cut(job: PlannedJob, now: Instant): void {
    const shape = this.shape(job);
    const kept: Segment[] = [];
    let before = 0;
    for (const s of job.segments) {
      if (s.start >= now) break;
      if (s.end <= now) {
        kept.push(s);
        before += s.intervals;
        continue;
      }
      const secured = securedIntervals({ ...job, segments: [...kept, s] }, shape, now) - before;
      kept.push({ ...s, end: now, intervals: secured });
    }
    this.dropRemote(job);
    job.segments = kept;
    this.segmentsChanged(job);
    if (job.remoteStandby) for (const s of kept) this.remoteAdd(s.start, s.end, job.remoteStandby);
    this.mm.unbook(job.spec.id, now);
  }

  // ---------------------------------------------------------------- figure 3.4

  /**
   * The SLA-aware algorithm of figure 3.4 on the current plan. R, S_res and S_nonres
   * outside P keep their places (steps 2 and 5); waiting best-effort jobs give way where a
   * problem needs their room (those displaced go back last, step 7); problematic SLA jobs in
   * the problem horizon are placed by order (running first, then waiting, value
   * descending) without touching S_nonres (step 3). What remains in P triggers
   * suspension of best-effort jobs, then of SLA jobs (3.5.2), and partial execution (3.5.3).
   */
  private replan(now: Instant): ReplanReport {
    const report: ReplanReport = { moved: [], suspended: [], problematic: [], solved: [] };
    const horizonEnd = now + this.cluster.timing.problemHorizonSeconds * 1000;
    // Waiting best-effort jobs give way where a problem needs their room (the searches look
    // past them) and go back last; the others keep their places, so a re-plan costs what it
    // moves, not the size of the plan.
    const displaced = new Set<string>();
    this.displaced = displaced;
    const problems = this.problemsInHorizon(now, horizonEnd);
    const bestEffortProblems = problems.filter((id) => isBestEffort((this.jobs.get(id) as PlannedJob).spec));
    try {
      let unsolved = this.solve(problems.filter((id) => !bestEffortProblems.includes(id)), now, report);
      if (unsolved.length > 0) unsolved = this.suspendAndSolve(unsolved, now, report, 'best-effort');
      if (unsolved.length > 0) unsolved = this.suspendAndSolve(unsolved, now, report, 'sla');
    } finally {
      this.displaced = undefined;
    }
    for (const id of bestEffortProblems) delete (this.jobs.get(id) as PlannedJob).problem;
    const again = [...new Set([...displaced, ...bestEffortProblems, ...report.suspended.filter((id) => isBestEffort((this.jobs.get(id) as PlannedJob).spec))])];
    report.moved.push(...this.replaceBestEffort(again.sort((a, b) => this.fcfs(a, b))));
    return report;
  }

  /** Waiting best-effort jobs a re-plan unbooked to make room; step 7 puts them back. */
  private displaced: Set<string> | undefined;

  /** Unbooks the waiting best-effort jobs on `nodes` over [start, end): they give way to `id`. */
  private displaceWaiting(id: string, start: Instant, end: Instant, nodes: readonly number[], record: Set<string> | undefined): void {
    for (const n of nodes) {
      for (const owner of this.mm.ownersOn(n, start, end)) {
        if (owner === id || !this.isWaitingBestEffort(owner)) continue;
        this.mm.unbook(owner);
        record?.add(owner);
      }
    }
  }

  /** P within the horizon, ordered: running before waiting, then value descending, then id. */
  private problemsInHorizon(now: Instant, horizonEnd: Instant): string[] {
    const inP = this.problemJobs().filter((j) => !j.segments.some((s) => s.end > now) && this.startsBefore(j, horizonEnd));
    const rank = (j: PlannedJob) => (j.segments.length > 0 ? 0 : 1);
    inP.sort((a, b) => rank(a) - rank(b) || b.spec.value - a.spec.value || (a.spec.id < b.spec.id ? -1 : 1));
    return inP.map((j) => j.spec.id);
  }

  private startsBefore(job: PlannedJob, t: Instant): boolean {
    if (job.spec.window) return job.spec.window.start < t;
    return (job.spec.earliestStart ?? Number.NEGATIVE_INFINITY) < t;
  }

  /** Step 3 for each problem in order; returns those still unsolved (their reason updated). */
  private solve(problems: string[], now: Instant, report: ReplanReport): string[] {
    const unsolved: string[] = [];
    for (const id of problems) {
      const job = this.jobs.get(id) as PlannedJob;
      const placed = this.placeProblem(job, now);
      if ('reason' in placed) {
        this.setProblem(job, `${job.problem?.split(': cannot')[0] ?? 'problem'}: cannot ${placed.reason}`);
        unsolved.push(id);
        continue;
      }
      for (const s of placed) this.displaceWaiting(id, s.start, s.end, [...s.nodes, ...s.spare].map((n) => this.mm.nodeIndex(n)), this.displaced);
      for (const s of placed) this.bookSegment(job, s);
      job.segments = [...job.segments, ...placed];
      this.segmentsChanged(job);
      delete job.problem;
      report.solved.push(id);
      report.moved.push(id);
    }
    return unsolved;
  }

  /** A problematic job's remaining work: whole if it fits its SLA, else in pieces through gaps (3.5.3). */
  private placeProblem(job: PlannedJob, now: Instant): Segment[] | { reason: string } {
    const shape = this.shape(job);
    const secured = securedIntervals(job, shape, now);
    const remaining = totalIntervals(job) - secured;
    const spec = job.spec;
    if (!spec.window && remaining <= 0) return []; // every interval secured: it has finished
    if (spec.window) {
      if (spec.window.end <= now) return { reason: `keep the reservation: its window ended at ${at(spec.window.end)}` };
      const placed = this.placeReservation(spec, shape, Math.max(now, spec.window.start), spec.window.end, undefined, secured, totalIntervals(job));
      return 'reason' in placed ? { reason: `keep the reservation: ${placed.reason}` } : placed.segments;
    }
    const from = Math.max(now, spec.earliestStart ?? now);
    const whole = this.placeRun(spec, shape, job.checkpoints, from, remaining, secured > 0 || job.segments.length > 0, undefined, job.outagesLeft);
    if (!('reason' in whole)) return whole.segments;
    if (spec.kind !== 'Deadline' || !shape.checkpointed) return { reason: `restart in time: ${whole.reason}` };
    const pieces = this.placeInPieces(job, shape, from, remaining);
    return pieces ?? { reason: `restart in time: ${whole.reason}; no gaps for partial execution either` };
  }

  /**
   * Partial execution (3.5.3): pieces in gaps, each long enough to restart, compute at
   * least one interval and checkpoint it, then the rest as one run; all before the
   * deadline. Nothing is booked here; undefined if the pieces cannot finish in time.
   */
  private placeInPieces(job: PlannedJob, shape: JobShape, from: Instant, remaining: number): Segment[] | undefined {
    const spec = job.spec;
    if (spec.deadline === undefined) return undefined;
    const plan = job.checkpoints;
    const pieces: Segment[] = [];
    const eligible = this.mm.eligible(spec.requirements, false);
    const trial = this.beginTrial();
    try {
      let left = remaining;
      let t = from;
      const onePiece = pieceMs(shape, plan, 1, true, 0, false);
      // Waiting best-effort jobs give way here too (their room counts as free).
      for (const gap of this.mm.firmProfile.windows(from, spec.deadline, this.cluster.nodes.length - spec.nodes)) {
        if (left === 0) break;
        const rest = pieceMs(shape, plan, left, true, shape.deadlineCoversOutages ? job.outagesLeft : 0, true);
        if (gap.start + rest <= spec.deadline && gap.end - gap.start >= rest) break; // the rest fits whole: placed below
        if (gap.end - gap.start < onePiece) continue;
        const nodes = this.mm.map(spec.nodes, eligible, gap.start, gap.end, { soft: true });
        if (!nodes) continue;
        const step = (plan.intervalSeconds + plan.checkpointSeconds) * 1000;
        const fit = Math.min(left - 1, Math.floor((gap.end - gap.start - (onePiece - step)) / step));
        if (fit < 1) continue;
        const end = gap.start + pieceMs(shape, plan, fit, true, 0, false);
        const segment = this.segment(spec, nodes, gap.start, end, true, fit);
        pieces.push(segment);
        this.displaceWaiting(spec.id, gap.start, end, nodes, undefined); // rolled back with the trial; solve displaces for real
        this.mm.book(spec.id, nodes, gap.start, end);
        left -= fit;
        t = end;
      }
      if (pieces.length === 0) return undefined;
      const tail = this.placeRun(spec, shape, plan, t, left, true, undefined, job.outagesLeft);
      if ('reason' in tail) return undefined;
      return [...pieces, ...tail.segments];
    } finally {
      this.rollbackTrial(trial);
    }
  }

  /**
   * Suspension by binary search over remaining area (3.5.2): running best-effort jobs
   * (or running non-reservation SLA jobs) ordered by remaining area, largest first; the
   * smallest percentage of that area whose suspension lets every problem be placed.
   * Reservation jobs are never suspended. Suspended SLA jobs keep what their checkpoints
   * secured and go to the head of S, placed before the problems.
   */
  private suspendAndSolve(problems: string[], now: Instant, report: ReplanReport, which: 'best-effort' | 'sla'): string[] {
    const candidates = this.startedJobs()
      .filter((j) => j.segments.some((s) => s.start <= now && now < s.end) && j.problem === undefined)
      .filter((j) => (which === 'best-effort' ? isBestEffort(j.spec) : j.spec.kind === 'Deadline'))
      .map((j) => ({ id: j.spec.id, area: this.remainingArea(j, now) }))
      .sort((a, b) => b.area - a.area || (a.id < b.id ? -1 : 1));
    if (candidates.length === 0) return problems;
    const totalArea = candidates.reduce((sum, c) => sum + c.area, 0);
    const prefix = (percent: number) => {
      const out: string[] = [];
      let area = 0;
      for (const c of candidates) {
        if (area >= (totalArea * percent) / 100) break;
        out.push(c.id);
        area += c.area;
      }
      return out;
    };
    // A trial depends only on which candidates it suspends and what it places (everything
    // else is rolled back), and many percentages suspend the same prefix: each is tried once.
    const tried = new Map<string, { ok: boolean; unsolved: string[] }>();
    const trial = (percent: number, targets: string[], placeSuspended: boolean) => {
      const key = `${prefix(percent).length}|${which === 'sla' && placeSuspended}|${JSON.stringify(targets)}`;
      let result = tried.get(key);
      if (!result) tried.set(key, (result = run(percent, targets, placeSuspended)));
      return result;
    };
    const run = (percent: number, targets: string[], placeSuspended: boolean) => {
      const snapshot = this.snapshot([...targets, ...candidates.map((c) => c.id)]);
      const mark = this.beginTrial();
      const suspended = prefix(percent);
      const scratch: ReplanReport = { moved: [], suspended: [], problematic: [], solved: [] };
      for (const id of suspended) this.cut(this.jobs.get(id) as PlannedJob, now);
      const slaSuspended = which === 'sla' && placeSuspended ? suspended : [];
      const order = [...slaSuspended, ...targets];
      for (const id of slaSuspended) this.setProblem(this.jobs.get(id) as PlannedJob, 'suspended');
      const outer = this.displaced;
      this.displaced = new Set(); // a trial's displacements are rolled back with it
      const unsolved = this.solve(order, now, scratch);
      this.displaced = outer;
      this.rollbackTrial(mark);
      this.restoreSnapshot(snapshot);
      return { ok: unsolved.length === 0, unsolved };
    };
    // Problems that do not fit even with every candidate suspended (and nothing suspended put
    // back) cannot be helped; the search is for the others, so one hopeless problem neither
    // blocks them nor makes every re-plan pay for the whole search.
    const hopeless = new Set(trial(100, problems, false).unsolved);
    const targets = problems.filter((id) => !hopeless.has(id));
    if (targets.length === 0 || !trial(100, targets, true).ok) return problems;
    let lower = 0;
    let upper = 100;
    while (lower < upper) {
      const mid = Math.floor((lower + upper) / 2);
      if (trial(mid, targets, true).ok) upper = mid;
      else lower = mid + 1;
    }
    const suspended = prefix(upper);
    for (const id of suspended) {
      const job = this.jobs.get(id) as PlannedJob;
      this.cut(job, now);
      this.setProblem(job, `suspended at ${at(now)} to make room after a failure`);
    }
    report.suspended.push(...suspended);
    const order = which === 'sla' ? [...suspended, ...targets] : targets;
    const unsolved = this.solve(order, now, report);
    if (which === 'best-effort') for (const id of suspended) delete (this.jobs.get(id) as PlannedJob).problem;
    return [...unsolved, ...problems.filter((id) => hopeless.has(id))];
  }

  private remainingArea(job: PlannedJob, now: Instant): number {
    let area = 0;
    for (const s of job.segments) if (s.end > now) area += s.nodes.length * (s.end - Math.max(now, s.start));
    return area;
  }

  private snapshot(ids: string[]): Map<string, PlannedJob> {
    const out = new Map<string, PlannedJob>();
    for (const id of ids) {
      const job = this.jobs.get(id) as PlannedJob;
      out.set(id, { ...job, segments: job.segments.map((s) => ({ ...s })) });
    }
    return out;
  }

  private restoreSnapshot(snapshot: Map<string, PlannedJob>): void {
    for (const [id, job] of snapshot) {
      const live = this.jobs.get(id) as PlannedJob;
      live.segments = job.segments;
      this.segmentsChanged(live);
      live.outagesLeft = job.outagesLeft;
      if (job.problem === undefined) delete live.problem;
      else this.setProblem(live, job.problem);
    }
  }

  /** After a job finished early: waiting jobs that can start now on the freed nodes move up (ordered by planned start). */
  private fillGaps(now: Instant, freed: Array<{ start: Instant; end: Instant; nodes: number[] }>): string[] {
    const moved: string[] = [];
    // Only a job that can use something freed may move up: a freed node (the released
    // bookings, the repaired node, the old slots of jobs moved up before it) must be free
    // for its whole new slot. The others are not tried, so an early finish or a repair
    // costs about what it frees, not the size of the plan.
    const usesFreed = (id: string, start: Instant, end: Instant) => {
      for (const f of freed) {
        if (f.start >= end || start >= f.end) continue;
        for (const n of f.nodes) if (this.mm.isFree(n, start, end) || this.mm.isFree(n, start, end, id)) return true;
      }
      return false;
    };
    // Only jobs that may start earlier than planned and before what was freed ends are candidates.
    const freedEnd = freed.reduce((latest, f) => Math.max(latest, f.end), Number.NEGATIVE_INFINITY);
    const waiting: PlannedJob[] = [];
    const startOf: number[] = [];
    this.jobs.forEach((j) => {
      const first = j.segments[0];
      if (j.spec.window || j.problem !== undefined || j.segments.length !== 1 || !first || first.start <= now) return;
      const from = Math.max(now, j.spec.earliestStart ?? now);
      if (from >= freedEnd || from >= first.start) return; // would not move up
      waiting.push(j);
      startOf.push(first.start);
    });
    // By planned start (then id), the keys side by side: a sort that follows pointers into every job is slow.
    const order: number[] = [];
    for (let k = 0; k < waiting.length; k++) order.push(k);
    order.sort((a, b) => (startOf[a] as number) - (startOf[b] as number) || ((waiting[a] as PlannedJob).spec.id < (waiting[b] as PlannedJob).spec.id ? -1 : 1));
    // Busy nodes where candidates would start (many share `now`); forgotten when a job moves.
    let busyAt = new Map<Instant, number>();
    for (const k of order) {
      const job = waiting[k] as PlannedJob;
      const segment = job.segments[0] as Segment;
      const from = Math.max(now, job.spec.earliestStart ?? now);
      const length = segment.end - segment.start;
      const total = this.cluster.nodes.length;
      const own = segment.start < from + length ? segment.nodes.length + segment.spare.length : 0; // the profile counts the job itself
      const need = segment.nodes.length + segment.spare.length;
      let busy = busyAt.get(from);
      if (busy === undefined) busyAt.set(from, (busy = this.mm.profile.at(from)));
      if (busy + need > total) continue; // not even enough free nodes at the start
      if (!usesFreed(job.spec.id, from, from + length)) continue;
      if (this.mm.profile.maxOver(from, from + length) - own + need > total) continue;
      const nodes = this.mm.map(segment.nodes.length + segment.spare.length, this.mm.eligible(job.spec.requirements, isBestEffort(job.spec)), from, from + length, { ignoreOwner: job.spec.id, oneIsland: job.spec.requirements.interconnect !== undefined });
      if (!nodes) continue;
      this.dropRemote(job); // its own standby must not count against its move
      if (job.spec.level === 'Full' && this.remoteCheck(job.spec, from, from + length) !== undefined) {
        if (job.remoteStandby) for (const s of job.segments) this.remoteAdd(s.start, s.end, job.remoteStandby);
        continue;
      }
      this.mm.unbook(job.spec.id);
      job.segments = [this.segment(job.spec, nodes, from, from + length, segment.restart, segment.intervals)];
      this.segmentsChanged(job);
      this.bookSegment(job, job.segments[0] as Segment);
      this.syncSoftness(job);
      freed.push({ start: segment.start, end: segment.end, nodes: this.nodeIndices(segment) });
      busyAt = new Map();
      moved.push(job.spec.id);
    }
    return moved;
  }
}

type RemoteChange = { start: Instant; end: Instant; delta: number };
type Trial = { mark: number; remoteMark: number; outer: RemoteChange[] | undefined };

export function isBestEffort(spec: JobSpec): boolean {
  return spec.kind === 'BestEffort' || spec.kind === 'Background';
}

/** How the warning for a job planned on a failed node beyond the problem horizon begins. */
function beyondHorizonPrefix(nodeId: string): string {
  return `planned on node ${nodeId}, which failed`;
}

export function failureOwner(nodeId: string): string {
  return `failure:${nodeId}`;
}

function totalIntervalsOf(shape: JobShape, spec: JobSpec, start: Instant): number {
  const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, start);
  return 'reason' in plan ? 1 : plan.count + 1;
}
