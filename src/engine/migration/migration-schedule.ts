import { failureOwner, PlanningManager } from '../../scheduler/planning-manager.js';
import type { PlannedJob } from '../../scheduler/model.js';

/** P as the scheduler has it: job ids and why each is problematic. */
export type ProblemList = Array<{ id: string; reason: string }>;

/**
 * What the Migration Controller asks of the schedule for general jobs (Hovestadt 2006, section
 * 3.6.8: "working on a copy of the current schedule ... the migrated job is removed from
 * the system and the scheduler generates a new schedule").
 */
export interface ScheduleWhatIf {
  /** P now. */
  problematic(): ProblemList;
  /**
   * P on a copy of the schedule after `removed` left it (capacity freed, P re-planned); the schedule itself is not
   * touched.
   */
  problematicWithout(removed: readonly string[]): ProblemList;
}

/**
 * ScheduleWhatIf over the Planning Manager: the copy is a new manager over the same
 * cluster with every planned job put back exactly and every failed node's block booked
 * again; the removed jobs then finish at `now` (the scheduler frees their capacity and
 * retries P, as when a job ends early).
 */
export function planWhatIf(manager: PlanningManager, now: () => Date): ScheduleWhatIf {
  return {
    problematic: () => manager.problematic(),
    problematicWithout(removed) {
      const copy = copyOf(manager);
      const at = now().getTime();
      let problems: ProblemList = copy.problematic();
      for (const id of removed) problems = copy.jobFinished(id, at).problematic;
      return problems;
    },
  };
}

/** A Planning Manager with the same plan: same jobs on the same nodes, same failed-node blocks. */
export function copyOf(manager: PlanningManager): PlanningManager {
  const copy = new PlanningManager(manager.cluster);
  for (const node of manager.cluster.nodes) {
    if (!manager.isFailed(node.id)) continue;
    const owner = failureOwner(node.id);
    for (const block of manager.mm.bookingsOf(owner)) copy.mm.book(owner, [block.node], block.start, block.end);
  }
  for (const job of manager.allJobs()) {
    if (!copy.restore(cloned(job)))
      throw new Error(`the copy of the schedule could not take job ${job.spec.id} back at its place`);
  }
  return copy;
}

function cloned(job: PlannedJob): PlannedJob {
  return {
    ...job,
    spec: { ...job.spec },
    segments: job.segments.map((s) => ({ ...s, nodes: [...s.nodes], spare: [...s.spare] })),
    checkpoints: { ...job.checkpoints },
  };
}
