import type { ServiceRequest } from '../domain/terms.js';
import type { JobKind, JobRequirements, JobSpec } from './model.js';
import { SharedValues } from './shared-values.js';

/**
 * The scheduler's view of a domain request (TERMS.md -> SCHEDULER.md). The engine calls
 * this at its edge: Dates become milliseconds, MiB become GB, and the kind of job follows
 * from the terms:
 *  - a reservation window: a fixed Reservation (S_res), whatever the guarantee level;
 *  - guarantee level Background: a Background job, run in gaps with no time promise;
 *  - a deadline: a Deadline job (S_nonres);
 *  - anything else: BestEffort (never rejected, first come first served; it may move later
 *    when SLA jobs arrive).
 */
export function jobKindOf(request: ServiceRequest): JobKind {
  if (request.window) return 'Reservation';
  if (request.guaranteeLevel === 'Background') return 'Background';
  if (request.deadline) return 'Deadline';
  return 'BestEffort';
}

export interface JobSpecOptions {
  /** The operator's value of the job (the regular price); 1 when unknown or not positive. */
  value?: number;
}

/**
 * The JobSpec for `request` under `id`, arriving at `now`. A reservation's runtime is the
 * length of its window, or the runtime estimate if one is given and shorter; a job without
 * a window takes its runtime estimate (0 when absent: the Planning Manager then refuses it
 * saying a runtime estimate is required).
 */
export function jobSpecFor(id: string, request: ServiceRequest, now: Date, options: JobSpecOptions = {}): JobSpec {
  const kind = jobKindOf(request);
  const windowSeconds = request.window
    ? (request.window.end.getTime() - request.window.start.getTime()) / 1000
    : undefined;
  const runtimeSeconds =
    windowSeconds !== undefined
      ? request.runtimeSeconds !== undefined && request.runtimeSeconds < windowSeconds
        ? request.runtimeSeconds
        : windowSeconds
      : (request.runtimeSeconds ?? 0);
  const spec: JobSpec = {
    id,
    kind,
    level: request.guaranteeLevel,
    nodes: request.nodeCount,
    runtimeSeconds,
    coveredOutages: request.maxCoveredOutages,
    storageGB: request.storageGB ?? 0,
    requirements: requirementsOf(request),
    value: options.value !== undefined && options.value > 0 ? options.value : 1,
    arrival: now.getTime(),
  };
  if (request.earliestStart) spec.earliestStart = request.earliestStart.getTime();
  if (request.deadline) spec.deadline = request.deadline.getTime();
  if (request.window) spec.window = { start: request.window.start.getTime(), end: request.window.end.getTime() };
  if (request.checkpointFrequency !== undefined) spec.checkpointsPerHour = request.checkpointFrequency;
  return spec;
}

/**
 * Most jobs demand the same of a node (often nothing): equal requirements are one frozen object (100,000 live jobs: 5
 * MiB).
 */
const sharedRequirements = new SharedValues<JobRequirements>();

/** Static demands on each node; only what the request names (an absent demand is no restriction). */
export function requirementsOf(request: ServiceRequest): JobRequirements {
  const r: JobRequirements = {};
  if (request.memoryPerNodeMiB !== undefined) r.memoryPerNodeGB = request.memoryPerNodeMiB / 1024;
  if (request.cpusPerNode !== undefined) r.cpusPerNode = request.cpusPerNode;
  if (request.interconnect !== undefined) r.interconnect = request.interconnect;
  if (request.operatingSystem !== undefined) r.operatingSystem = request.operatingSystem;
  if (request.architecture !== undefined) r.architecture = request.architecture;
  if (request.libraries.length > 0) r.libraries = request.libraries.map((l) => ({ ...l }));
  if (request.candidateHosts && request.candidateHosts.length > 0)
    r.candidateHosts = [...new Set(request.candidateHosts)].sort();
  if (request.securityPolicy.length > 0) r.securityPolicies = [...new Set(request.securityPolicy)].sort();
  return sharedRequirements.shared(r);
}
