import type { ClusterDescription, ClusterNode, JobSpec } from '../../src/scheduler/model.js';
import { defaultSiteTiming, type SiteTiming } from '../../src/scheduler/site.js';

export const T0 = Date.UTC(2026, 10, 23, 0, 0, 0);
export const hours = (h: number) => h * 3600_000;
export const minutes = (m: number) => m * 60_000;

export function cluster(
  nodes: number,
  options: { timing?: Partial<SiteTiming>; peerStandbyNodes?: number; node?: (i: number) => Partial<ClusterNode> } = {},
): ClusterDescription {
  return {
    nodes: Array.from({ length: nodes }, (_, i) => ({
      id: `n${String(i + 1).padStart(2, '0')}`,
      memoryGB: 16,
      cpus: 8,
      ...options.node?.(i),
    })),
    timing: { ...defaultSiteTiming, ...options.timing },
    peerStandbyNodes: options.peerStandbyNodes ?? 0,
  };
}

let counter = 0;
export function job(partial: Partial<JobSpec> & Pick<JobSpec, 'kind'>): JobSpec {
  counter += 1;
  return {
    id: partial.id ?? `job-${counter}`,
    level: 'Standard',
    nodes: 4,
    runtimeSeconds: 3600,
    coveredOutages: 1,
    storageGB: 0,
    requirements: {},
    value: 1,
    arrival: T0,
    ...partial,
  };
}

/**
 * The site of the scheduler's hand-worked scenarios (planning-manager.test.ts; the run-time tests use it too):
 * 30 s to initialise or restart, nothing to deinitialise, no slowdown, a checkpoint of a
 * 16 GB node takes 120 s.
 */
export const paper = {
  nodeInitSeconds: 30,
  storageMountSeconds: 0,
  storageInitSecondsPerGB: 0,
  storageRollbackSecondsPerGB: 0,
  deinitSeconds: 0,
  slowdownFactor: 1,
  checkpointSecondsPerNodeGB: 7.5,
  snapshotSecondsPerGB: 0,
  parallelCheckpoint: true,
  problemHorizonSeconds: 4 * 3600,
  // The thesis's worked examples: the optimum (3.16) for every job.
  checkpointsByNeed: false,
};
