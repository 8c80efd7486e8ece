import type { ClusterDescription } from '../scheduler/model.js';
import { compareBaselines, type BaselineComparison, type BaselineOptions } from './baselines.js';
import type { BaselineOutcome } from './fcfs-backfill.js';
import { align } from './format.js';
import type { Workload } from './workload.js';

/**
 * The baselines over several failure draws (`wsag sim --baselines --draws N`): the same jobs
 * under independent draws of the failure trace. On one draw, penalties are decided by the
 * few large jobs a failure happens to hit, and a plan that changes slightly (one request
 * refused) meets other failures; the mean over draws, and how often ours paid no more than
 * the best baseline, say what one draw cannot.
 */
export interface DrawOutcome {
  name: string;
  /** Means per draw. */
  slaAccepted: number;
  deadlinesMet: number;
  deadlinesAccepted: number;
  reservationsBroken: number;
  penalties: { mean: number; min: number; max: number; none: number };
  checkpoints: number;
  usefulToLastArrival: number;
  idle: number;
}

export interface DrawsComparison {
  draws: number;
  jobs: number;
  nodes: number;
  runs: DrawOutcome[];
  /** Draws where ours paid no more penalties than every baseline on the same nodes (the duplicate cluster aside). */
  oursAtMostBest: number;
}

/** The duplicate cluster's extra nodes feel no failures: it is no baseline on the same nodes. */
const sameNodes = (run: BaselineOutcome) => run.extraNodes === 0;

export async function compareOverDraws(
  workloads: readonly Workload[],
  cluster: ClusterDescription,
  options: BaselineOptions = {},
): Promise<DrawsComparison> {
  const comparisons: BaselineComparison[] = [];
  for (const workload of workloads) comparisons.push(await compareBaselines(workload, cluster, options));
  const first = comparisons[0];
  if (!first) throw new Error('compareOverDraws needs at least one draw');
  const mean = (pick: (run: BaselineOutcome) => number, i: number) =>
    comparisons.reduce((sum, c) => sum + pick(c.runs[i] as BaselineOutcome), 0) / comparisons.length;
  const runs = first.runs.map((run, i): DrawOutcome => {
    const paid = comparisons.map((c) => (c.runs[i] as BaselineOutcome).penaltiesPaid);
    return {
      name: run.name,
      slaAccepted: mean((r) => r.slaAccepted, i),
      deadlinesMet: mean((r) => r.deadlines.met, i),
      deadlinesAccepted: mean((r) => r.deadlines.accepted, i),
      reservationsBroken: mean((r) => r.reservations.accepted - r.reservations.honoured, i),
      penalties: {
        mean: mean((r) => r.penaltiesPaid, i),
        min: Math.min(...paid),
        max: Math.max(...paid),
        none: paid.filter((p) => p === 0).length,
      },
      checkpoints: mean((r) => r.checkpoints, i),
      usefulToLastArrival: mean((r) => r.usefulToLastArrival, i),
      idle: mean((r) => r.idle, i),
    };
  });
  const oursAtMostBest = comparisons.filter((c) => {
    const [ours, ...baselines] = c.runs as [BaselineOutcome, ...BaselineOutcome[]];
    return baselines.filter(sameNodes).every((b) => ours.penaltiesPaid <= b.penaltiesPaid);
  }).length;
  return { draws: comparisons.length, jobs: first.jobs, nodes: first.nodes, runs, oursAtMostBest };
}

export function formatDraws(c: DrawsComparison, currency: string): string[] {
  const header = [
    'approach',
    'SLA accepted',
    'deadlines met',
    'reservations broken',
    `penalties paid (${currency}, min-max)`,
    'draws without',
    'checkpoints',
    'useful to last arrival',
    'idle',
  ];
  const rows = c.runs.map((r) => [
    r.name,
    r.slaAccepted.toFixed(1),
    `${r.deadlinesAccepted ? ((r.deadlinesMet / r.deadlinesAccepted) * 100).toFixed(2) : '-'} %`,
    r.reservationsBroken.toFixed(2),
    `${r.penalties.mean.toFixed(0)} (${r.penalties.min.toFixed(0)}-${r.penalties.max.toFixed(0)})`,
    `${r.penalties.none} of ${c.draws}`,
    r.checkpoints.toFixed(0),
    `${(r.usefulToLastArrival * 100).toFixed(1)} %`,
    `${(r.idle * 100).toFixed(1)} %`,
  ]);
  return [
    `Baselines over ${c.draws} failure draws (docs/scheduler.md): ${c.jobs} jobs, ${c.nodes} nodes; means per draw`,
    '',
    ...align([header, ...rows]),
    '',
    `ours paid no more penalties than every baseline on the same nodes in ${c.oursAtMostBest} of ${c.draws} draws`,
  ];
}
