import type { ClusterDescription, ClusterNode, JobSpec, PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
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

/** `spec` admitted at `now`, with the jobs its admission moved; throws the reason when it is refused. */
export function admitted(pm: PlanningManager, spec: JobSpec, now = T0): PlannedJob & { moved: string[] } {
  const decision = pm.admit(spec, now);
  if (!decision.accepted) throw new Error(decision.reason);
  return { ...decision.job, moved: decision.moved ?? [] };
}

/** Four nodes, all four reserved from two hours on for an hour. */
export function reservedAtTwoHours(timing: Partial<SiteTiming> = {}) {
  const pm = new PlanningManager(cluster(4, { timing: { ...paper, ...timing } }));
  const reservation = admitted(
    pm,
    job({
      id: 'r',
      kind: 'Reservation',
      level: 'Legacy',
      nodes: 4,
      window: { start: T0 + hours(2), end: T0 + hours(3) },
    }),
  );
  return { pm, reservation };
}
