import type { Allocation, AllocationSegment } from '../../domain/allocation.js';
import { levelFactor, regularPrice, type PriceList } from '../../domain/pricing.js';
import { checkApplication, runsNoApplications, type ApplicationPolicy } from '../../domain/application-policy.js';
import { checkHorizon } from '../../domain/horizon.js';
import { unmetObjective } from '../../domain/objectives.js';
import type { GuaranteeTerm, ServiceRequest } from '../../domain/terms.js';
import { planFor, sharedPlan } from '../../scheduler/checkpoint-plan.js';
import { jobSpecFor } from '../../scheduler/job-spec.js';
import { checkpointPlanAt, pieceMs, segmentPhases, shapeOf } from '../../scheduler/job-timing.js';
import type { Alternative, ClusterDescription, ClusterNode, JobSpec, PlannedJob, ReplanReport, Segment } from '../../scheduler/model.js';
import { nodeList } from '../../scheduler/model.js';
import { firmLoad } from '../../scheduler/load.js';
import { ProportionalShare } from '../../scheduler/proportional-share.js';
import { isBestEffort, PlanningManager } from '../../scheduler/planning-manager.js';

/** An admission: the booking, and the other jobs the scheduler moved to make room (their stored allocations are stale). */
export type PlanDecision =
  | { accepted: true; allocation: Allocation; moved: string[] }
  | { accepted: false; reason: string; /** The booking the scheduler found, when only the objectives refused it. */ breaksObjectives?: Allocation };

/** A start slot for an advisory answer: what would be booked, and when the job needs to be done by in the worst case. */
export interface PlanSlot {
  slot: Allocation;
  /** The slot's start plus the job's worst case (covered outages included): the earliest deadline it can promise. */
  completion: Date;
}

/** A changed request the scheduler could serve (a counter-offer), with the terms that change. */
export interface PlanAlternative {
  kind: Alternative['kind'];
  changes: { window?: { start: Date; end: Date }; deadline?: Date; nodeCount?: number; runtimeSeconds?: number };
  /** The request with the changes applied. */
  request: ServiceRequest;
  slot: Allocation;
  description: string;
}

/** How a stored booking came back at start-up. */
export type RestoreOutcome =
  | { restored: 'exact' | 'placed'; allocation: Allocation }
  | { restored: 'moved'; allocation: Allocation }
  | { restored: 'lost'; reason: string };

/** A node as operators see it (GET /api/nodes). */
export interface NodeView extends ClusterNode {
  failed: boolean;
}

/** What set off a re-plan. */
export type ReplanCause = 'node-failed' | 'node-repaired' | 'job-finished' | 'failure-block-renewed';

export interface ReplanSummary extends ReplanReport {
  /** The failed or repaired node. */
  node: string;
}

/**
 * The engine's face of the planning scheduler (src/scheduler, SCHEDULER.md): the Planning
 * Manager over the configured cluster, addressed by booking key (an agreement id, or
 * `hold:<offer id>` for a preparatory hold). It converts between domain requests and
 * allocations (Dates) and scheduler jobs (milliseconds).
 *
 * Admission decides and books in one synchronous call, so two concurrent requests never
 * both take the last free nodes. Bookings the scheduler moves (a best-effort job making
 * room, a re-plan after a failure) are remembered until `settle()` hands them to the
 * persister, which stores their new allocations; callers settle after releasing their locks.
 */
export class PlanningService {
  readonly manager: PlanningManager;
  private readonly changed = new Set<string>();
  private persister: ((key: string) => Promise<void>) | undefined;
  private onPersistError: (key: string, error: unknown) => void = () => {};
  private settling: Promise<void> = Promise.resolve();
  /** An interactive job starts within this many seconds of acceptance or is refused (WSAG_INTERACTIVE_START_SECONDS). */
  interactiveStartSeconds = 5;
  /** Best-effort and background work shares spare capacity in proportion to bids (docs/pricing.md). */
  private readonly market = new ProportionalShare();

  constructor(
    readonly cluster: ClusterDescription,
    private readonly prices?: PriceList,
    /** How far ahead the plan reaches (src/domain/horizon.ts); a year unless configured. */
    private readonly horizonSeconds = 365 * 86_400,
    /** Which applications the site runs (src/domain/application-policy.ts). */
    private readonly applications: ApplicationPolicy = runsNoApplications,
  ) {
    this.manager = new PlanningManager(cluster);
  }

  get clusterNodes(): number {
    return this.cluster.nodes.length;
  }

  /** The scheduler's view of `request` under `key`; `arrival` orders best-effort jobs. */
  specFor(key: string, request: ServiceRequest, arrival: Date): JobSpec {
    const spec = jobSpecFor(key, request, arrival, { value: this.valueOf(request) });
    // A booked interactive session (its window set at admission) is on the nodes kept prepared, as admission placed it.
    if (request.interactive && request.window && this.cluster.nodes.some((node) => node.warm)) spec.prepared = true;
    return spec;
  }

  /**
   * Decides and, if accepted, books under `key`. `replacing` names a booking the new one
   * would replace (renegotiation): its capacity counts as free for the new one, but it
   * stays booked until released.
   */
  admit(key: string, request: ServiceRequest, now: Date, replacing?: string, objectives: readonly GuaranteeTerm[] = [], bidder = key): PlanDecision {
    checkHorizon(request, objectives, now, this.horizonSeconds);
    checkApplication(request, this.applications);
    // The admission rule: the booking must keep every guarantee term's objective (src/domain/objectives.ts).
    let booking: Allocation | undefined;
    const accept = (job: PlannedJob) => {
      booking = allocationOf(job);
      return unmetObjective(objectives, request, booking, now);
    };
    const spec = this.specFor(key, request, now);
    if (isBestEffort(spec) && !replacing) spec.queueTag = this.market.tag(bidder, this.bidOf(request), spec.nodes * spec.runtimeSeconds, this.manager.virtualTime());
    const decision = request.interactive && !request.window
      ? this.manager.admitInteractive(spec, now.getTime(), this.interactiveStartSeconds * 1000, { ...options(replacing), accept })
      : this.manager.admit(spec, now.getTime(), { ...options(replacing), accept });
    if (!decision.accepted) return { ...decision, ...(booking ? { breaksObjectives: booking } : {}) };
    const moved = decision.moved ?? [];
    this.markChanged(moved);
    // The booking the objectives were checked against is the one made.
    return { accepted: true, allocation: booking ?? allocationOf(decision.job), moved };
  }

  /** Up to `count` start slots for a request (advisory answers); books nothing. */
  slots(request: ServiceRequest, now: Date, count: number, replacing?: string): PlanSlot[] {
    checkHorizon(request, [], now, this.horizonSeconds);
    checkApplication(request, this.applications);
    const spec = this.specFor('advisory', request, now);
    const shape = shapeOf(spec, this.cluster.timing);
    const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, now.getTime());
    const worstMs = 'reason' in plan ? 0 : pieceMs(shape, plan, plan.count + 1, false, shape.deadlineCoversOutages ? shape.timing.outages : 0, true);
    return this.manager.slots(spec, now.getTime(), count, options(replacing)).map((s) => ({
      slot: { start: new Date(s.start), end: new Date(s.end), nodes: s.nodes },
      completion: new Date(Math.ceil(Math.max(s.end, s.start + worstMs) / 1000) * 1000),
    }));
  }

  /** Counter-offers for a request that cannot be served as asked: a later start, a later deadline, fewer nodes. */
  alternatives(request: ServiceRequest, now: Date, replacing?: string): PlanAlternative[] {
    checkHorizon(request, [], now, this.horizonSeconds);
    checkApplication(request, this.applications);
    const spec = this.specFor('alternative', request, now);
    return this.manager.alternatives(spec, now.getTime(), options(replacing)).map((alternative) => {
      const changed = alternative.spec;
      const changes: PlanAlternative['changes'] = {};
      const next: ServiceRequest = { ...request };
      if (changed.window && (changed.window.start !== spec.window?.start || changed.window.end !== spec.window?.end)) {
        changes.window = { start: new Date(changed.window.start), end: new Date(changed.window.end) };
        next.window = changes.window;
      }
      if (changed.deadline !== undefined && changed.deadline !== spec.deadline) {
        changes.deadline = new Date(changed.deadline);
        next.deadline = changes.deadline;
      }
      if (changed.nodes !== spec.nodes) {
        changes.nodeCount = changed.nodes;
        next.nodeCount = changed.nodes;
      }
      if (!spec.window && changed.runtimeSeconds !== spec.runtimeSeconds) {
        changes.runtimeSeconds = changed.runtimeSeconds;
        next.runtimeSeconds = changed.runtimeSeconds;
      }
      const slot = { start: new Date(alternative.slot.start), end: new Date(alternative.slot.end), nodes: alternative.slot.nodes };
      return { kind: alternative.kind, changes, request: next, slot, description: alternative.description };
    });
  }

  /** The share of the SLA capacity booked over [start, end), without the bookings under `excluding` (demand pricing). */
  load(start: Date, end: Date, excluding: readonly string[] = []): number {
    return firmLoad(this.cluster, this.manager.mm, start.getTime(), end.getTime(), excluding);
  }

  /** Moves a booking to another key (a hold becoming an agreement); false if there is none. */
  rename(from: string, to: string): boolean {
    return this.manager.rename(from, to);
  }

  release(key: string): void {
    this.manager.release(key);
  }

  /** The booking under `key` as an allocation; `previous` supplies the times of a job that has no piece planned (in P, waiting for a re-plan). */
  allocationOf(key: string, previous?: Allocation): Allocation | undefined {
    const job = this.manager.job(key);
    return job ? allocationOf(job, previous) : undefined;
  }

  /** For each booked piece under `key`, when its nodes are ready (preparation done) and when their release begins (the Gantt). */
  phasesOf(key: string): Array<{ readyAt: Date; releaseFrom: Date }> {
    const job = this.manager.job(key);
    if (!job) return [];
    const shape = this.manager.shape(job);
    return job.segments.map((s) => {
      const { readyAt, releaseFrom } = segmentPhases(job, shape, s);
      return { readyAt: new Date(readyAt), releaseFrom: new Date(releaseFrom) };
    });
  }

  /** The planned job under `key` (to put it back exactly after an undo). */
  job(key: string): PlannedJob | undefined {
    const job = this.manager.job(key);
    return job && { ...job, segments: job.segments.map((s) => ({ ...s, nodes: [...s.nodes], spare: [...s.spare] })) };
  }

  /** Puts a planned job back exactly (undo); false if its nodes are taken. */
  restoreJob(job: PlannedJob, replacing?: string): boolean {
    return this.manager.restore(job, options(replacing));
  }

  /**
   * Books a stored allocation again (start-up, or a hold that must be re-booked): exactly as
   * planned when it carries its plan and its nodes are free; else at the same times on
   * other suitable nodes (allocations stored before the planning scheduler carry no plan);
   * else wherever the scheduler now admits the request (the allocation moved). `arrival`
   * is when the request was first admitted, if the allocation does not say.
   */
  restore(key: string, request: ServiceRequest, allocation: Allocation, arrival: Date, now: Date, replacing?: string): RestoreOutcome {
    if (this.restoreExact(key, request, allocation, arrival, replacing)) return { restored: 'exact', allocation: this.allocationOf(key) as Allocation };
    const spec = this.specFor(key, request, allocation.arrival ?? arrival);
    const shape = shapeOf(spec, this.cluster.timing);
    const planned = this.plannedFrom(spec, allocation);
    const placed = this.placedAtSameTimes(spec, allocation, planned, shape.spare, replacing);
    if (placed && this.manager.restore(placed, options(replacing))) {
      this.markChanged([key]);
      return { restored: 'placed', allocation: allocationOf(placed, allocation) };
    }
    const decision = this.manager.admit(spec, now.getTime(), options(replacing));
    if (!decision.accepted) return { restored: 'lost', reason: decision.reason };
    this.markChanged([key, ...(decision.moved ?? [])]);
    return { restored: 'moved', allocation: allocationOf(decision.job) };
  }

  /** Books a stored allocation exactly as planned, if it carries its plan and its nodes are free; false otherwise (nothing booked). */
  restoreExact(key: string, request: ServiceRequest, allocation: Allocation, arrival: Date, replacing?: string): boolean {
    if (this.manager.job(key)) return true;
    const exact = this.plannedFrom(this.specFor(key, request, allocation.arrival ?? arrival), allocation);
    return exact !== undefined && this.manager.restore(exact, options(replacing));
  }

  /** Changes to the bookings so far: while it stays the same, `booked()` gives the same bookings. */
  get bookingChanges(): number {
    return this.manager.mm.changes;
  }

  /** The keys of every booking (agreement ids and `hold:<offer id>`), without building their allocations as `booked` does. */
  bookingKeys(): IterableIterator<string> {
    return this.manager.jobIds();
  }

  /**
   * Every booking: agreements under their id, preparatory holds under `hold:<offer id>`;
   * with `window`, only those overlapping [from, to), and only those are built.
   */
  booked(window?: { from: Date; to: Date }): ReadonlyMap<string, Allocation> {
    const out = new Map<string, Allocation>();
    for (const job of this.manager.allJobs()) {
      if (window) {
        const { start, end } = plannedSpan(job);
        if (start >= window.to.getTime() || end <= window.from.getTime()) continue;
      }
      out.set(job.spec.id, allocationOf(job));
    }
    return out;
  }

  /** How many bookings the plan holds. */
  get bookingCount(): number {
    return this.manager.size;
  }

  // --- nodes and events -----------------------------------------------------------------

  nodes(): NodeView[] {
    return this.cluster.nodes.map((node) => ({ ...node, failed: this.manager.isFailed(node.id) }));
  }

  hasNode(id: string): boolean {
    return this.cluster.nodes.some((n) => n.id === id);
  }

  /** A node failed: the scheduler re-plans (restarts on spares, moves, suspends, partial execution); affected bookings are to be stored again. */
  nodeFailed(nodeId: string, now: Date): ReplanSummary {
    return this.replanned(nodeId, this.observed('node-failed', () => this.manager.nodeFailed(nodeId, now.getTime())));
  }

  nodeRepaired(nodeId: string, now: Date): ReplanSummary {
    return this.replanned(nodeId, this.observed('node-repaired', () => this.manager.nodeRepaired(nodeId, now.getTime())));
  }

  /** Told of every re-plan (metrics and logs): its cause, how long it took and what it changed. */
  onReplan: ((cause: ReplanCause, seconds: number, report: ReplanReport) => void) | undefined;

  private observed<T extends { report?: ReplanReport } | ReplanReport>(cause: ReplanCause, replan: () => T): T {
    const started = performance.now();
    const result = replan();
    const report = 'moved' in result ? (result as ReplanReport) : (result as { report?: ReplanReport }).report;
    if (report) this.onReplan?.(cause, (performance.now() - started) / 1000, report);
    return result;
  }

  /** Moves the plan's clock: finished jobs leave it; a node still failed past its block is taken out again. */
  advance(now: Date): ReplanReport | undefined {
    return this.advanceReport(now).report;
  }

  /**
   * `advance`, also saying which jobs left the plan: those whose booking ended, and those
   * given up unsolved (`problem` says why: their promise is broken).
   */
  advanceReport(now: Date): { report?: ReplanReport; left: Array<{ id: string; problem?: string }> } {
    const { report, left } = this.observed('failure-block-renewed', () => this.manager.advance(now.getTime()));
    if (report) this.markChanged([...report.moved, ...report.suspended, ...report.problematic.map((p) => p.id), ...report.solved]);
    return { ...(report ? { report } : {}), left: left.map((job) => ({ id: job.spec.id, ...(job.problem !== undefined ? { problem: job.problem } : {}) })) };
  }

  /** A job finished early, or left for a peer: its capacity is free from `now` and waiting jobs may take it; their new bookings are to be stored. */
  jobFinished(key: string, now: Date): ReplanReport {
    const report = this.observed('job-finished', () => this.manager.jobFinished(key, now.getTime()));
    this.markChanged([...report.moved, ...report.suspended, ...report.problematic.map((p) => p.id), ...report.solved]);
    return report;
  }

  // --- persisting what moved ----------------------------------------------------------------

  /**
   * Who stores a booking's new allocation (the agreement, or the hold in its negotiation).
   * A failure is reported to `onError` and does not fail the request that settled: the
   * booking itself stands, and a restart places it again from what was stored.
   */
  persistWith(persister: (key: string) => Promise<void>, onError: (key: string, error: unknown) => void = () => {}): void {
    this.persister = persister;
    this.onPersistError = onError;
  }

  /** Keys whose stored allocation is stale, not yet settled. */
  pendingChanges(): string[] {
    return [...this.changed];
  }

  /**
   * Stores the allocations the scheduler changed since the last call, one at a time, in
   * order. Call it holding no agreement or negotiation lock: the persister takes them.
   */
  settle(): Promise<void> {
    const run = this.settling.then(async () => {
      const keys = [...this.changed];
      this.changed.clear();
      if (!this.persister) return;
      for (const key of keys) {
        try {
          await this.persister(key);
        } catch (error) {
          this.onPersistError(key, error);
        }
      }
    });
    this.settling = run;
    return run;
  }

  private markChanged(keys: readonly string[]): void {
    for (const key of keys) this.changed.add(key);
  }

  private replanned(node: string, report: ReplanReport): ReplanSummary {
    this.markChanged([...report.moved, ...report.suspended, ...report.problematic.map((p) => p.id), ...report.solved]);
    return { node, ...report };
  }

  /** What a best-effort or background request bids per node-hour: its sla:Bid, else the list price at its level. */
  private bidOf(request: ServiceRequest): number {
    // A site that gives its capacity away (list price 0) still ranks bidders: each then bids 1.
    return request.bid ?? ((this.prices?.nodeHour ?? 1) * levelFactor[request.guaranteeLevel] || 1);
  }

  /** The estimated regular price orders problems and new requests (higher value first). */
  private valueOf(request: ServiceRequest): number {
    if (!this.prices) return 1;
    const window = request.window ? { start: request.window.start, end: request.window.end, nodes: request.nodeCount } : undefined;
    return regularPrice(request, window, this.prices).amount;
  }

  /** The planned job an allocation describes, if it carries its plan. */
  private plannedFrom(spec: JobSpec, allocation: Allocation): PlannedJob | undefined {
    if (!allocation.segments || !allocation.checkpoints) return undefined;
    const job: PlannedJob = {
      spec,
      segments: allocation.segments.map(toSegment),
      checkpoints: sharedPlan({ ...allocation.checkpoints }),
      outagesLeft: allocation.outagesLeft ?? shapeOf(spec, this.cluster.timing).timing.outages,
    };
    if (allocation.problem !== undefined) job.problem = allocation.problem;
    if (allocation.remoteStandby !== undefined) job.remoteStandby = allocation.remoteStandby;
    return job;
  }

  /** The same pieces at the same times on nodes that are free then (an allocation without a plan is one piece). */
  private placedAtSameTimes(spec: JobSpec, allocation: Allocation, planned: PlannedJob | undefined, spare: number, replacing?: string): PlannedJob | undefined {
    const shape = shapeOf(spec, this.cluster.timing);
    const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, allocation.start.getTime());
    const checkpoints = planned?.checkpoints ?? sharedPlan('reason' in plan ? planFor(shape.timing, 0) : plan);
    const pieces: Array<Pick<Segment, 'start' | 'end' | 'restart' | 'intervals'> & { spare: number }> = planned
      ? planned.segments.map((s) => ({ start: s.start, end: s.end, restart: s.restart, intervals: s.intervals, spare: s.spare.length }))
      : [{ start: allocation.start.getTime(), end: allocation.end.getTime(), restart: false, intervals: checkpoints.count + 1, spare }];
    const mm = this.manager.mm;
    const eligible = mm.eligible(spec.requirements, isBestEffort(spec), spec.prepared === true);
    const segments: Segment[] = [];
    for (const piece of pieces) {
      const found = mm.map(spec.nodes + piece.spare, eligible, piece.start, piece.end, {
        oneIsland: spec.requirements.interconnect !== undefined,
        ...(replacing !== undefined ? { ignoreOwner: replacing } : {}),
      });
      if (!found) return undefined;
      const ids = found.map((i) => this.cluster.nodes[i]?.id as string);
      segments.push({ start: piece.start, end: piece.end, nodes: nodeList(ids.slice(0, spec.nodes)), spare: nodeList(ids.slice(spec.nodes)), restart: piece.restart, intervals: piece.intervals });
    }
    const job: PlannedJob = {
      spec,
      segments,
      checkpoints,
      outagesLeft: planned?.outagesLeft ?? allocation.outagesLeft ?? shape.timing.outages,
    };
    if (planned?.problem !== undefined) job.problem = planned.problem;
    const remote = planned?.remoteStandby ?? allocation.remoteStandby ?? (spec.level === 'Full' ? spec.nodes : undefined);
    if (remote !== undefined) job.remoteStandby = remote;
    return job;
  }
}

function options(replacing: string | undefined): { replacing?: string } {
  return replacing !== undefined ? { replacing } : {};
}

/** When the job's booking starts and ends (ms): its planned pieces', else `previous`'s, else what its request asked. */
function plannedSpan(job: PlannedJob, previous?: Allocation): { start: number; end: number } {
  const first = job.segments[0];
  const last = job.segments[job.segments.length - 1];
  const spec = job.spec;
  if (first && last) return { start: first.start, end: last.end };
  if (previous) return { start: previous.start.getTime(), end: previous.end.getTime() };
  if (spec.window) return { start: spec.window.start, end: spec.window.end };
  const start = spec.earliestStart ?? spec.arrival;
  return { start, end: start + spec.runtimeSeconds * 1000 };
}

/**
 * A planned job as an allocation: from its first piece's start to its last piece's end on
 * its requested node count, with the plan behind it. A job without pieces (in P) keeps the
 * times it had, or its window, or its earliest start and runtime.
 */
export function allocationOf(job: PlannedJob, previous?: Allocation): Allocation {
  const spec = job.spec;
  const { start, end } = plannedSpan(job, previous);
  const allocation: Allocation = {
    start: new Date(start),
    end: new Date(end),
    nodes: spec.nodes,
    segments: job.segments.map(toAllocationSegment),
    checkpoints: { ...job.checkpoints },
    outagesLeft: job.outagesLeft,
    arrival: new Date(spec.arrival),
  };
  if (job.remoteStandby !== undefined) allocation.remoteStandby = job.remoteStandby;
  if (job.problem !== undefined) allocation.problem = job.problem;
  if (spec.window) allocation.promised = { start: new Date(spec.window.start), end: new Date(spec.window.end) };
  return allocation;
}

function toAllocationSegment(s: Segment): AllocationSegment {
  return { start: new Date(s.start), end: new Date(s.end), nodeIds: [...s.nodes], spareNodeIds: [...s.spare], restart: s.restart, intervals: s.intervals };
}

function toSegment(s: AllocationSegment): Segment {
  return { start: s.start.getTime(), end: s.end.getTime(), nodes: nodeList([...s.nodeIds]), spare: nodeList([...s.spareNodeIds]), restart: s.restart, intervals: s.intervals };
}
