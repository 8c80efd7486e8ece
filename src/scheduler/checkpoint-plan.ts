import type { CheckpointSchedule } from '../domain/allocation.js';
import { SharedValues } from './shared-values.js';
import type { SiteTiming } from './site.js';

/**
 * Checkpoint planning: the timing model of Hovestadt 2006, section 3.4, formulas 3.1 to 3.17.
 * All durations are in seconds. Each function is one formula so the docs and tests can
 * name them.
 */

/** What the timing of one job depends on. */
export interface JobTimingInputs {
  /** t_i: runtime estimate as the user gave it, seconds. */
  runtimeSeconds: number;
  /** |P_i|: nodes the job runs on. */
  nodes: number;
  memoryPerNodeGB: number;
  storageGB: number;
  /** n_romax: resource outages the deadline promise covers. */
  coveredOutages: number;
  /** t_migr: moving the checkpoint to another site (3.5); 0 for a restart inside the cluster. */
  migrationSeconds: number;
}

/** (3.1) t_initnew = t_nodeinit + t_stinit(s) + t_stmount */
export function initNewSeconds(site: SiteTiming, storageGB: number): number {
  return site.nodeInitSeconds + site.storageInitSecondsPerGB * storageGB + site.storageMountSeconds;
}

/** (3.2) t_initrestart = t_nodeinit + t_strollback(s) + t_stmount */
export function initRestartSeconds(site: SiteTiming, storageGB: number): number {
  return site.nodeInitSeconds + site.storageRollbackSecondsPerGB * storageGB + site.storageMountSeconds;
}

/** (3.3) t_hat = f_slow * t */
export function estimatedRuntimeSeconds(site: SiteTiming, runtimeSeconds: number): number {
  return site.slowdownFactor * runtimeSeconds;
}

/** (3.4) t_cp = |P| * t_cpnode(m) + t_snapshot(s); a parallel checkpointer costs one node's time. */
export function checkpointSeconds(site: SiteTiming, nodes: number, memoryPerNodeGB: number, storageGB: number): number {
  const perNode = site.checkpointSecondsPerNodeGB * memoryPerNodeGB;
  return (site.parallelCheckpoint ? 1 : nodes) * perNode + site.snapshotSecondsPerGB * storageGB;
}

/**
 * (3.5) t_migr = s_cp / bw(A,B); the checkpoint holds every node's memory and the storage. Infinite without bandwidth.
 */
export function migrationSeconds(checkpointSizeMB: number, bandwidthMBps: number): number {
  return bandwidthMBps > 0 ? checkpointSizeMB / bandwidthMBps : Number.POSITIVE_INFINITY;
}

export function checkpointSizeMB(nodes: number, memoryPerNodeGB: number, storageGB: number): number {
  return (nodes * memoryPerNodeGB + storageGB) * 1024;
}

/** (3.6) t_compint = t_hat / (n_cp + 1) */
export function computeIntervalSeconds(tHat: number, checkpoints: number): number {
  return tHat / (checkpoints + 1);
}

/** (3.7) t_minslot = t_initnew + t_hat + n_cp * t_cp + t_deinit */
export function minSlotSeconds(
  tInitNew: number,
  tHat: number,
  checkpoints: number,
  tCp: number,
  tDeinit: number,
): number {
  return tInitNew + tHat + checkpoints * tCp + tDeinit;
}

/** (3.8) t_jobmax = t_hat + n_cp * t_cp + n_romax * (t_migr + t_compint) */
export function jobMaxSeconds(tHat: number, checkpoints: number, tCp: number, outages: number, tMigr: number): number {
  // Without covered outages nothing is migrated: 0 * Infinity (no bandwidth) would be NaN.
  if (outages <= 0) return tHat + checkpoints * tCp;
  return tHat + checkpoints * tCp + outages * (tMigr + computeIntervalSeconds(tHat, checkpoints));
}

/**
 * (3.12-3.17) The checkpoint count that minimises the worst-case runtime of a local
 * restart, f(x) = t_hat + x t_cp + n_romax t_hat / (x + 1). Its minimum is at
 * x = -1 + sqrt(n_romax t_hat / t_cp) (3.16); the seed rounds it up. We take the better of
 * the two neighbouring whole counts, which is the rounded-up one in the seed's example
 * (t_hat 3600, t_cp 120, n_romax 2: x = 6.746, 7 checkpoints, 5340 s) and never worse.
 * On a tie we take the fewer: with one outage 4 and 5 checkpoints both give 4800 s, and 4
 * (figure 3.2's "about four") needs the shorter slot.
 */
export function optimalCheckpointCount(tHat: number, tCp: number, outages: number): number {
  if (outages <= 0 || tHat <= 0) return 0;
  if (tCp <= 0) return Math.max(0, Math.ceil(tHat)); // free checkpoints: as many as useful, bounded by whole seconds
  const x = -1 + Math.sqrt((outages * tHat) / tCp);
  if (x <= 0) return 0;
  const down = Math.floor(x);
  const up = Math.ceil(x);
  const worst = (n: number) => jobMaxSeconds(tHat, n, tCp, outages, 0);
  // On a tie the fewer checkpoints: the same worst case, a shorter t_minslot (3.7).
  return worst(down) <= worst(up) ? down : up;
}

/**
 * Young (1974) and Daly (2006): the checkpoint interval that minimises the expected time lost
 * to failures plus the time spent checkpointing, for a job whose `nodes` each fail
 * `failuresPerNodeDay` times a day: tau = sqrt(2 t_cp M) - t_cp with the job's mean time
 * between failures M = 86400 / (rate * nodes) (Daly's first-order form, for t_cp < 2 M; the
 * interval is M beyond it). Infinite when nothing fails or checkpoints are free of failures.
 */
export function youngDalyIntervalSeconds(tCp: number, nodes: number, failuresPerNodeDay: number): number {
  if (failuresPerNodeDay <= 0 || nodes <= 0) return Number.POSITIVE_INFINITY;
  const mtbf = 86_400 / (failuresPerNodeDay * nodes);
  if (tCp >= 2 * mtbf) return mtbf;
  return Math.sqrt(2 * tCp * mtbf) - tCp;
}

/**
 * The checkpoints that pay for themselves at the expected failure rate: Young/Daly's interval
 * over t_hat, one checkpoint between each two intervals; none when the interval is as long as
 * the job.
 */
export function payingCheckpointCount(tHat: number, tCp: number, nodes: number, failuresPerNodeDay: number): number {
  const interval = youngDalyIntervalSeconds(tCp, nodes, failuresPerNodeDay);
  if (!(interval > 0) || interval >= tHat) return 0;
  return Math.ceil(tHat / interval) - 1;
}

/**
 * The slot a fault-tolerant job needs in the worst case: (3.7)'s initialisation and
 * deinitialisation around (3.8), plus what (3.8) leaves out for each covered outage:
 * re-initialising the nodes (3.2) and the checkpoint that was being written when the
 * node failed. This is what Enhanced and Full book and what any deadline must leave room for.
 */
export function worstCaseSlotSeconds(timing: CheckpointTiming, checkpoints: number): number {
  const { tInitNew, tInitRestart, tHat, tCp, tDeinit, tMigr, outages } = timing;
  return tInitNew + jobMaxSeconds(tHat, checkpoints, tCp, outages, tMigr) + outages * (tInitRestart + tCp) + tDeinit;
}

/** The inputs of every formula for one job, computed once. */
export interface CheckpointTiming {
  tInitNew: number;
  tInitRestart: number;
  tHat: number;
  tCp: number;
  tDeinit: number;
  tMigr: number;
  outages: number;
}

export function checkpointTiming(site: SiteTiming, job: JobTimingInputs): CheckpointTiming {
  return {
    tInitNew: initNewSeconds(site, job.storageGB),
    tInitRestart: initRestartSeconds(site, job.storageGB),
    tHat: estimatedRuntimeSeconds(site, job.runtimeSeconds),
    tCp: checkpointSeconds(site, job.nodes, job.memoryPerNodeGB, job.storageGB),
    tDeinit: site.deinitSeconds,
    tMigr: job.migrationSeconds,
    outages: job.coveredOutages,
  };
}

/** Checkpoints per hour of computation for a count, and back. */
export function perHour(checkpoints: number, tHat: number): number {
  return tHat > 0 ? (checkpoints * 3600) / tHat : 0;
}
export function countForFrequency(perHourRequested: number, tHat: number): number {
  return Math.max(0, Math.round((perHourRequested * tHat) / 3600));
}

/**
 * (3.9-3.11) f_cpmin <= f_cpact <= min(f_cpmax, f_cpslotmax), as checkpoint counts:
 * `min` and `max` bound the counts whose worst case (worstCaseSlotSeconds) fits in the
 * time until the deadline; `slotMax` is the most checkpoints for which the job without
 * outages (t_minslot, 3.7) still fits in the free slot. The worst case is convex in the
 * count, so the counts that fit form one interval. Undefined when no count fits.
 */
export interface CheckpointBounds {
  min: number;
  max: number;
  slotMax: number;
}

/** Largest count worth searching: one checkpoint per second of computation. */
function countLimit(timing: CheckpointTiming): number {
  return Math.max(0, Math.floor(timing.tHat));
}

export function checkpointBounds(
  timing: CheckpointTiming,
  untilDeadlineSeconds: number,
  slotSeconds: number,
): CheckpointBounds | undefined {
  const fits = (n: number) => worstCaseSlotSeconds(timing, n) <= untilDeadlineSeconds;
  const optimum = optimalCheckpointCount(timing.tHat, timing.tCp, timing.outages);
  if (!fits(optimum)) return undefined; // the minimum of a convex function does not fit: nothing does
  const limit = countLimit(timing);
  // Binary searches on both sides of the optimum of the convex worst case.
  let lo = 0;
  let hi = optimum;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) hi = mid;
    else lo = mid + 1;
  }
  const min = lo;
  lo = optimum;
  hi = limit;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  const max = Math.max(lo, optimum);
  const noOutageSlot = (n: number) => minSlotSeconds(timing.tInitNew, timing.tHat, n, timing.tCp, timing.tDeinit);
  // Free checkpoints (t_cp 0) fit any count, but only if the job itself fits in the slot.
  const slotMax =
    timing.tCp > 0
      ? Math.floor((slotSeconds - noOutageSlot(0)) / timing.tCp)
      : noOutageSlot(0) <= slotSeconds
        ? limit
        : -1;
  return { min, max, slotMax };
}

/**
 * The checkpoint plan of one job: how many, how far apart, and what the job then needs (stored with its allocation).
 */
export type CheckpointPlan = CheckpointSchedule;

/** Jobs of the same shape get the same plan: the plan keeps one frozen copy of each (100,000 live jobs: 5 MiB). */
const sharedPlans = new SharedValues<CheckpointPlan>();

/** The one shared copy of `plan`, for a job the plan keeps (searches make plans they then drop, and skip this). */
export function sharedPlan(plan: CheckpointPlan): CheckpointPlan {
  return sharedPlans.shared(plan);
}

export function planFor(timing: CheckpointTiming, count: number): CheckpointPlan {
  return {
    count,
    intervalSeconds: computeIntervalSeconds(timing.tHat, count),
    checkpointSeconds: timing.tCp,
    minSlotSeconds: minSlotSeconds(timing.tInitNew, timing.tHat, count, timing.tCp, timing.tDeinit),
    jobMaxSeconds: jobMaxSeconds(timing.tHat, count, timing.tCp, timing.outages, timing.tMigr),
    worstCaseSeconds: worstCaseSlotSeconds(timing, count),
    outages: timing.outages,
  };
}

/**
 * What the count is chosen for (docs/scheduler.md, "Checkpoints by need"): `shortestBooking`
 * when the job books its worst case (Enhanced, Full), whose booking is shortest at the
 * optimum (3.16); else the fewest checkpoints that keep the deadline, as its booking (t_minslot,
 * 3.7) grows with each. Either way at least `paying`: those that pay for themselves at the
 * site's failure rate.
 */
export interface CountRule {
  shortestBooking: boolean;
  paying: number;
}

/** The thesis's choice: the optimum (3.16) clamped into the bounds. */
export const optimumRule: CountRule = { shortestBooking: true, paying: 0 };

/**
 * Chooses the count: the customer's requested frequency if it lies within the bounds, else
 * by `rule` within them (the optimum, 3.16, unless a rule is given). Returns a reason when no
 * count works.
 */
export function chooseCheckpointCount(
  timing: CheckpointTiming,
  untilDeadlineSeconds: number,
  slotSeconds: number,
  requestedPerHour?: number,
  rule: CountRule = optimumRule,
): { count: number } | { reason: string } {
  const bounds = checkpointBounds(timing, untilDeadlineSeconds, slotSeconds);
  if (!bounds) {
    const optimum = optimalCheckpointCount(timing.tHat, timing.tCp, timing.outages);
    return {
      reason:
        `even the best checkpoint plan (${optimum} checkpoints) needs ` +
        `${Math.ceil(worstCaseSlotSeconds(timing, optimum))} s ` +
        `with ${timing.outages} covered outage(s), but only ${Math.floor(untilDeadlineSeconds)} s remain ` +
        `until the deadline`,
    };
  }
  const upper = Math.min(bounds.max, bounds.slotMax);
  if (upper < bounds.min) {
    return { reason: `the free slot is too short for the ${bounds.min} checkpoints the deadline needs` };
  }
  if (requestedPerHour !== undefined) {
    const count = countForFrequency(requestedPerHour, timing.tHat);
    if (count < bounds.min || count > upper) {
      const range =
        `${perHour(bounds.min, timing.tHat).toFixed(2)} to ` + `${perHour(upper, timing.tHat).toFixed(2)} per hour`;
      return {
        reason:
          `checkpoint frequency ${requestedPerHour} per hour (${count} checkpoints) is outside the ` +
          `bounds ${range} (${bounds.min} to ${upper} checkpoints)`,
      };
    }
    return { count };
  }
  const base = rule.shortestBooking ? optimalCheckpointCount(timing.tHat, timing.tCp, timing.outages) : bounds.min;
  return { count: Math.min(Math.max(base, rule.paying, bounds.min), upper) };
}
