import type { ClusterDescription } from '../scheduler/model.js';
import { fcfsBackfill, type BaselineOutcome } from './fcfs-backfill.js';
import type { SimReport } from './report.js';
import type { SimulatedPeersConfig } from './peers.js';
import type { RefusedRequests } from './events.js';
import { runSimulation, simulate } from './simulator.js';
import { youngDalyIntervalSeconds } from '../scheduler/checkpoint-plan.js';
import { shapeOf } from '../scheduler/job-timing.js';
import type { SiteTiming } from '../scheduler/site.js';
import { jobSpecOf } from './job-spec.js';
import type { Workload, WorkloadJob } from './workload.js';

/**
 * What the planning bought (docs/scheduler.md, "Baselines"): one workload and one
 * failure trace, run by our scheduler and by the baselines, in the same process:
 * - no checkpoints: every SLA job at level Legacy (a failure restarts it from the start);
 * - fixed-interval checkpoints: one an hour where the job asks none (the site's habit);
 * - Young/Daly's interval from the site's failure rate, where the job asks none;
 * - the thesis's optimum (Hovestadt 2006, 3.12-3.16) for every job, as planned before
 *   checkpoints by need;
 * - the fewest checkpoints that keep each promise, without those that pay for themselves;
 * - no planning: a batch queue, first come first served with EASY backfilling;
 * - a duplicate cluster (SMHI's approach): the same work with no failures, on twice the nodes.
 */
export interface BaselineComparison {
  jobs: number;
  failures: number;
  nodes: number;
  runs: BaselineOutcome[];
}

export interface BaselineOptions {
  /** Our scheduler also migrates to these peers. */
  peers?: SimulatedPeersConfig;
  /** What users of refused SLA requests do, in every run that plans (SimOptions). */
  refused?: RefusedRequests;
}

export async function compareBaselines(
  workload: Workload,
  cluster: ClusterDescription,
  { peers, refused }: BaselineOptions = {},
): Promise<BaselineComparison> {
  // The baselines are the planner with one checkpoint rule each, as the thesis built it: no risk analysis at admission,
  // best-effort work in its place in the plan.
  const plan = (w: Workload, c: ClusterDescription) =>
    simulate(
      w,
      { ...c, timing: { ...c.timing, promiseRiskLimit: 1, bestEffortStartsAhead: false, chanceShare: 1 } },
      { jobs: true, ...(refused ? { refused } : {}) },
    );
  const sla = (kind: string) => kind === 'deadline' || kind === 'reservation';
  const noCheckpoints: Workload = {
    ...workload,
    jobs: workload.jobs.map((j) => (sla(j.kind) ? { ...j, level: 'Legacy' as const, outages: 0 } : j)),
  };
  const everyJob = (perHour: (j: WorkloadJob) => number): Workload => ({
    ...workload,
    jobs: workload.jobs.map((j) =>
      sla(j.kind) && j.checkpointsPerHour === undefined ? { ...j, checkpointsPerHour: perHour(j) } : j,
    ),
  });
  const timing = cluster.timing;
  const withTiming = (changes: Partial<SiteTiming>): ClusterDescription => ({
    ...cluster,
    timing: { ...timing, ...changes },
  });
  return {
    jobs: workload.jobs.length,
    failures: workload.failures.length,
    nodes: cluster.nodes.length,
    runs: [
      outcome(
        `planning with checkpoints (ours${peers ? ', migrating to peers' : ''})`,
        await runSimulation(workload, cluster, {
          jobs: true,
          ...(peers ? { peers } : {}),
          ...(refused ? { refused } : {}),
        }),
      ),
      outcome('no checkpoints (every SLA job Legacy)', plan(noCheckpoints, cluster)),
      outcome(
        'fixed-interval checkpoints (one an hour)',
        plan(
          everyJob(() => 1),
          cluster,
        ),
      ),
      outcome(
        "Young/Daly's interval at the site's failure rate",
        plan(
          everyJob((j) => youngDalyPerHour(j, cluster)),
          cluster,
        ),
      ),
      outcome('thesis optimum for every job (3.16)', plan(workload, withTiming({ checkpointsByNeed: false }))),
      outcome(
        'fewest checkpoints that keep the promise, alone',
        plan(
          workload,
          withTiming({ checkpointsByNeed: true, nodeFailuresPerDay: 0, nodeFailuresPriorNodeDays: Infinity }),
        ),
      ),
      fcfsBackfill(workload, cluster),
      {
        ...outcome('duplicate cluster (no failures felt)', plan({ ...workload, failures: [] }, cluster)),
        extraNodes: cluster.nodes.length,
      },
    ],
  };
}

/** Checkpoints an hour at Young/Daly's interval for the job's nodes and checkpoint time; 0 when nothing fails. */
function youngDalyPerHour(j: WorkloadJob, cluster: ClusterDescription): number {
  const shape = shapeOf(
    jobSpecOf(j, (seconds) => seconds * 1000),
    cluster.timing,
  );
  const interval = youngDalyIntervalSeconds(shape.timing.tCp, j.nodes, cluster.timing.nodeFailuresPerDay);
  return Number.isFinite(interval) && interval > 0 ? 3600 / interval : 0;
}

function outcome(name: string, r: SimReport): BaselineOutcome {
  return {
    name,
    slaAccepted: r.acceptance.slaAccepted,
    slaRequests: r.acceptance.slaRequests,
    deadlines: { accepted: r.deadlines.accepted, met: r.deadlines.met },
    standardPlus: {
      accepted: (r.jobs ?? []).filter((j) => standardPlusDeadline(j) && j.status !== 'rejected').length,
      met: (r.jobs ?? []).filter((j) => standardPlusDeadline(j) && j.met === true).length,
    },
    migrations: r.migration?.migrations ?? 0,
    reservations: { accepted: r.reservations.accepted, honoured: r.reservations.honoured },
    penaltiesPaid: r.penalties.paid,
    checkpoints: r.checkpoints.taken,
    utilisation:
      r.utilisation.capacityNodeSeconds > 0 ? r.utilisation.usefulNodeSeconds / r.utilisation.capacityNodeSeconds : 0,
    usefulToLastArrival: r.utilisation.usefulToLastArrival,
    idle: r.utilisation.idle,
    checkpointNodeHours: r.utilisation.checkpointNodeSeconds / 3600,
    extraNodes: 0,
  };
}

function standardPlusDeadline(j: { kind: string; level: string }): boolean {
  return j.kind === 'deadline' && j.level !== 'Legacy' && j.level !== 'Background';
}

export function formatBaselines(c: BaselineComparison, currency: string): string[] {
  const pct = (x: number, of: number) => (of ? `${((x / of) * 100).toFixed(1)} %` : '-');
  const header = [
    'approach',
    'SLA accepted',
    'deadlines met',
    'Standard+ met',
    'reservations honoured',
    'penalties paid',
    'checkpoints (node-h)',
    'migrations',
    'useful to last arrival',
    'useful, whole run',
    'idle',
    'extra nodes',
  ];
  const rows = c.runs.map((r) => [
    r.name,
    `${r.slaAccepted} of ${r.slaRequests}`,
    `${r.deadlines.met} of ${r.deadlines.accepted} (${pct(r.deadlines.met, r.deadlines.accepted)})`,
    pct(r.standardPlus.met, r.standardPlus.accepted),
    `${r.reservations.honoured} of ${r.reservations.accepted}`,
    `${r.penaltiesPaid.toFixed(2)} ${currency}`,
    `${r.checkpoints} (${Math.round(r.checkpointNodeHours)})`,
    String(r.migrations),
    `${(r.usefulToLastArrival * 100).toFixed(1)} %`,
    `${(r.utilisation * 100).toFixed(1)} %`,
    `${(r.idle * 100).toFixed(1)} %`,
    String(r.extraNodes),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [
    `Baselines (docs/scheduler.md): ${c.jobs} jobs, ${c.failures} failure events, ${c.nodes} nodes`,
    '',
    line(header),
    ...rows.map(line),
  ];
}

/**
 * The workload at another offered load (load sweep): arrivals spread or squeezed
 * so that the work the jobs need (nodes x actual runtime, as the archive's logs measure
 * offered load) over the cluster's node-time up to the last arrival is `load`; each job
 * keeps its deadline and window relative to its arrival, and the failure trace is kept as
 * it is. Estimates are larger than runtimes (three times on generated traces), so the plan
 * sees more than `load` booked.
 */
export function atOfferedLoad(workload: Workload, nodes: number, load: number): Workload {
  const lastArrival = Math.max(1, ...workload.jobs.map((j) => j.arrival));
  const work = workload.jobs.reduce((sum, j) => sum + j.nodes * j.runtime, 0);
  const scale = work / (nodes * lastArrival) / load;
  return {
    ...workload,
    jobs: workload.jobs.map((j) => {
      const arrival = Math.round(j.arrival * scale);
      const shift = arrival - j.arrival;
      return {
        ...j,
        arrival,
        ...(j.deadline !== undefined ? { deadline: j.deadline + shift } : {}),
        ...(j.earliestStart !== undefined ? { earliestStart: j.earliestStart + shift } : {}),
        ...(j.window ? { window: { start: j.window.start + shift, end: j.window.end + shift } } : {}),
      };
    }),
  };
}

export interface LoadSweep {
  loads: Array<{ load: number; comparison: BaselineComparison }>;
}

export async function sweepLoads(
  workload: Workload,
  cluster: ClusterDescription,
  loads: readonly number[],
  options: BaselineOptions = {},
): Promise<LoadSweep> {
  const out: LoadSweep['loads'] = [];
  for (const load of loads)
    out.push({
      load,
      comparison: await compareBaselines(atOfferedLoad(workload, cluster.nodes.length, load), cluster, options),
    });
  return { loads: out };
}

export function formatLoadSweep(sweep: LoadSweep, currency: string): string[] {
  const out: string[] = [];
  for (const { load, comparison } of sweep.loads) {
    out.push(`offered load ${(load * 100).toFixed(0)} %`, ...formatBaselines(comparison, currency).slice(2), '');
  }
  return out;
}
