import type { ClusterDescription } from '../scheduler/model.js';
import { inArrivalOrder } from './selection.js';
import type { Workload, WorkloadJob } from './workload.js';

/**
 * The no-planning baseline: a batch queue, first come first served with EASY
 * backfilling, as most sites run without SLAs. Every job is queued (no admission control):
 * deadline and best-effort jobs when they arrive, reservations at their window's start.
 * The head of the queue starts as soon as its nodes are free; a later job may start first
 * if it fits now and, by its estimate, ends before the head's reserved start or uses only
 * nodes the head does not need. No checkpoints: a failure kills the jobs on the node, which
 * go back to the head of the queue and start over. Overheads (node set-up) are not counted,
 * which favours the baseline.
 */
export interface BaselineOutcome {
  name: string;
  slaAccepted: number;
  slaRequests: number;
  deadlines: { accepted: number; met: number };
  /** The deadlines of jobs at level Standard and above (goal). */
  standardPlus: { accepted: number; met: number };
  /** Jobs moved to peers (our scheduler with --peers). */
  migrations: number;
  reservations: { accepted: number; honoured: number };
  penaltiesPaid: number;
  checkpoints: number;
  /**
   * Useful node-time (the jobs' actual runtimes x nodes, completed jobs) over the cluster's node-time up to the last
   * end.
   */
  utilisation: number;
  /** The steady state: the useful node-time run up to the last arrival over the node-time to it (SimReport's). */
  usefulToLastArrival: number;
  /** Share of the node-time to the last end that no job used and no failure took. */
  idle: number;
  /** Node-hours spent writing checkpoints. */
  checkpointNodeHours: number;
  /** Nodes beyond the cluster this approach needs (a duplicate cluster). */
  extraNodes: number;
}

interface Queued {
  job: WorkloadJob;
  ready: number;
  restarts: number;
}

/** How long a job says it needs: a reservation its window. */
const estimateOf = (job: WorkloadJob) => (job.window ? job.window.end - job.window.start : job.estimate);
interface Running {
  q: Queued;
  nodes: number[];
  start: number;
  end: number;
}

export function fcfsBackfill(workload: Workload, cluster: ClusterDescription): BaselineOutcome {
  const nodeIds = cluster.nodes.map((n) => n.id);
  const up = nodeIds.map(() => true);
  const busy: Array<Running | undefined> = nodeIds.map(() => undefined);
  const running = new Set<Running>();
  const queue: Queued[] = [];
  const pendingArrivals = inArrivalOrder(workload.jobs)
    .map((job) => ({ job, ready: job.window ? job.window.start : job.arrival, restarts: 0 }))
    .sort((a, b) => a.ready - b.ready);
  const events = workload.failures
    .flatMap((f) => [
      { t: f.at, node: nodeIds.indexOf(f.node), down: true },
      ...(f.repairAt !== undefined ? [{ t: f.repairAt, node: nodeIds.indexOf(f.node), down: false }] : []),
    ])
    .sort((a, b) => a.t - b.t);
  const finished = new Map<string, { start: number; end: number; restarts: number }>();
  let useful = 0;
  let usefulToLastArrival = 0;
  let busyNodeSeconds = 0;
  let t = 0;
  let lastEnd = 0;
  const lastArrival = workload.jobs.reduce((last, j) => Math.max(last, j.arrival), 0);

  const freeNodes = () => nodeIds.map((_, i) => i).filter((i) => up[i] && !busy[i]);
  const launch = (q: Queued, nodes: number[]) => {
    const r: Running = { q, nodes, start: t, end: t + q.job.runtime };
    for (const n of nodes) busy[n] = r;
    running.add(r);
  };
  const schedule = () => {
    // The head of the queue starts as soon as its nodes are free.
    while (queue.length > 0 && (queue[0] as Queued).job.nodes <= freeNodes().length) {
      const head = queue.shift() as Queued;
      launch(head, freeNodes().slice(0, head.job.nodes));
    }
    const head = queue[0];
    if (!head) return;
    // EASY: the head's reserved start (shadow) and the nodes it leaves spare then.
    const ends = [...running]
      .map((r) => ({ at: r.start + estimateOf(r.q.job), nodes: r.nodes.filter((n) => up[n]).length }))
      .sort((a, b) => a.at - b.at);
    let available = freeNodes().length;
    let shadow = Infinity;
    for (const e of ends) {
      available += e.nodes;
      if (available >= head.job.nodes) {
        shadow = e.at;
        break;
      }
    }
    let spare = available - head.job.nodes;
    for (let i = 1; i < queue.length; i++) {
      const q = queue[i] as Queued;
      const nowFree = freeNodes();
      if (q.job.nodes > nowFree.length) continue;
      const endsBeforeShadow = t + estimateOf(q.job) <= shadow;
      if (!endsBeforeShadow && q.job.nodes > spare) continue;
      if (!endsBeforeShadow) spare -= q.job.nodes;
      queue.splice(i, 1);
      i--;
      launch(q, nowFree.slice(0, q.job.nodes));
    }
  };

  for (;;) {
    const nextCompletion = Math.min(...[...running].map((r) => r.end));
    const nextArrival = pendingArrivals[0]?.ready ?? Infinity;
    const nextEvent = events[0]?.t ?? Infinity;
    t = Math.min(nextCompletion, nextArrival, nextEvent);
    if (!Number.isFinite(t)) break;
    for (const r of [...running]) {
      if (r.end > t) continue;
      running.delete(r);
      for (const n of r.nodes) busy[n] = undefined;
      finished.set(r.q.job.id, { start: r.start, end: r.end, restarts: r.q.restarts });
      useful += r.q.job.nodes * r.q.job.runtime;
      usefulToLastArrival += r.q.job.nodes * Math.max(0, Math.min(r.end, lastArrival) - r.start);
      busyNodeSeconds += r.q.job.nodes * (r.end - r.start);
      lastEnd = Math.max(lastEnd, r.end);
    }
    while (events[0] && events[0].t <= t) {
      const e = events.shift() as { t: number; node: number; down: boolean };
      up[e.node] = !e.down;
      const victim = busy[e.node];
      if (e.down && victim) {
        busyNodeSeconds += victim.q.job.nodes * (t - victim.start);
        running.delete(victim);
        for (const n of victim.nodes) busy[n] = undefined;
        queue.unshift({ ...victim.q, restarts: victim.q.restarts + 1 });
      }
    }
    while (pendingArrivals[0] && pendingArrivals[0].ready <= t) queue.push(pendingArrivals.shift() as Queued);
    schedule();
    if (
      running.size === 0 &&
      pendingArrivals.length === 0 &&
      queue.length > 0 &&
      freeNodes().length === 0 &&
      events.length === 0
    )
      break; // nothing can ever run again
  }

  // Node time failures took up to the last end: the repaired stretches, and nodes still down then.
  const failedInRun = () => {
    let sum = 0;
    for (const f of workload.failures) if (f.at < lastEnd) sum += Math.min(f.repairAt ?? lastEnd, lastEnd) - f.at;
    return sum;
  };
  let slaRequests = 0;
  let penaltiesPaid = 0;
  const deadlines = { accepted: 0, met: 0 };
  const standardPlus = { accepted: 0, met: 0 };
  const reservations = { accepted: 0, honoured: 0 };
  for (const job of workload.jobs) {
    const done = finished.get(job.id);
    if (job.kind === 'deadline') {
      slaRequests++;
      deadlines.accepted++;
      const met = done !== undefined && done.end <= (job.deadline as number);
      if (met) deadlines.met++;
      else penaltiesPaid += job.penalty;
      if (job.level !== 'Legacy' && job.level !== 'Background') {
        standardPlus.accepted++;
        if (met) standardPlus.met++;
      }
    } else if (job.kind === 'reservation') {
      slaRequests++;
      reservations.accepted++;
      if (done && done.start <= (job.window as { start: number }).start && done.restarts === 0) reservations.honoured++;
      else penaltiesPaid += job.penalty;
    }
  }
  return {
    name: 'no planning (FCFS + EASY backfilling)',
    slaAccepted: slaRequests,
    slaRequests,
    deadlines,
    standardPlus,
    migrations: 0,
    reservations,
    penaltiesPaid: Math.round(penaltiesPaid * 100) / 100,
    checkpoints: 0,
    utilisation: lastEnd > 0 ? useful / (nodeIds.length * lastEnd) : 0,
    usefulToLastArrival: lastArrival > 0 ? usefulToLastArrival / (nodeIds.length * lastArrival) : 0,
    idle: lastEnd > 0 ? Math.max(0, 1 - (busyNodeSeconds + failedInRun()) / (nodeIds.length * lastEnd)) : 0,
    checkpointNodeHours: 0,
    extraNodes: 0,
  };
}
