import type { Agreement } from '../../domain/agreement.js';
import type { GuaranteeTerm, ServiceRequest } from '../../domain/terms.js';
import { checkpointSizeMB, migrationSeconds } from '../../scheduler/checkpoint-plan.js';
import { pieceMs, securedIntervals, shapeOf, totalIntervals } from '../../scheduler/job-timing.js';
import type { JobKind, PlannedJob } from '../../scheduler/model.js';
import type { SiteTiming } from '../../scheduler/site.js';
import type { PlanningService } from '../planning/planning-service.js';
import type { PeerRequest } from './ports.js';

/**
 * A job as the Migration Controller weighs it: its terms, where it stands in the plan, and
 * the figures of the timing model (Hovestadt 2006, section 3.4) that decide whether a move can
 * still keep its promise.
 */
export interface MigrationJob {
  agreementId: string;
  templateName: string;
  name?: string;
  request: ServiceRequest;
  /** The agreement's guarantee terms: what its violation costs. */
  guaranteeTerms: GuaranteeTerm[];
  kind: JobKind;
  /** A piece of it runs now. */
  running: boolean;
  /** In P: why the scheduler cannot keep its promise. */
  problem?: string;
  /** The operator's value of the job (orders candidates). */
  value: number;
  /** The checkpoint to move, MB; 0 when the job has not run yet (it starts afresh elsewhere). */
  checkpointMB: number;
  /** Runtime left as the customer counts it (the share of t_i after the last checkpoint), seconds. */
  remainingRuntimeSeconds: number;
  /**
   * What resuming takes at a target: restart initialisation, the intervals left with their checkpoints,
   * deinitialisation; seconds.
   */
  resumeSeconds: number;
  /**
   * The latest time the job can resume elsewhere and keep its promise: the window's start, or the deadline less
   * resumeSeconds.
   */
  latestStart: Date;
}

/**
 * The jobs of Observed agreements that are planned and have not left already, as the
 * controller sees them at `now`. `termsOf` reads an agreement's guarantee terms (from its
 * document, in an XML adapter). Times and sizes come from the plan: what the checkpoints
 * have secured by now (securedIntervals), what a restart piece of the rest needs (pieceMs),
 * and the checkpoint size (every node's memory and the storage).
 */
export function collectMigrationJobs(
  agreements: readonly Agreement[],
  plan: PlanningService,
  now: Date,
  termsOf: (agreement: Agreement) => GuaranteeTerm[],
): MigrationJob[] {
  const jobs: MigrationJob[] = [];
  for (const agreement of agreements) {
    if (agreement.state !== 'Observed' || agreement.migratedTo) continue;
    const planned = plan.manager.job(agreement.id);
    if (!planned) continue;
    jobs.push(migrationJobOf(agreement, planned, plan.cluster.timing, now, termsOf(agreement)));
  }
  return jobs;
}

export function migrationJobOf(
  agreement: Agreement,
  planned: PlannedJob,
  timing: SiteTiming,
  now: Date,
  guaranteeTerms: GuaranteeTerm[],
): MigrationJob {
  const spec = planned.spec;
  const at = now.getTime();
  const shape = shapeOf(spec, timing);
  const total = totalIntervals(planned);
  const secured = securedIntervals(planned, shape, at);
  const left = Math.max(1, total - secured);
  const resumeSeconds = pieceMs(shape, planned.checkpoints, left, secured > 0, 0, true) / 1000;
  const memory = spec.requirements.memoryPerNodeGB ?? timing.defaultMemoryPerNodeGB;
  let latest: number;
  if (spec.window) latest = spec.window.start;
  else if (spec.deadline !== undefined) latest = spec.deadline - resumeSeconds * 1000;
  else latest = Number.POSITIVE_INFINITY;
  const job: MigrationJob = {
    agreementId: agreement.id,
    templateName: agreement.templateName,
    request: agreement.request,
    guaranteeTerms,
    kind: spec.kind,
    running: planned.segments.some((s) => s.start <= at && at < s.end),
    value: spec.value,
    checkpointMB: secured > 0 ? checkpointSizeMB(spec.nodes, memory, spec.storageGB) : 0,
    remainingRuntimeSeconds: (spec.runtimeSeconds * left) / total,
    resumeSeconds,
    latestStart: new Date(latest),
  };
  if (agreement.name !== undefined) job.name = agreement.name;
  if (planned.problem !== undefined) job.problem = planned.problem;
  return job;
}

/** t_migr (002 formula 3.5): seconds to move the job's checkpoint over `bandwidthMBps`; 0 when there is none. */
export function transferSeconds(job: Pick<MigrationJob, 'checkpointMB'>, bandwidthMBps: number): number {
  return job.checkpointMB > 0 ? migrationSeconds(job.checkpointMB, bandwidthMBps) : 0;
}

/**
 * When the checkpoint can be at a peer with that bandwidth, if the transfer starts at `now` (whole seconds, rounded
 * up).
 */
export function arrivalAt(job: Pick<MigrationJob, 'checkpointMB'>, bandwidthMBps: number, now: Date): Date {
  return new Date(Math.ceil((now.getTime() + transferSeconds(job, bandwidthMBps) * 1000) / 1000) * 1000);
}

/**
 * The terms asked of a peer: a binding request for the work left, starting no earlier than
 * the checkpoint can arrive, by the original deadline; a reservation keeps its window.
 */
export function peerRequestFor(
  job: MigrationJob,
  bandwidthMBps: number,
  now: Date,
  providerName?: string,
): PeerRequest {
  const { useReservation: _used, ...terms } = job.request;
  const request: ServiceRequest = { ...terms, requestKind: 'Binding' };
  if (!request.window) {
    const arrival = arrivalAt(job, bandwidthMBps, now);
    const earliest = request.earliestStart && request.earliestStart > arrival ? request.earliestStart : arrival;
    request.earliestStart = earliest;
    request.runtimeSeconds = Math.ceil(job.remainingRuntimeSeconds);
  }
  // The peer takes the checkpoint only if the offer says it comes, and up to the size said.
  if (job.checkpointMB > 0) request.resumesFromCheckpointBytes = Math.ceil(job.checkpointMB * 1024 * 1024);
  const from = providerName ? ` from ${providerName}` : '';
  return { request, name: `migrated: agreement ${job.agreementId}${from}` };
}
