import type { GuaranteeTerm } from '../../src/domain/terms.js';
import { SimulatedClock } from '../../src/runtime/clock.js';
import { PlanExecutor, type ExecutionEvent } from '../../src/runtime/plan-executor.js';
import { SimulatedResourceManager } from '../../src/runtime/simulated-resource-manager.js';
import type { PlannedJob } from '../../src/scheduler/model.js';
import type { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { T0 } from '../scheduler/support.js';

export { paper } from '../scheduler/support.js';

/** Seconds after T0 as a Date, and back. */
export const at = (seconds: number) => new Date(T0 + seconds * 1000);
export const secondsOf = (d: Date | undefined) => (d ? (d.getTime() - T0) / 1000 : undefined);

/** The shipped deadline template's guarantee (templates/deadline-job.xml): 50 EUR per started 30 minutes late, at most 500 EUR. */
export function completionTerm(deadline: Date): GuaranteeTerm {
  return {
    name: 'CompletionByDeadline',
    serviceScope: ['ComputeJob'],
    kpiName: 'CompletionTime',
    target: { kind: 'CompletedBy', at: deadline },
    importance: 10,
    penalties: [{ assessmentInterval: { timeInterval: 'PT30M' }, valueUnit: 'EUR', amount: 50, cap: 500 }],
    rewards: [],
  };
}

/** A simulated clock and resource manager with an executor that records every event and error. */
export function simulatedRuntime() {
  const clock = new SimulatedClock(new Date(T0));
  const rm = new SimulatedResourceManager(clock);
  const events: ExecutionEvent[] = [];
  const errors: unknown[] = [];
  const executor = new PlanExecutor({
    clock,
    resourceManager: rm,
    listener: (e) => events.push(e),
    onError: (e) => errors.push(e),
  });
  return { clock, rm, events, errors, executor };
}

/** How the lead wires a node failure: the executor records the outage, the scheduler re-plans, the executor gets the new plan. */
export async function failNode(
  runtime: ReturnType<typeof simulatedRuntime>,
  pm: PlanningManager,
  node: string,
  seconds: number,
  jobId: string,
): Promise<void> {
  await runtime.clock.advanceTo(at(seconds));
  await runtime.executor.nodeFailed(node);
  pm.nodeFailed(node, at(seconds).getTime());
  await runtime.executor.replan(copy(pm.job(jobId) as PlannedJob));
}

/** The scheduler changes its jobs in place; the executor gets a copy, as PlanningService.job() gives. */
export function copy(job: PlannedJob): PlannedJob {
  return { ...job, segments: job.segments.map((s) => ({ ...s, nodes: [...s.nodes], spare: [...s.spare] })) };
}
