import type { ClusterDescription, Instant, JobSpec, PlannedJob } from '../scheduler/model.js';
import { PlanningManager } from '../scheduler/planning-manager.js';
import { chosenByHash, inArrivalOrder } from './selection.js';
import { jobSpecOf } from './job-spec.js';
import type { Workload, WorkloadJob } from './workload.js';

/**
 * Interactive jobs on a busy cluster (docs/scheduler.md, "Interactive jobs in the
 * simulator"), CrossBroker's experiment (Fernández del Castillo 2008, section 5.3.4) on our scheduler. A share
 * of the workload's jobs (`share`, chosen by a hash of the job id, so the same ones in every
 * run) become interactive: the same nodes, held for the estimate (each at most `maxNodes`
 * and `maxSeconds` when given: CrossBroker's sessions are short), starting within
 * `boundSeconds` of their arrival or refused. Two policies, as CrossBroker compares FCFS
 * with Glidein: `suspend` makes room by suspending running best-effort and background jobs
 * (ours), `free-only` takes only nodes free within the bound. Jobs run as planned (no
 * failures, no early finishes); the clock moves with the arrivals.
 */
export interface InteractiveRun {
  policy: 'free-only' | 'suspend';
  interactive: number;
  started: number;
  refused: number;
  /** Seconds from arrival to the planned start of each started interactive job. */
  startDelay: { p50: number; p99: number; max: number; mean: number };
  /** Suspensions of best-effort and background jobs, and how many jobs they hit. */
  suspensions: number;
  suspendedJobs: number;
  /**
   * What the suspended batch work lost, per suspension: the extra node-hours it needs
   * (work since its last checkpoint done again, nodes prepared again), and its runtime
   * impact as CrossBroker measures it: how much later it now ends, over its runtime.
   */
  lostNodeHours: number;
  meanRuntimeImpact: number;
  /** Of the other jobs, how many SLA jobs were accepted (none is ever suspended). */
  slaAccepted: number;
}

export interface InteractiveOptions {
  share: number;
  boundSeconds: number;
  maxNodes?: number;
  maxSeconds?: number;
  /** Nodes kept prepared for sessions, the last ones of the cluster, when it marks none warm itself. */
  warmNodes?: number;
}

export interface InteractiveComparison extends InteractiveOptions {
  jobs: number;
  freeOnly: InteractiveRun;
  suspend: InteractiveRun;
}

export function compareInteractive(
  workload: Workload,
  given: ClusterDescription,
  options: InteractiveOptions,
): InteractiveComparison {
  const cluster = withWarmPool(given, options.warmNodes ?? 0);
  return {
    ...options,
    jobs: workload.jobs.length,
    freeOnly: runInteractive(workload, cluster, { ...options, suspend: false }),
    suspend: runInteractive(workload, cluster, { ...options, suspend: true }),
  };
}

function runInteractive(
  workload: Workload,
  cluster: ClusterDescription,
  options: InteractiveOptions & { suspend: boolean },
): InteractiveRun {
  const pm = new PlanningManager(cluster);
  const ms = (seconds: number) => workload.start + Math.round(seconds * 1000);
  const delays: number[] = [];
  let interactive = 0;
  let refused = 0;
  let suspensions = 0;
  let lostMs = 0;
  let impactSum = 0;
  let slaAccepted = 0;
  const hit = new Set<string>();
  for (const input of inArrivalOrder(workload.jobs)) {
    const t = ms(input.arrival);
    pm.advance(t);
    const spec = jobSpecOf(input, ms);
    if (!isInteractive(input, options.share)) {
      const decision = pm.admit(spec, t);
      if (decision.accepted && (spec.kind === 'Reservation' || spec.kind === 'Deadline')) slaAccepted++;
      continue;
    }
    interactive++;
    const asInteractive: JobSpec = {
      ...spec,
      kind: 'Reservation',
      level: 'Legacy',
      coveredOutages: 0,
      nodes: Math.min(spec.nodes, options.maxNodes ?? Infinity),
      runtimeSeconds: Math.min(spec.runtimeSeconds, options.maxSeconds ?? Infinity),
    };
    delete asInteractive.deadline;
    delete asInteractive.earliestStart;
    delete asInteractive.window;
    const before = new Map([...pm.allJobs()].map((j) => [j.spec.id, { end: lastEnd(j), area: remainingArea(j, t) }]));
    const decision = pm.admitInteractive(asInteractive, t, options.boundSeconds * 1000, { suspend: options.suspend });
    if (!decision.accepted) {
      refused++;
      continue;
    }
    delays.push(((decision.job.segments[0]?.start ?? t) - t) / 1000);
    for (const id of decision.suspended ?? []) {
      const job = pm.job(id) as PlannedJob;
      const was = before.get(id) as { end: Instant; area: number };
      suspensions++;
      hit.add(id);
      lostMs += Math.max(0, remainingArea(job, t) - was.area);
      impactSum += (lastEnd(job) - was.end) / (job.spec.runtimeSeconds * 1000);
    }
  }
  delays.sort((a, b) => a - b);
  const quantile = (q: number) =>
    delays.length ? (delays[Math.min(delays.length - 1, Math.ceil(q * delays.length) - 1)] as number) : 0;
  return {
    policy: options.suspend ? 'suspend' : 'free-only',
    interactive,
    started: delays.length,
    refused,
    startDelay: {
      p50: quantile(0.5),
      p99: quantile(0.99),
      max: delays.at(-1) ?? 0,
      mean: delays.length ? delays.reduce((a, b) => a + b, 0) / delays.length : 0,
    },
    suspensions,
    suspendedJobs: hit.size,
    lostNodeHours: Math.round(lostMs / 36_000) / 100,
    meanRuntimeImpact: suspensions ? impactSum / suspensions : 0,
    slaAccepted,
  };
}

/**
 * The cluster with its last `count` ordinary nodes kept warm, unless it keeps some warm
 * already: a session starts within seconds only on nodes prepared for it (docs/scheduler.md,
 * "Preparation before a promise").
 */
export function withWarmPool(cluster: ClusterDescription, count: number): ClusterDescription {
  if (count <= 0 || cluster.nodes.some((n) => n.warm)) return cluster;
  let left = count;
  const warmed = (n: ClusterDescription['nodes'][number]): ClusterDescription['nodes'][number] => {
    if (left <= 0 || n.buffer) return n;
    left -= 1;
    return { ...n, warm: true };
  };
  const nodes = [...cluster.nodes].reverse().map(warmed).reverse();
  return { ...cluster, nodes };
}

/** Whether this job is made interactive (the same ones in both runs). */
function isInteractive(input: WorkloadJob, share: number): boolean {
  return chosenByHash(input.id, share, 0x1a7e);
}

function lastEnd(job: PlannedJob): Instant {
  return job.segments.at(-1)?.end ?? 0;
}

function remainingArea(job: PlannedJob, now: Instant): number {
  return job.segments.reduce(
    (sum, s) => sum + (s.end > now ? s.nodes.length * (s.end - Math.max(now, s.start)) : 0),
    0,
  );
}

export function formatInteractiveComparison(c: InteractiveComparison): string[] {
  const pct = (x: number, of: number) => (of ? `${((x / of) * 100).toFixed(1)} %` : '-');
  const rows: Array<[string, (r: InteractiveRun) => string]> = [
    ['interactive requests', (r) => String(r.interactive)],
    ['started within the bound', (r) => `${r.started} (${pct(r.started, r.interactive)})`],
    ['refused', (r) => `${r.refused} (${pct(r.refused, r.interactive)})`],
    ['start delay p50 / p99 / max (s)', (r) => `${r.startDelay.p50} / ${r.startDelay.p99} / ${r.startDelay.max}`],
    ['suspensions of batch jobs (jobs)', (r) => `${r.suspensions} (${r.suspendedJobs})`],
    ['batch work lost (node-hours)', (r) => r.lostNodeHours.toFixed(2)],
    ['mean runtime impact per suspension', (r) => r.meanRuntimeImpact.toFixed(3)],
    ['SLA jobs accepted', (r) => String(r.slaAccepted)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `Interactive jobs (docs/scheduler.md): ${c.jobs} jobs, ${(c.share * 100).toFixed(1)} % interactive` +
      `${c.maxNodes !== undefined ? `, at most ${c.maxNodes} nodes` : ''}` +
      `${c.maxSeconds !== undefined ? `, at most ${c.maxSeconds / 60} minutes` : ''}, start within ` +
      `${c.boundSeconds} s` +
      `${c.warmNodes ? `, ${c.warmNodes} warm node${c.warmNodes === 1 ? '' : 's'}` : ''}`,
    '',
    `${''.padEnd(width)}  ${'free nodes only'.padStart(22)}  ${'suspend batch work'.padStart(22)}`,
    ...rows.map(
      ([label, value]) => `${label.padEnd(width)}  ${value(c.freeOnly).padStart(22)}  ${value(c.suspend).padStart(22)}`,
    ),
    '',
    'CrossBroker (Fernández del Castillo 2008, Tables 5.5 to 5.7, high load): interactive jobs failed 14.6 % ' +
      '(FCFS) and 0 % (Glidein);',
    'wait 233 s mean (FCFS), 148 to 163 s mean and 43 s min (Glidein); preempted batch jobs ran 13 to 14 % longer.',
  ];
}
