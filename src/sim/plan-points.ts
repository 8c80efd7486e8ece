import { type JobShape, totalIntervals } from '../scheduler/job-timing.js';
import { type Instant, type PlannedJob, runsUntilItsEnd, type Segment } from '../scheduler/model.js';

/**
 * Where in a job's plan things happen, for the simulator: when its work is done, and the first time a window is not
 * covered.
 */

/**
 * The point in a plan where the job's work is done: the first segment whose intervals
 * reach it, with the part of the segment computed and the checkpoints written by then
 * (one after each whole interval that does not end the work, in every segment). `work` is
 * the intervals the job must compute.
 */
export function finishPoint(
  shape: JobShape,
  work: number,
  job: PlannedJob,
): { at: Instant; segment: Segment; checkpoints: number } | undefined {
  const t = shape.timing;
  const plan = job.checkpoints;
  let before = 0;
  for (const segment of job.segments) {
    const part = Math.max(work - before, 0);
    const whole = Math.abs(part - Math.round(part)) < 1e-9 ? Math.round(part) : part;
    const checkpointsHere = Math.max(0, Math.ceil(whole) - 1);
    const seconds =
      (segment.restart ? t.tInitRestart : t.tInitNew) +
      whole * plan.intervalSeconds +
      checkpointsHere * plan.checkpointSeconds +
      t.tDeinit;
    const at = segment.start + Math.ceil(seconds) * 1000;
    // A piece that gave way early, or that ran on the chance the job needs less than its estimate, still completes the
    // job when the job's work ends before it stopped.
    if (work <= before + segment.intervals + 1e-9 || (runsUntilItsEnd(segment) && at <= segment.end))
      return { at, segment, checkpoints: before + checkpointsHere };
    before += segment.intervals;
  }
  return undefined;
}

export /** The first stretch of [from, to) that no segment covers. */
function firstGap(
  segments: readonly Segment[],
  from: Instant,
  to: Instant,
): { from: Instant; to: Instant } | undefined {
  let covered = from;
  for (const s of [...segments].sort((a, b) => a.start - b.start)) {
    if (s.start > covered) return { from: covered, to: Math.min(s.start, to) };
    covered = Math.max(covered, s.end);
    if (covered >= to) return undefined;
  }
  return covered < to ? { from: covered, to } : undefined;
}

/**
 * When the planned job completes: its work run through its segments at its checkpoint plan's pace (never before `now`).
 */
export function completionOf(
  track: { input: { runtime: number }; shape: JobShape; workShare: number },
  job: PlannedJob,
  now: Instant,
  counters: { completionClamped: number },
): Instant | undefined {
  const segments = job.segments;
  if (segments.length === 0) return undefined;
  const live = segments.some((s) => s.end > now);
  let at: Instant | undefined;
  if (job.spec.window) {
    if (!live) return undefined;
    const last = segments[segments.length - 1] as Segment;
    const release = job.spec.window.start + track.input.runtime * 1000;
    at = Math.max(last.start, Math.min(release, last.end));
  } else {
    const found = finishPoint(track.shape, workIntervals(track, job), job);
    if (!found) return undefined;
    at = found.at;
    if (at > found.segment.end) at = found.segment.end; // its work was secured by the checkpoint that ended the segment
  }
  if (at < now) {
    counters.completionClamped++;
    at = now;
  }
  return at;
}

/** The job's work in compute intervals of its current checkpoint plan. */
export function workIntervals(track: { workShare: number }, job: PlannedJob): number {
  return track.workShare * totalIntervals(job);
}
