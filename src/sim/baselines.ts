import type { ClusterDescription } from '../scheduler/model.js';
import { fcfsBackfill, type BaselineOutcome } from './fcfs-backfill.js';
import type { SimReport } from './report.js';
import { simulate } from './simulator.js';
import type { Workload } from './workload.js';

/**
 * What the planning bought (issue 19; docs/scheduler.md, "Baselines"): one workload and one
 * failure trace, run by our scheduler and by the baselines, in the same process:
 * - no checkpoints: every SLA job at level Legacy (a failure restarts it from the start);
 * - fixed-interval checkpoints: one an hour where the job asks none (the site's habit),
 *   instead of the count of seed 002's formula (3.12-3.16);
 * - no planning: a batch queue, first come first served with EASY backfilling;
 * - a duplicate cluster (SMHI's approach): the same work with no failures, on twice the nodes.
 */
export interface BaselineComparison {
  jobs: number;
  failures: number;
  nodes: number;
  runs: BaselineOutcome[];
}

export function compareBaselines(workload: Workload, cluster: ClusterDescription): BaselineComparison {
  const sla = (kind: string) => kind === 'deadline' || kind === 'reservation';
  const noCheckpoints: Workload = { ...workload, jobs: workload.jobs.map((j) => (sla(j.kind) ? { ...j, level: 'Legacy' as const, outages: 0 } : j)) };
  const fixedInterval: Workload = { ...workload, jobs: workload.jobs.map((j) => (sla(j.kind) && j.checkpointsPerHour === undefined ? { ...j, checkpointsPerHour: 1 } : j)) };
  return {
    jobs: workload.jobs.length,
    failures: workload.failures.length,
    nodes: cluster.nodes.length,
    runs: [
      outcome('planning with checkpoints (ours)', simulate(workload, cluster)),
      outcome('no checkpoints (every SLA job Legacy)', simulate(noCheckpoints, cluster)),
      outcome('fixed-interval checkpoints (one an hour)', simulate(fixedInterval, cluster)),
      fcfsBackfill(workload, cluster),
      { ...outcome('duplicate cluster (no failures felt)', simulate({ ...workload, failures: [] }, cluster)), extraNodes: cluster.nodes.length },
    ],
  };
}

function outcome(name: string, r: SimReport): BaselineOutcome {
  return {
    name,
    slaAccepted: r.acceptance.slaAccepted,
    slaRequests: r.acceptance.slaRequests,
    deadlines: { accepted: r.deadlines.accepted, met: r.deadlines.met },
    reservations: { accepted: r.reservations.accepted, honoured: r.reservations.honoured },
    penaltiesPaid: r.penalties.paid,
    checkpoints: r.checkpoints.taken,
    utilisation: r.utilisation.capacityNodeSeconds > 0 ? r.utilisation.usefulNodeSeconds / r.utilisation.capacityNodeSeconds : 0,
    extraNodes: 0,
  };
}

export function formatBaselines(c: BaselineComparison, currency: string): string[] {
  const pct = (x: number, of: number) => (of ? `${((x / of) * 100).toFixed(1)} %` : '-');
  const header = ['approach', 'SLA accepted', 'deadlines met', 'reservations honoured', 'penalties paid', 'checkpoints', 'useful utilisation', 'extra nodes'];
  const rows = c.runs.map((r) => [
    r.name, `${r.slaAccepted} of ${r.slaRequests}`, `${r.deadlines.met} of ${r.deadlines.accepted} (${pct(r.deadlines.met, r.deadlines.accepted)})`,
    `${r.reservations.honoured} of ${r.reservations.accepted}`, `${r.penaltiesPaid.toFixed(2)} ${currency}`, String(r.checkpoints), `${(r.utilisation * 100).toFixed(1)} %`, String(r.extraNodes),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ').trimEnd();
  return [`Baselines (docs/scheduler.md): ${c.jobs} jobs, ${c.failures} failure events, ${c.nodes} nodes`, '', line(header), ...rows.map(line)];
}

/**
 * The workload at another offered load (issue 19's load sweep): arrivals spread or squeezed
 * so that the work asked for (nodes x estimate) over the cluster's node-time up to the last
 * arrival is `load`; each job keeps its deadline and window relative to its arrival, and
 * the failure trace is kept as it is.
 */
export function atOfferedLoad(workload: Workload, nodes: number, load: number): Workload {
  const lastArrival = Math.max(1, ...workload.jobs.map((j) => j.arrival));
  const work = workload.jobs.reduce((sum, j) => sum + j.nodes * (j.window ? j.window.end - j.window.start : j.estimate), 0);
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

export function sweepLoads(workload: Workload, cluster: ClusterDescription, loads: readonly number[]): LoadSweep {
  return { loads: loads.map((load) => ({ load, comparison: compareBaselines(atOfferedLoad(workload, cluster.nodes.length, load), cluster) })) };
}

export function formatLoadSweep(sweep: LoadSweep, currency: string): string[] {
  const out: string[] = [];
  for (const { load, comparison } of sweep.loads) {
    out.push(`offered load ${(load * 100).toFixed(0)} %`, ...formatBaselines(comparison, currency).slice(2), '');
  }
  return out;
}
