import { segmentPhases, totalIntervals, type JobShape } from '../scheduler/job-timing.js';
import { type Instant, type PlannedJob, runsUntilItsEnd, type Segment } from '../scheduler/model.js';

/**
 * When each phase of a planned piece happens, from the scheduler's timing model (Hovestadt 2006
 * section 3.4; src/scheduler/job-timing.ts `pieceMs` is the same sum): initialisation
 * (t_initnew, or t_initrestart for a piece that resumes from a checkpoint), compute intervals
 * of t_compint with a checkpoint of t_cp after each but the job's last, deinitialisation
 * (t_deinit). A checkpoint counts once it is written: the scheduler's `securedIntervals`
 * counts the same way, so an outage during a write loses that checkpoint in both.
 */
export interface PlannedCheckpoint {
  /** Intervals secured once it is written, counted over the whole job. */
  interval: number;
  /** Writing starts. */
  begin: Instant;
  /** Written. */
  end: Instant;
}

export interface PlannedPiece {
  /** Index of the scheduler's segment. */
  segment: number;
  start: Instant;
  /** The booked end of the segment. */
  end: Instant;
  nodes: string[];
  spare: string[];
  restart: boolean;
  /** Intervals secured before the piece starts. */
  firstInterval: number;
  intervals: number;
  /** The piece completes the job (no checkpoint after its last interval). */
  finishes: boolean;
  computeStart: Instant;
  checkpoints: PlannedCheckpoint[];
  /** Computation (and a non-finishing piece's last checkpoint) done. */
  computeEnd: Instant;
  /** Deinitialised. */
  deinitEnd: Instant;
}

export function plannedPieces(job: PlannedJob, shape: JobShape): PlannedPiece[] {
  const total = totalIntervals(job);
  const pieces: PlannedPiece[] = [];
  let before = 0;
  job.segments.forEach((segment, index) => {
    pieces.push(pieceOf(job, shape, segment, index, before, total));
    before += segment.intervals;
  });
  return pieces;
}

function pieceOf(
  job: PlannedJob,
  shape: JobShape,
  segment: Segment,
  index: number,
  before: number,
  total: number,
): PlannedPiece {
  const t = shape.timing;
  const interval = job.checkpoints.intervalSeconds * 1000;
  const cp = job.checkpoints.checkpointSeconds * 1000;
  const finishes = before + segment.intervals >= total;
  // Computation starts when the nodes are ready (a session: handed over); a reservation's holder keeps them until their
  // release.
  const { readyAt: computeStart, releaseFrom } = segmentPhases(job, shape, segment);
  const written = finishes ? segment.intervals - 1 : segment.intervals;
  const planned = computeStart + segment.intervals * interval + Math.max(0, written) * cp;
  // A session's holder keeps its nodes until their release; so does a best-effort job that yields, which stops only
  // where SLA work needs them, and a run on the chance the job needs less than its estimate (unless it finishes first).
  const computeEnd = job.spec.window || runsUntilItsEnd(segment) ? releaseFrom : planned;
  const checkpoints: PlannedCheckpoint[] = [];
  for (let i = 1; i <= written; i++) {
    const begin = computeStart + i * interval + (i - 1) * cp;
    if (begin + cp > computeEnd) break;
    checkpoints.push({ interval: before + i, begin: Math.round(begin), end: Math.round(begin + cp) });
  }
  return {
    segment: index,
    start: segment.start,
    end: segment.end,
    nodes: [...segment.nodes],
    spare: [...segment.spare],
    restart: segment.restart,
    firstInterval: before,
    intervals: segment.intervals,
    finishes,
    computeStart: Math.round(computeStart),
    checkpoints,
    computeEnd: Math.round(computeEnd),
    deinitEnd: Math.round(computeEnd + t.tDeinit * 1000),
  };
}

/**
 * How long a start of `piece` at `now` computes when nothing fails: a reservation to its window's end, however late it
 * (re)started; a job what is left of it.
 */
export function expectedRunMs(job: PlannedJob, piece: PlannedPiece, fromInterval: number, now: Instant): number {
  return job.spec.window ? Math.max(0, piece.computeEnd - now) : remainingRunMs(job, fromInterval);
}

/**
 * How long the computation left after `fromInterval` secured intervals takes when nothing
 * fails: the intervals left, with a checkpoint between each two.
 */
export function remainingRunMs(job: PlannedJob, fromInterval: number): number {
  const left = Math.max(0, totalIntervals(job) - fromInterval);
  return Math.round(
    left * job.checkpoints.intervalSeconds * 1000 + Math.max(0, left - 1) * job.checkpoints.checkpointSeconds * 1000,
  );
}

/** A piece's identity across re-plans: where and when it begins. */
export function pieceKey(piece: PlannedPiece): string {
  return `${piece.start} ${piece.nodes.join(',')}`;
}

export function sameNodes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n) => b.includes(n));
}
