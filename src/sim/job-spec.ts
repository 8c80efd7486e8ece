import type { Instant, JobKind, JobSpec } from '../scheduler/model.js';
import type { WorkloadJob, WorkloadKind } from './workload.js';

const schedulerKind: Record<WorkloadKind, JobKind> = {
  reservation: 'Reservation',
  deadline: 'Deadline',
  'best-effort': 'BestEffort',
  background: 'Background',
};

/** The scheduler's view of a workload job; `ms` turns the workload's seconds into instants. */
export function jobSpecOf(input: WorkloadJob, ms: (seconds: number) => Instant): JobSpec {
  const requirements = {
    ...(input.memoryGB !== undefined ? { memoryPerNodeGB: input.memoryGB } : {}),
    ...(input.interconnect !== undefined ? { interconnect: input.interconnect } : {}),
  };
  return {
    id: input.id,
    kind: schedulerKind[input.kind],
    level: input.level,
    nodes: input.nodes,
    runtimeSeconds: input.estimate,
    ...(input.earliestStart !== undefined ? { earliestStart: ms(input.earliestStart) } : {}),
    ...(input.deadline !== undefined ? { deadline: ms(input.deadline) } : {}),
    ...(input.window ? { window: { start: ms(input.window.start), end: ms(input.window.end) } } : {}),
    coveredOutages: input.outages,
    ...(input.checkpointsPerHour !== undefined ? { checkpointsPerHour: input.checkpointsPerHour } : {}),
    storageGB: input.storageGB,
    requirements,
    value: input.value,
    arrival: ms(input.arrival),
  };
}
