import { planFor, sharedPlan } from '../../scheduler/checkpoint-plan.js';
import { nodeList } from '../../scheduler/model.js';
import { ProportionalShare } from '../../scheduler/proportional-share.js';
import { isBestEffort, PlanningManager } from '../../scheduler/planning-manager.js';
import type { Allocation, AllocationSegment } from '../../domain/allocation.js';
import type { PriceList } from '../../domain/pricing.js';
import { runsNoApplications, type ApplicationPolicy } from '../../domain/application-policy.js';
import type { ServiceRequest } from '../../domain/terms.js';
import { checkpointPlanAt } from '../../scheduler/job-timing.js';
import type { ClusterDescription, JobSpec, PlannedJob, ReplanReport, Segment } from '../../scheduler/model.js';

/** How a stored booking came back at start-up. */
export type RestoreOutcome =
  | { restored: 'exact' | 'placed'; allocation: Allocation }
  | { restored: 'moved'; allocation: Allocation }
  | { restored: 'lost'; reason: string };

/** What set off a re-plan. */
export type ReplanCause = 'node-failed' | 'node-repaired' | 'job-finished' | 'failure-block-renewed';

/**
 * What the planning service has booked: bookings restored after a restart at the times they had, their changes
 * persisted and settled (PlanningService admits, releases and re-plans).
 */
export abstract class PlanningBook {
  readonly manager: PlanningManager;

  protected readonly changed = new Set<string>();

  protected persister: ((key: string) => Promise<void>) | undefined;

  protected onPersistError: (key: string, error: unknown) => void = () => {};

  protected settling: Promise<void> = Promise.resolve();

  /**
   * An interactive job starts within this many seconds of acceptance or is refused (WSAG_INTERACTIVE_START_SECONDS).
   */
  interactiveStartSeconds = 5;

  /** Best-effort and background work shares spare capacity in proportion to bids (docs/pricing.md). */
  protected readonly market = new ProportionalShare();

  constructor(
    readonly cluster: ClusterDescription,
    protected readonly prices?: PriceList,
    /** How far ahead the plan reaches (src/domain/horizon.ts); a year unless configured. */
    protected readonly horizonSeconds = 365 * 86_400,
    /** Which applications the site runs (src/domain/application-policy.ts). */
    protected readonly applications: ApplicationPolicy = runsNoApplications,
  ) {
    this.manager = new PlanningManager(cluster);
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
  restore(
    key: string,
    request: ServiceRequest,
    allocation: Allocation,
    arrival: Date,
    now: Date,
    replacing?: string,
  ): RestoreOutcome {
    if (this.restoreExact(key, request, allocation, arrival, replacing))
      return { restored: 'exact', allocation: this.allocationOf(key) as Allocation };
    const spec = this.specFor(key, request, allocation.arrival ?? arrival);
    const shape = this.manager.shapeFor(spec);
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

  /**
   * Books a stored allocation exactly as planned, if it carries its plan and its nodes are free; false otherwise
   * (nothing booked).
   */
  restoreExact(
    key: string,
    request: ServiceRequest,
    allocation: Allocation,
    arrival: Date,
    replacing?: string,
  ): boolean {
    if (this.manager.job(key)) return true;
    const exact = this.plannedFrom(this.specFor(key, request, allocation.arrival ?? arrival), allocation);
    return exact !== undefined && this.manager.restore(exact, options(replacing));
  }

  /** Changes to the bookings so far: while it stays the same, `booked()` gives the same bookings. */
  get bookingChanges(): number {
    return this.manager.mm.changes;
  }

  /**
   * The keys of every booking (agreement ids and `hold:<offer id>`), without building their allocations as `booked`
   * does.
   */
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

  /** Told of every re-plan (metrics and logs): its cause, how long it took and what it changed. */
  onReplan: ((cause: ReplanCause, seconds: number, report: ReplanReport) => void) | undefined;

  /**
   * Who stores a booking's new allocation (the agreement, or the hold in its negotiation).
   * A failure is reported to `onError` and does not fail the request that settled: the
   * booking itself stands, and a restart places it again from what was stored.
   */
  persistWith(
    persister: (key: string) => Promise<void>,
    onError: (key: string, error: unknown) => void = () => {},
  ): void {
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

  protected markChanged(keys: readonly string[]): void {
    for (const key of keys) this.changed.add(key);
  }

  /** The planned job an allocation describes, if it carries its plan. */
  protected plannedFrom(spec: JobSpec, allocation: Allocation): PlannedJob | undefined {
    if (!allocation.segments || !allocation.checkpoints) return undefined;
    const job: PlannedJob = {
      spec,
      segments: allocation.segments.map(toSegment),
      checkpoints: sharedPlan({ ...allocation.checkpoints }),
      outagesLeft: allocation.outagesLeft ?? this.manager.shapeFor(spec).timing.outages,
    };
    if (allocation.problem !== undefined) job.problem = allocation.problem;
    if (allocation.remoteStandby !== undefined) job.remoteStandby = allocation.remoteStandby;
    return job;
  }

  /** The same pieces at the same times on nodes that are free then (an allocation without a plan is one piece). */
  protected placedAtSameTimes(
    spec: JobSpec,
    allocation: Allocation,
    planned: PlannedJob | undefined,
    spare: number,
    replacing?: string,
  ): PlannedJob | undefined {
    const shape = this.manager.shapeFor(spec);
    const plan = checkpointPlanAt({ ...spec, deadline: undefined }, shape, allocation.start.getTime());
    const checkpoints = planned?.checkpoints ?? sharedPlan('reason' in plan ? planFor(shape.timing, 0) : plan);
    const pieces: Array<Pick<Segment, 'start' | 'end' | 'restart' | 'intervals'> & { spare: number }> = planned
      ? planned.segments.map((s) => ({
          start: s.start,
          end: s.end,
          restart: s.restart,
          intervals: s.intervals,
          spare: s.spare.length,
        }))
      : [
          {
            start: allocation.start.getTime(),
            end: allocation.end.getTime(),
            restart: false,
            intervals: checkpoints.count + 1,
            spare,
          },
        ];
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
      segments.push({
        start: piece.start,
        end: piece.end,
        nodes: nodeList(ids.slice(0, spec.nodes)),
        spare: nodeList(ids.slice(spec.nodes)),
        restart: piece.restart,
        intervals: piece.intervals,
      });
    }
    const job: PlannedJob = {
      spec,
      segments,
      checkpoints,
      outagesLeft: planned?.outagesLeft ?? allocation.outagesLeft ?? shape.timing.outages,
    };
    if (planned?.problem !== undefined) job.problem = planned.problem;
    const remote =
      planned?.remoteStandby ?? allocation.remoteStandby ?? (spec.level === 'Full' ? spec.nodes : undefined);
    if (remote !== undefined) job.remoteStandby = remote;
    return job;
  }

  protected abstract allocationOf(key: string, previous?: Allocation): Allocation | undefined;
  protected abstract specFor(key: string, request: ServiceRequest, arrival: Date): JobSpec;
}

export function options(replacing: string | undefined): { replacing?: string } {
  return replacing !== undefined ? { replacing } : {};
}

/** When the job's booking starts and ends (ms): its planned pieces', else `previous`'s, else what its request asked. */
export function plannedSpan(job: PlannedJob, previous?: Allocation): { start: number; end: number } {
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

export function toAllocationSegment(s: Segment): AllocationSegment {
  return {
    start: new Date(s.start),
    end: new Date(s.end),
    nodeIds: [...s.nodes],
    spareNodeIds: [...s.spare],
    restart: s.restart,
    intervals: s.intervals,
    ...(s.yields ? { yields: true } : {}),
    ...(s.onChance ? { onChance: true } : {}),
  };
}

export function toSegment(s: AllocationSegment): Segment {
  return {
    start: s.start.getTime(),
    end: s.end.getTime(),
    nodes: nodeList([...s.nodeIds]),
    spare: nodeList([...s.spareNodeIds]),
    restart: s.restart,
    intervals: s.intervals,
    ...(s.yields ? { yields: true as const } : {}),
    ...(s.onChance ? { onChance: true as const } : {}),
  };
}
