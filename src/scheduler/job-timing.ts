import {
  checkpointTiming,
  chooseCheckpointCount,
  optimalCheckpointCount,
  payingCheckpointCount,
  planFor,
  type CheckpointPlan,
  type CheckpointTiming,
  type CountRule,
} from './checkpoint-plan.js';
import type { Instant, JobSpec, PlannedJob, Segment } from './model.js';
import type { SiteTiming } from './site.js';

/**
 * How long the pieces of one job take and how far a job has got, from its checkpoint
 * plan. A job computes `count + 1` intervals of t_compint (3.6) with a checkpoint after
 * each but the last.
 */
export interface JobShape {
  timing: CheckpointTiming;
  /** Runs under the checkpointing environment (Standard, Enhanced, Full; background jobs so they can run in pieces). */
  checkpointed: boolean;
  /** Spare nodes booked beside the job for restarts (Enhanced, Full: one per covered outage). */
  spare: number;
  /**
   * Books the worst case (3.8 with restarts) rather than t_minslot: Enhanced and Full keep the time for their restarts.
   */
  booksWorstCase: boolean;
  /** Deadlines must leave room for the worst case: every fault-tolerant level. */
  deadlineCoversOutages: boolean;
  /** t_handover (SiteTiming.handoverSeconds): the holder's session starts this much before a promised start. */
  handoverSeconds: number;
  /** How its checkpoint count is chosen (checkpoint-plan.ts, CountRule). */
  countRule: CountRule;
}

const faultTolerant = new Set(['Standard', 'Enhanced', 'Full']);

/** `failuresPerNodeDay`: the rate of the nodes the job may run on (nodeFailuresPerDay unless learned per group). */
export function shapeOf(spec: JobSpec, site: SiteTiming, failuresPerNodeDay = site.nodeFailuresPerDay): JobShape {
  const tolerant = faultTolerant.has(spec.level);
  const checkpointed = tolerant || spec.kind === 'Background';
  const outages = tolerant
    ? spec.coveredOutages > 0
      ? spec.coveredOutages
      : site.defaultCoveredOutages
    : checkpointed
      ? 1
      : 0;
  const timing = checkpointTiming(checkpointed ? site : { ...site, slowdownFactor: 1 }, {
    runtimeSeconds: spec.runtimeSeconds,
    nodes: spec.nodes,
    memoryPerNodeGB: spec.requirements.memoryPerNodeGB ?? site.defaultMemoryPerNodeGB,
    storageGB: spec.storageGB,
    coveredOutages: tolerant ? outages : checkpointed ? 1 : 0,
    migrationSeconds: 0,
  });
  const guarded = spec.level === 'Enhanced' || spec.level === 'Full';
  const booksWorstCase = guarded && spec.kind !== 'Background';
  return {
    timing,
    checkpointed,
    spare: booksWorstCase ? timing.outages : 0,
    booksWorstCase,
    deadlineCoversOutages: tolerant,
    handoverSeconds: site.handoverSeconds,
    countRule: {
      // Background work runs in pieces between checkpoints; a worst-case booking is shortest at the optimum.
      shortestBooking: !site.checkpointsByNeed || booksWorstCase || spec.kind === 'Background',
      paying:
        checkpointed && site.checkpointsByNeed
          ? payingCheckpointCount(timing.tHat, timing.tCp, spec.nodes, failuresPerNodeDay)
          : 0,
    },
  };
}

/**
 * The shape with the thesis's count (3.16, or more where more pay): the shortest worst case,
 * so the latest start and the earliest completion a deadline allows.
 */
export function withOptimumCount(shape: JobShape): JobShape {
  return shape.countRule.shortestBooking
    ? shape
    : { ...shape, countRule: { ...shape.countRule, shortestBooking: true } };
}

/**
 * Milliseconds booked before a promised start (a reservation window, an interactive
 * session; Hovestadt 2006, section 3.4): the nodes initialised (t_initnew, or t_initrestart when
 * the piece resumes from a checkpoint; nothing on nodes kept prepared) and the holder's
 * session handed over (t_handover), in whole seconds. The promise starts when they end.
 */
export function preparationMs(shape: JobShape, restart: boolean, prepared = false): number {
  return Math.ceil(initSeconds(shape, restart, prepared) + shape.handoverSeconds) * 1000;
}

/** Seconds a piece spends initialising its nodes before it computes (hands over, for a promise with a start time). */
function initSeconds(shape: JobShape, restart: boolean, prepared = false): number {
  if (prepared) return 0;
  return restart ? shape.timing.tInitRestart : shape.timing.tInitNew;
}

/** Milliseconds booked after a promise ends: the nodes released (t_deinit), in whole seconds. */
export function releaseMs(shape: JobShape): number {
  return Math.ceil(shape.timing.tDeinit) * 1000;
}

/**
 * The checkpoint plan for a job that may run from `start`: the customer's frequency if it
 * lies within the bounds (3.9-3.11) for the time until the deadline, else the count its
 * shape's rule chooses (checkpoints by need: the fewest that keep the deadline, or the
 * optimum for a worst-case booking, and at least those that pay for themselves). Jobs outside
 * the checkpointing environment get none.
 */
export function checkpointPlanAt(spec: JobSpec, shape: JobShape, start: Instant): CheckpointPlan | { reason: string } {
  if (!shape.checkpointed) return planFor(shape.timing, 0);
  const rule = shape.countRule;
  if (spec.deadline === undefined && spec.checkpointsPerHour === undefined) {
    const t = shape.timing;
    const base = rule.shortestBooking ? optimalCheckpointCount(t.tHat, t.tCp, t.outages) : 0;
    return planFor(t, Math.max(base, rule.paying));
  }
  const available = spec.deadline !== undefined ? (spec.deadline - start) / 1000 : Number.POSITIVE_INFINITY;
  const choice = chooseCheckpointCount(shape.timing, available, available, spec.checkpointsPerHour, rule);
  return 'reason' in choice ? choice : planFor(shape.timing, choice.count);
}

/**
 * Milliseconds a piece needs: initialisation (new or from a checkpoint), `intervals`
 * compute intervals with a checkpoint between them (and after the last one when the
 * piece does not finish the job), deinitialisation, and room for `outages` restarts.
 */
export function pieceMs(
  shape: JobShape,
  plan: CheckpointPlan,
  intervals: number,
  restart: boolean,
  outages: number,
  finishes: boolean,
): number {
  const t = shape.timing;
  const checkpoints = finishes ? intervals - 1 : intervals;
  const seconds =
    (restart ? t.tInitRestart : t.tInitNew) +
    intervals * plan.intervalSeconds +
    checkpoints * plan.checkpointSeconds +
    t.tDeinit +
    outages * (t.tInitRestart + plan.intervalSeconds + plan.checkpointSeconds + t.tMigr);
  return Math.ceil(seconds) * 1000; // promises are stated in whole seconds
}

/** The whole intervals, each checkpointed, that a piece of `ms` computes: at most `most`. */
export function intervalsWithin(
  shape: JobShape,
  plan: CheckpointPlan,
  ms: number,
  restart: boolean,
  most: number,
): number {
  let intervals = 0;
  while (intervals < most && pieceMs(shape, plan, intervals + 1, restart, 0, false) <= ms) intervals++;
  return intervals;
}

/** Intervals the job must compute in all: one more than its checkpoints. */
export function totalIntervals(job: PlannedJob): number {
  return job.checkpoints.count + 1;
}

/**
 * Intervals secured by `at`: every segment that ended, plus the checkpoints a running
 * segment has written (a job past its expected end without outages has finished).
 */
export function securedIntervals(job: PlannedJob, shape: JobShape, at: Instant): number {
  let secured = 0;
  for (const segment of job.segments) {
    if (segment.start >= at) break;
    secured += securedInSegment(job, shape, segment, secured, at);
  }
  return Math.min(secured, totalIntervals(job));
}

function securedInSegment(job: PlannedJob, shape: JobShape, segment: Segment, before: number, at: Instant): number {
  if (at >= segment.end) return segment.intervals;
  const finishes = before + segment.intervals >= totalIntervals(job);
  const expectedEnd = segment.start + pieceMs(shape, job.checkpoints, segment.intervals, segment.restart, 0, finishes);
  if (at >= expectedEnd) return segment.intervals;
  const init = (segment.restart ? shape.timing.tInitRestart : shape.timing.tInitNew) * 1000;
  const step = (job.checkpoints.intervalSeconds + job.checkpoints.checkpointSeconds) * 1000;
  const written = step > 0 ? Math.floor((at - segment.start - init) / step) : 0;
  return Math.max(0, Math.min(written, finishes ? segment.intervals - 1 : segment.intervals));
}

/** Checkpoints written by `at` (for reports): one after each secured interval that did not finish the job. */
export function checkpointsWritten(job: PlannedJob, shape: JobShape, at: Instant): number {
  const secured = securedIntervals(job, shape, at);
  return Math.min(secured, job.checkpoints.count);
}

/** When the job completes if nothing fails: the expected end of its last segment. */
export function expectedCompletion(job: PlannedJob, shape: JobShape): Instant | undefined {
  let before = 0;
  for (const segment of job.segments) {
    const finishes = before + segment.intervals >= totalIntervals(job);
    if (finishes) return segment.start + pieceMs(shape, job.checkpoints, segment.intervals, segment.restart, 0, true);
    before += segment.intervals;
  }
  return undefined;
}

/**
 * Where a booked piece's own work begins and ends (the Gantt shows the rest as the nodes'
 * preparation and release): after initialisation (the hand-over, for a promise with a start
 * time), and before the release of the nodes (t_deinit).
 */
export function segmentPhases(
  job: PlannedJob,
  shape: JobShape,
  segment: Segment,
): { readyAt: Instant; releaseFrom: Instant } {
  const readyAt = segment.continues
    ? segment.start
    : segment.start + initSeconds(shape, segment.restart, job.spec.window !== undefined && job.spec.prepared) * 1000;
  const releaseFrom = segment.end - releaseMs(shape);
  return {
    readyAt: Math.min(readyAt, segment.end),
    releaseFrom: Math.max(releaseFrom, Math.min(readyAt, segment.end)),
  };
}
