import { isoTime } from '../domain/time.js';
import { CapacityProfile } from './capacity-profile.js';
import { sharedPlan, type CheckpointPlan } from './checkpoint-plan.js';
import { InstantQueue } from './instant-queue.js';
import { checkpointPlanAt, shapeOf, type JobShape } from './job-timing.js';
import { FailureRateEstimate } from './failure-rate.js';
import { RecentRepairs } from './recent-repairs.js';
import { RepairTimes } from './repair-times.js';
import { MachineManager } from './machine-manager.js';
import type { ClusterDescription, Instant, JobSpec, PlannedJob, Segment } from './model.js';

export const at = (t: Instant) => isoTime(new Date(t));

/** Where a job could go: its first segment and the concrete nodes. */
export interface Placement {
  segments: Segment[];
  checkpoints: CheckpointPlan;
}

export interface Need {
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
  /**
   * The caller's last word on the placement found (the agreement's objectives): a reason refuses it, and nothing is
   * booked.
   */
  accept?: (job: PlannedJob) => string | undefined;
  /** Plan the thesis's count (3.16), the shortest worst case: for the earliest completion a deadline allows. */
  optimumCount?: boolean;
}

/**
 * The plan itself (the Planning Manager's first layer): the jobs, their bookings on the
 * Machine Manager, the indexes over them, trials that roll back, and the helpers every later
 * layer uses.
 */
export abstract class PlanBook {
  /** Best-effort jobs a booking displaced find new places (plan-placement.ts). */
  protected abstract replaceBestEffort(ids: string[]): string[];

  readonly mm: MachineManager;
  protected readonly jobs = new Map<string, PlannedJob>();
  protected readonly remote = new CapacityProfile();
  /** Failed nodes (by index): when they failed, and the end of their failure block. */
  protected readonly failed = new Map<number, { since: Instant; until: Instant }>();
  protected now: Instant = Number.NEGATIVE_INFINITY;
  /**
   * Indexes so an event costs what it touches, not the size of the plan. Each holds a
   * superset of what it names (every entry is checked when read, and dropped once it no
   * longer holds), so they stay right without knowing every way a job changes:
   * - `inP`: jobs that may be in P (every `problem` is set through `setProblem` or `insert`);
   * - `started`: jobs that may have started (first segment at or before the clock), fed by
   *   `startsAhead` as the clock passes the first starts queued by `segmentsChanged`.
   */
  protected readonly inP = new Set<string>();
  protected readonly started = new Set<string>();
  protected readonly startsAhead = new InstantQueue();

  /** The cluster as planned: its timing a copy, whose nodeFailuresPerDay is the rate learned so far. */
  readonly cluster: ClusterDescription;
  /** The failures the nodes have had, against the configured rate as a prior. */
  readonly failureRate: FailureRateEstimate;
  /** Whether nodes fail again soon after a repair, so that those repaired recently are chosen last. */
  readonly recentRepairs: RecentRepairs;
  /** How long failed nodes stay down: a failed node is kept out of the plan until it is likely back. */
  readonly repairTimes = new RepairTimes();

  constructor(cluster: ClusterDescription) {
    this.cluster = { ...cluster, timing: { ...cluster.timing } };
    this.failureRate = new FailureRateEstimate(
      cluster.timing.nodeFailuresPerDay,
      cluster.timing.nodeFailuresPriorNodeDays,
      cluster.nodes,
    );
    this.recentRepairs = new RecentRepairs(cluster.nodes.length, cluster.timing.recentRepairHours * 3_600_000);
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

  jobIds(): IterableIterator<string> {
    return this.jobs.keys();
  }

  /** P: jobs whose promise is endangered, with the reason. */
  problematic(): Array<{ id: string; reason: string }> {
    return this.inOrder(this.problemJobs()).map((j) => ({ id: j.spec.id, reason: j.problem as string }));
  }

  /** The jobs in P (in no particular order). */
  protected problemJobs(): PlannedJob[] {
    const out: PlannedJob[] = [];
    for (const id of this.inP) {
      const job = this.jobs.get(id);
      if (job?.problem !== undefined) out.push(job);
      else this.inP.delete(id);
    }
    return out;
  }

  /** The jobs that have started (first segment at or before the clock), in no particular order. */
  protected startedJobs(): PlannedJob[] {
    const out: PlannedJob[] = [];
    for (const id of this.started) {
      const job = this.jobs.get(id);
      if (job && this.hasStarted(job)) out.push(job);
      else this.started.delete(id);
    }
    return out;
  }

  /**
   * Jobs of the plan, put in the order `allJobs` gives them (in place). Found by a scan of the
   * plan, and only when there are two or more: lists built from the indexes are short and
   * rare, where a position kept for every job cost 3.5 MB with 100,000 live agreements.
   */
  protected inOrder(jobs: PlannedJob[]): PlannedJob[] {
    if (jobs.length < 2) return jobs;
    const wanted = new Set(jobs);
    let k = 0;
    for (const job of this.jobs.values()) {
      if (wanted.delete(job)) jobs[k++] = job;
      if (wanted.size === 0) break;
    }
    for (const job of wanted) jobs[k++] = job; // not in the plan (none should be): last, as given
    return jobs;
  }

  protected setProblem(job: PlannedJob, reason: string): void {
    job.problem = reason;
    this.inP.add(job.spec.id);
  }

  /**
   * A job's segments changed: a first start at or before the clock has started, a later one is queued for the clock.
   */
  protected segmentsChanged(job: PlannedJob): void {
    const first = job.segments[0];
    if (!first) return;
    if (first.start <= this.now) this.started.add(job.spec.id);
    else this.startsAhead.push(first.start, job.spec.id);
  }

  /**
   * Worked out each time, not kept: a few sums and products, where keeping one for every
   * planned job cost about 250 bytes each (25 MB with 100,000 live agreements).
   */
  shape(job: PlannedJob): JobShape {
    return this.shapeFor(job.spec);
  }

  /** A job's shape, its paying checkpoints weighed against the failure rate learned for the nodes it may run on. */
  shapeFor(spec: JobSpec): JobShape {
    const timing = this.cluster.timing;
    return timing.checkpointsByNeed ? shapeOf(spec, timing, this.failureRateOf(spec)) : shapeOf(spec, timing);
  }

  /** Per failure group, how many nodes each spec may run on (specs do not change their requirements). */
  private readonly groupCounts = new WeakMap<JobSpec, Int32Array>();

  /**
   * The failures per node and day that, times its nodes, give the rate at which failures hit `spec` on the nodes
   * it may run on, as learned per failure group (events that take many nodes at once hit it once).
   */
  protected failureRateOf(spec: JobSpec): number {
    let counts = this.groupCounts.get(spec);
    if (!counts) {
      counts = this.failureRate.countByGroup(this.eligibleFor(spec));
      this.groupCounts.set(spec, counts);
    }
    return this.failureRate.perNodeDayOn(counts, spec.nodes, this.now);
  }

  /**
   * The nodes a job may be planned on: its requirements, and the pool its kind uses (buffer and warm nodes, see
   * ClusterNode).
   */
  protected eligibleFor(spec: JobSpec): number[] {
    return this.mm.eligible(spec.requirements, isBestEffort(spec), spec.prepared === true);
  }

  isFailed(nodeId: string): boolean {
    return this.failed.has(this.mm.nodeIndex(nodeId));
  }

  /** No planned job has a start tag above this (it only rises: an upper bound is all `admit` needs). */
  protected highestTag = Number.NEGATIVE_INFINITY;

  /** Removes a job and everything it booked (terminated, rejected, expired). */
  release(id: string): void {
    if (!this.jobs.has(id)) return;
    this.mm.unbook(id);
    this.dropRemote(this.jobs.get(id) as PlannedJob);
    this.jobs.delete(id);
    this.inP.delete(id);
    this.started.delete(id);
    this.waitingBestEffort.delete(id);
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

  protected peakNodesOf(owner: string): number {
    return this.mm.bookingsOf(owner).length;
  }

  /**
   * A best-effort or background job that has not started gives way to SLA jobs (figure 3.4 places B last); so does one
   * started ahead of its turn (plan-start-now.ts) while it runs, and while it waits for the rest of its run.
   */
  protected isWaitingBestEffort(owner: string): boolean {
    const job = this.jobs.get(owner);
    return job !== undefined && this.givesWay(job);
  }

  protected givesWay(job: PlannedJob): boolean {
    if (!isBestEffort(job.spec)) return false;
    const current = this.currentSegment(job);
    if (!current) return true;
    // Not started, or waiting for the rest of its run: as it ran before, ahead of its turn or not.
    if (current.start > this.now) return current === job.segments[0] || job.segments.some((s) => s.yields === true);
    return current.yields === true;
  }

  /** The segment under way at the plan's clock, else the next one, else the last. */
  protected currentSegment(job: PlannedJob): Segment | undefined {
    return job.segments.find((s) => s.end > this.now) ?? job.segments.at(-1);
  }

  /** The best-effort job waits for its next run: nothing of it runs now, and one segment, its last, lies ahead. */
  protected waitsForARun(job: PlannedJob): boolean {
    const last = job.segments.at(-1);
    return last !== undefined && last.start > this.now && (job.segments.at(-2)?.end ?? this.now) <= this.now;
  }

  protected hasStarted(job: PlannedJob): boolean {
    const first = job.segments[0];
    return first !== undefined && first.start <= this.now;
  }

  protected plannedJob(spec: JobSpec, placed: Placement): PlannedJob {
    const shape = this.shapeFor(spec);
    return {
      spec,
      segments: placed.segments,
      checkpoints: sharedPlan(placed.checkpoints),
      outagesLeft: shape.timing.outages,
      ...(spec.level === 'Full' ? { remoteStandby: spec.nodes } : {}),
    };
  }

  /** Books a job's segments; waiting best-effort jobs in the way are moved to their next gap. Returns the moved ids. */
  protected insert(job: PlannedJob, replacing?: string): string[] {
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
    if (job.problem !== undefined) this.inP.add(id);
    this.segmentsChanged(job);
    this.mm.setSoft(id, isBestEffort(job.spec));
    for (const segment of job.segments) this.bookSegment(job, segment, replacing);
    this.syncSoftness(job);
    return this.replaceBestEffort([...displaced].sort((a, b) => this.fcfs(a, b)));
  }

  protected nodeIndices(segment: Segment): number[] {
    return [...segment.nodes, ...segment.spare].map((n) => this.mm.nodeIndex(n));
  }

  /** Books a segment's nodes (and the peer's standby nodes for Full). */
  protected bookSegment(job: PlannedJob, segment: Segment, replacing?: string): void {
    const nodes = [...segment.nodes, ...segment.spare].map((n) => this.mm.nodeIndex(n));
    this.mm.book(job.spec.id, nodes, segment.start, segment.end, replacing);
    if (job.remoteStandby) this.remoteAdd(segment.start, segment.end, job.remoteStandby);
  }

  /**
   * A waiting best-effort job is soft: SLA searches look past it. Once it starts it is
   * firm (running jobs are only ever suspended by a re-plan), so its start is queued and
   * `clock` hardens it when time reaches it.
   */
  protected syncSoftness(job: PlannedJob): void {
    if (!isBestEffort(job.spec)) return;
    this.mm.setSoft(job.spec.id, this.givesWay(job));
    if (this.waitsForARun(job)) this.waitingBestEffort.add(job.spec.id);
    // The next instant that changes it: a start, or the end of a piece that yields.
    let change = Number.POSITIVE_INFINITY;
    for (const s of job.segments) {
      if (s.start > this.now) change = Math.min(change, s.start);
      if (s.yields && s.end > this.now) change = Math.min(change, s.end);
    }
    if (change < Number.POSITIVE_INFINITY) this.softStarts.push(change, job.spec.id);
  }

  /**
   * Runs `work` with the bookings of best-effort `owners` firm, so SLA searches do not look past them; then each gives
   * way again as it now should (it may have been moved meanwhile).
   */
  protected whileFirm<T>(owners: readonly string[], work: () => T): T {
    for (const owner of owners) this.mm.setSoft(owner, false);
    try {
      return work();
    } finally {
      for (const owner of owners) {
        const job = this.jobs.get(owner);
        if (job) this.mm.setSoft(owner, this.givesWay(job));
      }
    }
  }

  /** Best-effort jobs that may not have started (each is checked when read). */
  protected readonly waitingBestEffort = new Set<string>();

  /** Instants where a best-effort job may stop giving way (it starts) or start again: the clock re-judges it. */
  protected readonly softStarts = new InstantQueue();

  /** Every public entry point moves the plan's clock here; best-effort jobs that have started become firm. */
  protected clock(now: Instant): void {
    this.now = Math.max(this.now, now);
    this.failureRate.begin(this.now);
    this.recentRepairs.begin(this.now);
    // Checkpoints that pay for themselves are weighed against the rate the nodes show.
    this.cluster.timing.nodeFailuresPerDay = this.failureRate.perNodeDay(this.now);
    for (const id of this.softStarts.takeUntil(this.now)) {
      const job = this.jobs.get(id);
      if (job) this.syncSoftness(job);
    }
    for (const id of this.startsAhead.takeUntil(this.now)) if (this.jobs.has(id)) this.started.add(id);
  }

  protected dropRemote(job: PlannedJob): void {
    if (!job.remoteStandby) return;
    for (const s of job.segments) this.remoteAdd(s.start, s.end, -job.remoteStandby);
  }

  /** Changes to the peer's standby profile, journalled like the MM's so trials roll back. */
  protected remoteAdd(start: Instant, end: Instant, delta: number): void {
    this.remote.add(start, end, delta);
    this.remoteLog?.push({ start, end, delta });
  }

  protected remoteLog: RemoteChange[] | undefined;

  protected beginTrial(): Trial {
    const outer = this.remoteLog;
    this.remoteLog = outer ?? [];
    return { mark: this.mm.begin(), remoteMark: this.remoteLog.length, outer };
  }

  protected commitTrial(trial: Trial): void {
    // A nested trial logs into its outer trial's list already: the outer one can still roll it back.
    this.mm.commit(trial.mark);
    this.remoteLog = trial.outer;
  }

  protected rollbackTrial(trial: Trial): void {
    this.mm.rollback(trial.mark);
    const log = this.remoteLog ?? [];
    for (const { start, end, delta } of log.splice(trial.remoteMark).reverse()) this.remote.add(start, end, -delta);
    this.remoteLog = trial.outer;
  }

  /** Best-effort order: by start tag where both jobs were sold by bid, else first come first served. */
  protected fcfs(a: string, b: string): number {
    const ja = this.jobs.get(a) as PlannedJob;
    const jb = this.jobs.get(b) as PlannedJob;
    const tagged = ja.spec.queueTag !== undefined && jb.spec.queueTag !== undefined;
    return (
      (tagged ? (ja.spec.queueTag as number) - (jb.spec.queueTag as number) : 0) ||
      ja.spec.arrival - jb.spec.arrival ||
      (a < b ? -1 : a > b ? 1 : 0)
    );
  }

  /** Waiting best-effort jobs a re-plan unbooked to make room; step 7 puts them back. */
  protected displaced: Set<string> | undefined;

  /** Unbooks the waiting best-effort jobs on `nodes` over [start, end): they give way to `id`. */
  protected displaceWaiting(
    id: string,
    start: Instant,
    end: Instant,
    nodes: readonly number[],
    record: Set<string> | undefined,
  ): void {
    for (const n of nodes) {
      for (const owner of this.mm.ownersOn(n, start, end)) {
        if (owner === id || !this.isWaitingBestEffort(owner)) continue;
        this.mm.unbook(owner);
        record?.add(owner);
      }
    }
  }

  /** The end of the problem horizon from `now`: how far ahead a failure is planned for (and its node blocked). */
  protected horizonEnd(now: Instant): Instant {
    return now + this.cluster.timing.problemHorizonSeconds * 1000;
  }

  /** Books `owner` on `node` wherever the node is free from `start` to `end` (keeps new work off it). */
  protected holdFree(owner: string, node: number, start: Instant, end: Instant): void {
    let t = start;
    for (const booking of this.mm.timeline(node).overlapping(start, end)) {
      if (booking.start > t) this.mm.book(owner, [node], t, booking.start);
      t = Math.max(t, booking.end);
    }
    if (t < end) this.mm.book(owner, [node], t, end);
  }

  protected remainingArea(job: PlannedJob, now: Instant): number {
    let area = 0;
    for (const s of job.segments) if (s.end > now) area += s.nodes.length * (s.end - Math.max(now, s.start));
    return area;
  }

  protected snapshot(ids: string[]): Map<string, PlannedJob> {
    const out = new Map<string, PlannedJob>();
    for (const id of ids) {
      const job = this.jobs.get(id) as PlannedJob;
      out.set(id, { ...job, segments: job.segments.map((s) => ({ ...s })) });
    }
    return out;
  }

  protected restoreSnapshot(snapshot: Map<string, PlannedJob>): void {
    for (const [id, job] of snapshot) {
      const live = this.jobs.get(id) as PlannedJob;
      live.segments = job.segments;
      live.checkpoints = job.checkpoints;
      this.segmentsChanged(live);
      live.outagesLeft = job.outagesLeft;
      if (job.problem === undefined) delete live.problem;
      else this.setProblem(live, job.problem);
    }
  }
}

export type RemoteChange = { start: Instant; end: Instant; delta: number };
export type Trial = { mark: number; remoteMark: number; outer: RemoteChange[] | undefined };

export function isBestEffort(spec: JobSpec): boolean {
  return spec.kind === 'BestEffort' || spec.kind === 'Background';
}

/** How the warning for a job planned on a failed node beyond the problem horizon begins. */
export function beyondHorizonPrefix(nodeId: string): string {
  return `planned on node ${nodeId}, which failed`;
}

export function failureOwner(nodeId: string): string {
  return `failure:${nodeId}`;
}

export function totalIntervalsOf(shape: JobShape, spec: JobSpec, start: Instant): number {
  const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, start);
  return 'reason' in plan ? 1 : plan.count + 1;
}
