import type { Allocation } from '../../domain/allocation.js';
import { levelFactor, regularPrice } from '../../domain/pricing.js';
import { checkApplication } from '../../domain/application-policy.js';
import { checkHorizon } from '../../domain/horizon.js';
import { unmetObjective } from '../../domain/objectives.js';
import type { GuaranteeTerm, ServiceRequest } from '../../domain/terms.js';
import { jobSpecFor } from '../../scheduler/job-spec.js';
import { checkpointPlanAt, pieceMs, segmentPhases, withOptimumCount } from '../../scheduler/job-timing.js';
import { failureGroupOf, type GroupFailureRate } from '../../scheduler/failure-rate.js';
import type { Alternative, ClusterNode, JobSpec, PlannedJob, ReplanReport } from '../../scheduler/model.js';
import { firmLoad } from '../../scheduler/load.js';
import { isBestEffort } from '../../scheduler/planning-manager.js';
import type { RecentRepairRate } from '../../scheduler/recent-repairs.js';
import type { RepairTimesView } from '../../scheduler/repair-times.js';
import { PlanningBook } from './planning-book.js';
export type { RestoreOutcome, ReplanCause } from './planning-book.js';
import type { ReplanCause } from './planning-book.js';
import { options, allocationOf } from './planning-book.js';

/**
 * An admission: the booking, and the other jobs the scheduler moved to make room (their stored allocations are stale).
 */
export type PlanDecision =
  | { accepted: true; allocation: Allocation; moved: string[] }
  | {
      accepted: false;
      reason: string /** The booking the scheduler found, when only the objectives refused it. */;
      breaksObjectives?: Allocation;
    };

/**
 * A start slot for an advisory answer: what would be booked, and when the job needs to be done by in the worst case.
 */
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

/** A node as operators see it (GET /api/nodes). */
export interface NodeView extends ClusterNode {
  failed: boolean;
}

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
/** The failure rate the planner uses, and what it is learned from. */
export interface FailureRateView {
  /** Failures per node and day, as the planner estimates them now. */
  perNodeDay: number;
  /** Node failures seen since the plan began (this server's start). */
  failures: number;
  /** Node-days observed since then. */
  nodeDays: number;
  /** The configured rate (nodeFailuresPerDay), and how many node-days of observation it is worth. */
  configuredPerNodeDay: number;
  configuredNodeDays: number;
  /** The same per failure group: a job's paying checkpoints are weighed against the groups it may run on. */
  groups: GroupFailureRate[];
  /** Whether nodes fail again soon after a repair, so that those repaired recently are chosen last. */
  recentRepairs: RecentRepairRate;
  /** How long failed nodes stayed down: a failed node is kept out of the plan until it is likely back. */
  repairTimes: RepairTimesView;
}

export class PlanningService extends PlanningBook {
  get clusterNodes(): number {
    return this.cluster.nodes.length;
  }

  /** The scheduler's view of `request` under `key`; `arrival` orders best-effort jobs. */
  specFor(key: string, request: ServiceRequest, arrival: Date): JobSpec {
    const spec = jobSpecFor(key, request, arrival, { value: this.regularValue(request) });
    // A booked interactive session (its window set at admission) is on the nodes kept prepared, as admission placed it.
    if (request.interactive && request.window && this.cluster.nodes.some((node) => node.warm)) spec.prepared = true;
    return spec;
  }

  /**
   * Decides and, if accepted, books under `key`. `replacing` names a booking the new one
   * would replace (renegotiation): its capacity counts as free for the new one, but it
   * stays booked until released.
   */
  admit(
    key: string,
    request: ServiceRequest,
    now: Date,
    replacing?: string,
    objectives: readonly GuaranteeTerm[] = [],
    bidder = key,
  ): PlanDecision {
    checkHorizon(request, objectives, now, this.horizonSeconds);
    checkApplication(request, this.applications);
    // The admission rule: the booking must keep every guarantee term's objective (src/domain/objectives.ts).
    let booking: Allocation | undefined;
    const accept = (job: PlannedJob) => {
      booking = allocationOf(job);
      return unmetObjective(objectives, request, booking, now);
    };
    const spec = this.specFor(key, request, now);
    if (isBestEffort(spec) && !replacing)
      spec.queueTag = this.market.tag(
        bidder,
        this.bidOf(request),
        spec.nodes * spec.runtimeSeconds,
        this.manager.virtualTime(),
      );
    const decision =
      request.interactive && !request.window
        ? this.manager.admitInteractive(spec, now.getTime(), this.interactiveStartSeconds * 1000, {
            ...options(replacing),
            accept,
          })
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
    const shape = this.manager.shapeFor(spec);
    // The earliest completion the slot allows: the count whose worst case is shortest.
    const plan = checkpointPlanAt({ ...spec, deadline: undefined }, withOptimumCount(shape), now.getTime());
    const worstMs =
      'reason' in plan
        ? 0
        : pieceMs(shape, plan, plan.count + 1, false, shape.deadlineCoversOutages ? shape.timing.outages : 0, true);
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
      const slot = {
        start: new Date(alternative.slot.start),
        end: new Date(alternative.slot.end),
        nodes: alternative.slot.nodes,
      };
      return { kind: alternative.kind, changes, request: next, slot, description: alternative.description };
    });
  }

  /**
   * The share of the SLA capacity booked over [start, end), without the bookings under `excluding` (demand pricing).
   */
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

  /**
   * The booking under `key` as an allocation; `previous` supplies the times of a job that has no piece planned (in P,
   * waiting for a re-plan).
   */
  allocationOf(key: string, previous?: Allocation): Allocation | undefined {
    const job = this.manager.job(key);
    return job ? allocationOf(job, previous) : undefined;
  }

  /**
   * For each booked piece under `key`, when its nodes are ready (preparation done) and when their release begins (the
   * Gantt).
   */
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

  // --- nodes and events -----------------------------------------------------------------

  nodes(): NodeView[] {
    return this.cluster.nodes.map((node) => ({
      ...node,
      failureGroup: failureGroupOf(node),
      failed: this.manager.isFailed(node.id),
    }));
  }

  /**
   * The failure rate the planner weighs checkpoints against (docs/scheduler.md, "Checkpoints by
   * need"): the configured rate as a prior, moved by the failures the nodes have had since the
   * plan began.
   */
  failureRate(now: Date): FailureRateView {
    const estimate = this.manager.failureRate;
    const configured = this.cluster.timing;
    return {
      perNodeDay: estimate.perNodeDay(now.getTime()),
      failures: estimate.failuresSeen(),
      nodeDays: estimate.nodeDays(now.getTime()),
      configuredPerNodeDay: configured.nodeFailuresPerDay,
      configuredNodeDays: configured.nodeFailuresPriorNodeDays,
      groups: estimate.groups(now.getTime()),
      recentRepairs: this.manager.recentRepairs.rate(now.getTime()),
      repairTimes: this.manager.repairTimes.view(),
    };
  }

  hasNode(id: string): boolean {
    return this.cluster.nodes.some((n) => n.id === id);
  }

  /**
   * A node failed: the scheduler re-plans (restarts on spares, moves, suspends, partial execution); affected bookings
   * are to be stored again.
   */
  nodeFailed(nodeId: string, now: Date): ReplanSummary {
    return this.replanned(
      nodeId,
      this.observed('node-failed', () => this.manager.nodeFailed(nodeId, now.getTime())),
    );
  }

  nodeRepaired(nodeId: string, now: Date): ReplanSummary {
    return this.replanned(
      nodeId,
      this.observed('node-repaired', () => this.manager.nodeRepaired(nodeId, now.getTime())),
    );
  }

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
    if (report)
      this.markChanged([
        ...report.moved,
        ...report.suspended,
        ...report.problematic.map((p) => p.id),
        ...report.solved,
      ]);
    return {
      ...(report ? { report } : {}),
      left: left.map((job) => ({ id: job.spec.id, ...(job.problem !== undefined ? { problem: job.problem } : {}) })),
    };
  }

  /**
   * A job finished early, or left for a peer: its capacity is free from `now` and waiting jobs may take it; their new
   * bookings are to be stored.
   */
  jobFinished(key: string, now: Date): ReplanReport {
    const report = this.observed('job-finished', () => this.manager.jobFinished(key, now.getTime()));
    this.markChanged([...report.moved, ...report.suspended, ...report.problematic.map((p) => p.id), ...report.solved]);
    return report;
  }

  // --- persisting what moved ----------------------------------------------------------------

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
  protected regularValue(request: ServiceRequest): number {
    if (!this.prices) return 1;
    const window = request.window
      ? { start: request.window.start, end: request.window.end, nodes: request.nodeCount }
      : undefined;
    return regularPrice(request, window, this.prices).amount;
  }
}
