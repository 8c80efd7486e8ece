import { isoTime } from '../domain/time.js';
import type { ClusterDescription, Instant } from '../scheduler/model.js';
import type { JobOutcome, KindCounts, MigrationSection, SimReport, Violation, ViolationType } from './report.js';
import { workloadKinds, type Workload, type WorkloadKind } from './workload.js';

/** What a finished run counted, for its report. */
export interface RunTotals {
  workload: Workload;
  cluster: ClusterDescription;
  /** The run's options that the report repeats. */
  options: { untilSeconds?: number; jobs?: boolean };
  epoch: Instant;
  end: Instant;
  endSeconds: number;
  stoppedBy: SimReport['span']['stoppedBy'];
  /** In workload order. */
  outcomes: JobOutcome[];
  violations: Violation[];
  counters: {
    repairs: number;
    failures: number;
    renewals: number;
    retiredWithoutCompletion: number;
    completionClamped: number;
    lateWithoutProblem: number;
  };
  time: {
    busyMs: number;
    spareMs: number;
    usefulMs: number;
    slaUsefulMs: number;
    usefulToLastArrivalMs: number;
    checkpointNodeMs: number;
    failedMs: number;
    lastArrivalSeconds: number;
    lastCompletionSeconds: number;
  };
  restartsOnSpare: number;
  partialJobs: number;
  jobsHit: number;
  runningJobsHit: number;
  values: ReadonlyMap<string, number>;
  migration?: { peers: string[]; section: MigrationSection };
}

export const slaKinds: readonly WorkloadKind[] = ['reservation', 'deadline'];

/** The simulator's report (report.ts) from what a run counted: pure arithmetic over the outcomes. */
export function buildReport(f: RunTotals): SimReport {
  const { workload, cluster, options, epoch, end, stoppedBy, outcomes, violations, counters, time } = f;
  const counts = (filter: (o: JobOutcome) => boolean): KindCounts => {
    const list = outcomes.filter(filter);
    return {
      requests: list.length,
      accepted: list.filter((o) => o.status !== 'rejected').length,
      rejected: list.filter((o) => o.status === 'rejected').length,
      completed: list.filter((o) => o.status === 'completed').length,
      dropped: list.filter((o) => o.status === 'dropped').length,
      open: list.filter((o) => o.status === 'running' || o.status === 'waiting' || o.status === 'in-P').length,
    };
  };
  const byKind = Object.fromEntries(workloadKinds.map((k) => [k, counts((o) => o.kind === k)])) as Record<
    WorkloadKind,
    KindCounts
  >;
  const sla = outcomes.filter((o) => slaKinds.includes(o.kind));
  const slaAccepted = sla.filter((o) => o.status !== 'rejected').length;
  const spanMs = Math.max(0, end - epoch);
  const capacityMs = cluster.nodes.length * spanMs;
  const frac = (ms: number) => (capacityMs > 0 ? round(ms / capacityMs, 6) : 0);
  const idleMs = Math.max(0, capacityMs - time.busyMs - time.spareMs - time.failedMs);
  const deadlineJobs = outcomes.filter((o) => o.kind === 'deadline' && o.status !== 'rejected');
  const reservations = outcomes.filter((o) => o.kind === 'reservation' && o.status !== 'rejected');
  const stillInP = outcomes.filter((o) => o.status === 'in-P' && slaKinds.includes(o.kind)).length;
  const byLevel: SimReport['violations']['byLevel'] = {};
  const penaltiesByLevel: SimReport['penalties']['byLevel'] = {};
  for (const v of violations) {
    byLevel[v.level] = (byLevel[v.level] ?? 0) + 1;
    const entry = (penaltiesByLevel[v.level] ??= { owed: 0, paid: 0 });
    entry.owed += v.penalty;
    entry.paid += v.paid;
  }
  const owed = violations.reduce((s, v) => s + v.penalty, 0);
  const paid = violations.reduce((s, v) => s + v.paid, 0);
  const count = (type: ViolationType) => violations.filter((v) => v.type === type).length;
  const report: SimReport = {
    format: 'wsag-sim-report/1',
    workload: {
      name: workload.name,
      jobs: workload.jobs.length,
      failures: workload.failures.length,
      start: isoTime(new Date(epoch)),
      currency: workload.currency,
    },
    cluster: {
      nodes: cluster.nodes.length,
      bufferNodes: cluster.nodes.filter((n) => n.buffer).length,
      peerStandbyNodes: cluster.peerStandbyNodes,
      problemHorizonSeconds: cluster.timing.problemHorizonSeconds,
    },
    options: {
      ...(options.untilSeconds !== undefined ? { untilSeconds: options.untilSeconds } : {}),
      ...(f.migration ? { migration: { peers: f.migration.peers } } : {}),
    },
    span: { endSeconds: f.endSeconds, stoppedBy },
    requests: { ...byKind, total: counts(() => true) },
    acceptance: {
      slaRequests: sla.length,
      slaAccepted,
      slaRejected: sla.length - slaAccepted,
      rate: sla.length > 0 ? round(slaAccepted / sla.length, 6) : 1,
      bestEffortRejected: outcomes.filter((o) => !slaKinds.includes(o.kind) && o.status === 'rejected').length,
      refusedQueued: outcomes.filter((o) => o.queuedFor !== undefined).length,
    },
    utilisation: {
      capacityNodeSeconds: capacityMs / 1000,
      busyNodeSeconds: round(time.busyMs / 1000, 3),
      spareNodeSeconds: round(time.spareMs / 1000, 3),
      usefulNodeSeconds: round(time.usefulMs / 1000, 3),
      slaUsefulNodeSeconds: round(time.slaUsefulMs / 1000, 3),
      idleNodeSeconds: round(idleMs / 1000, 3),
      failedNodeSeconds: time.failedMs / 1000,
      busy: frac(time.busyMs),
      spare: frac(time.spareMs),
      useful: frac(time.usefulMs),
      failed: frac(time.failedMs),
      slaUseful: frac(time.slaUsefulMs),
      bestEffortUseful: frac(time.usefulMs - time.slaUsefulMs),
      idle: frac(idleMs),
      tailSeconds: Math.max(0, time.lastCompletionSeconds - time.lastArrivalSeconds),
      usefulToLastArrival:
        time.lastArrivalSeconds > 0
          ? round(time.usefulToLastArrivalMs / (cluster.nodes.length * time.lastArrivalSeconds * 1000), 6)
          : 0,
      checkpointNodeSeconds: round(time.checkpointNodeMs / 1000, 3),
    },
    deadlines: {
      accepted: deadlineJobs.length,
      met: deadlineJobs.filter((o) => o.met === true).length,
      missed: deadlineJobs.filter((o) => o.met === false).length,
      open: deadlineJobs.filter((o) => o.met === undefined).length,
    },
    reservations: {
      accepted: reservations.length,
      honoured: reservations.filter((o) => o.honoured === true).length,
      notHonoured: reservations.filter((o) => o.honoured === false).length,
      open: reservations.filter((o) => o.honoured === undefined).length,
    },
    violations: {
      total: violations.length,
      deadlineMissed: count('deadline-missed'),
      reservationNotHonoured: count('reservation-not-honoured'),
      leftInP: count('left-in-P'),
      stillInP,
      byLevel,
    },
    penalties: { owed, paid, excused: owed - paid, byLevel: penaltiesByLevel },
    checkpoints: { taken: sum(outcomes, (o) => o.checkpoints), jobs: outcomes.filter((o) => o.checkpoints > 0).length },
    suspensions: { count: sum(outcomes, (o) => o.suspensions), jobs: outcomes.filter((o) => o.suspensions > 0).length },
    restarts: {
      count: sum(outcomes, (o) => o.restarts),
      onSpare: f.restartsOnSpare,
      jobs: outcomes.filter((o) => o.restarts > 0).length,
    },
    pieces: { jobs: outcomes.filter((o) => o.pieces > 1).length, partialExecution: f.partialJobs },
    failures: {
      events: counters.failures,
      repairs: counters.repairs,
      renewals: counters.renewals,
      jobsHit: f.jobsHit,
      runningJobsHit: f.runningJobsHit,
    },
    value: {
      requested: sum(outcomes, (o) => f.values.get(o.id) ?? 0),
      accepted: sum(
        outcomes.filter((o) => o.status !== 'rejected'),
        (o) => f.values.get(o.id) ?? 0,
      ),
      completed: sum(
        outcomes.filter((o) => o.status === 'completed'),
        (o) => f.values.get(o.id) ?? 0,
      ),
    },
    checks: {
      retiredWithoutCompletion: counters.retiredWithoutCompletion,
      completionClamped: counters.completionClamped,
      lateWithoutProblem: counters.lateWithoutProblem,
    },
    rejected: outcomes
      .filter((o) => o.status === 'rejected')
      .map((o) => ({ id: o.id, kind: o.kind, level: o.level, arrival: o.arrival, reason: o.reason ?? '' })),
    violated: violations,
    ...(f.migration ? { migration: f.migration.section } : {}),
    ...(options.jobs ? { jobs: outcomes } : {}),
  };
  return report;
}

function sum<T>(list: readonly T[], f: (x: T) => number): number {
  let total = 0;
  for (const x of list) total += f(x);
  return total;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
