/**
 * Generates workloads/10k.json: 10,000 jobs over four weeks on the 256-node cluster of
 * workloads/cluster-256.json, with a node failure trace; and workloads/10k-failures.json:
 * the same jobs under a much heavier failure trace (for `wsag sim --compare-migration`).
 * Deterministic: seeded PRNGs (mulberry32) and whole seconds everywhere, so the committed
 * files are exactly what this script prints (test/sim/workloads.test.ts checks it).
 *
 *   node --import tsx workloads/generate.ts          # rewrites both files
 *   node --import tsx workloads/generate.ts --check  # exits 1 if a file differs
 *   node --import tsx workloads/generate.ts --heavy-draw S > draw.json
 *     # prints another draw of 10k-failures.json: the same model, stream seed S
 *
 * The mix (see workloads/README.md): arrivals follow a working-day rhythm (busier on
 * weekdays 8-18 h); a third of the jobs are deadline jobs, a sixth reservations, the rest
 * best-effort and background; guarantee levels Legacy, Standard, Enhanced and Full for the
 * SLA jobs; sizes from 1 to 128 nodes, small jobs far more common; runtime estimates from
 * 5 minutes to 16 hours, with most jobs finishing before their estimate; node failures
 * about twice a day, repaired after a lognormal time (median 2 h, some beyond the 4 h
 * problem horizon, a few never in the four weeks).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src/sim/random.js';

export const seed = 20260105;
/** The heavier trace of 10k-failures.json draws from its own stream, so the jobs stay those of 10k.json. */
export const failureSeed = 20260106;
const days = 28;
const jobCount = 10_000;
const nodeCount = 256;
const bufferNodes = 8;

/** The seeded PRNG of every generated workload (mulberry32). */
export const prng = mulberry32;

type Random = () => number;

function pick<T>(random: Random, weighted: ReadonlyArray<readonly [T, number]>): T {
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  let x = random() * total;
  for (const [value, weight] of weighted) {
    x -= weight;
    if (x < 0) return value;
  }
  return (weighted[weighted.length - 1] as readonly [T, number])[0];
}

function between(random: Random, lo: number, hi: number): number {
  return lo + random() * (hi - lo);
}

function logUniform(random: Random, lo: number, hi: number): number {
  return Math.exp(between(random, Math.log(lo), Math.log(hi)));
}

/** Standard normal by Box-Muller (one of the pair). */
function normal(random: Random): number {
  const u = Math.max(random(), 1e-12);
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** How busy the submitters are at a time of the week (relative rate, 1 = the weekday working-hours peak). */
function rate(seconds: number): number {
  const day = Math.floor(seconds / 86400) % 7; // day 0 is a Monday (the workload starts on Monday 2026-01-05)
  const hour = (seconds % 86400) / 3600;
  const weekend = day >= 5;
  const working = hour >= 8 && hour < 18;
  return weekend ? 0.25 : working ? 1 : 0.35;
}

type Failure = { at: number; node: string; repairAt?: number };

interface Job {
  id: string;
  arrival: number;
  kind: string;
  level: string;
  nodes: number;
  estimate?: number;
  runtime: number;
  deadline?: number;
  earliestStart?: number;
  window?: { start: number; end: number };
  value: number;
  penalty: number;
  memoryGB?: number;
  outages?: number;
  interconnect?: string;
  migration?: string;
  vo?: string;
}

const levelPrice: Record<string, number> = { Background: 0.2, Legacy: 1, Standard: 1.3, Enhanced: 1.6, Full: 2.2 };
const penaltyFactor: Record<string, number> = { Legacy: 0.5, Standard: 1, Enhanced: 1.5, Full: 3 };

export interface Generated {
  name: string;
  description: string;
  start: string;
  currency: string;
  cluster: string;
  jobs: Job[];
  failures: Failure[];
}

export function generate(): Generated {
  const random = prng(seed);
  const span = days * 86400;

  // Arrivals: jobCount instants drawn from the weekly rhythm (rejection sampling), in order:
  // a Poisson process with that rhythm, given its count.
  const arrivals: number[] = [];
  while (arrivals.length < jobCount) {
    const t = Math.floor(random() * span);
    if (random() < rate(t)) arrivals.push(t);
  }
  arrivals.sort((a, b) => a - b);

  const jobs: Job[] = arrivals.map((arrival, i) => {
    const id = `j${String(i + 1).padStart(5, '0')}`;
    const kind = pick(random, [['deadline', 34], ['reservation', 16], ['best-effort', 35], ['background', 15]] as const);
    const nodes = pick(random, [[1, 30], [2, 16], [4, 17], [8, 15], [16, 11], [32, 7], [64, 3], [128, 1]] as const);
    // Wide jobs run shorter: the estimate's upper end shrinks with the node count.
    const longest = nodes >= 64 ? 4 * 3600 : nodes >= 16 ? 8 * 3600 : 16 * 3600;
    const estimate = Math.round(logUniform(random, 300, longest) / 60) * 60;
    // Most jobs finish before their estimate; a fifth use all of it.
    const used = random() < 0.2 ? 1 : between(random, 0.3, 1);
    const runtime = Math.max(60, Math.round(estimate * used));
    const memoryGB = pick(random, [[undefined, 60], [32, 20], [64, 15], [128, 5]] as const);
    const interconnect = nodes >= 16 && nodes <= 32 && random() < 0.5 ? 'InfiniBand' : undefined;
    let level: string;
    let outages: number | undefined;
    if (kind === 'deadline' || kind === 'reservation') {
      level = pick(random, [['Legacy', 25], ['Standard', 40], ['Enhanced', 25], ['Full', 10]] as const);
      if (level === 'Full' && nodes > 32) level = 'Enhanced'; // the peer keeps 32 standby nodes
      if ((level === 'Enhanced' || level === 'Full') && random() < 0.2) outages = 2;
    } else {
      level = kind === 'background' ? 'Background' : pick(random, [['Legacy', 70], ['Standard', 30]] as const);
    }
    let window: { start: number; end: number } | undefined;
    if (kind === 'reservation') {
      // Booked ahead: from an hour to three days, starting on a quarter hour.
      const lead = logUniform(random, 3600, 3 * 86400);
      const start = Math.ceil((arrival + lead) / 900) * 900;
      window = { start, end: start + estimate };
    }
    let deadline: number | undefined;
    let earliestStart: number | undefined;
    if (kind === 'deadline') {
      // Slack from tight (refusals) to relaxed; some may not start for a while.
      const slack = pick(random, [[1.3, 15], [2, 35], [4, 35], [10, 15]] as const);
      if (random() < 0.15) earliestStart = arrival + Math.round(between(random, 1, 12)) * 3600;
      deadline = (earliestStart ?? arrival) + Math.round((estimate * slack + 1800) / 60) * 60;
    }
    if (kind === 'best-effort' && random() < 0.1) earliestStart = arrival + Math.round(between(random, 1, 24)) * 3600;
    const value = Math.max(0.01, Math.round(nodes * (estimate / 3600) * (levelPrice[level] ?? 1) * 100) / 100);
    const penalty = kind === 'deadline' || kind === 'reservation' ? Math.round(value * (penaltyFactor[level] ?? 0) * 100) / 100 : 0;
    const job: Job = {
      id,
      arrival,
      kind,
      level,
      nodes,
      ...(window ? { window } : { estimate }),
      runtime,
      ...(deadline !== undefined ? { deadline } : {}),
      ...(earliestStart !== undefined ? { earliestStart } : {}),
      ...(memoryGB !== undefined ? { memoryGB } : {}),
      ...(interconnect !== undefined ? { interconnect } : {}),
      ...(outages !== undefined ? { outages } : {}),
      value,
      penalty,
    };
    return job;
  });

  // Failures: about two a day across the cluster, never two at once on a node.
  const failures: Failure[] = [];
  const downUntil = new Map<number, number>();
  let f = 0;
  for (;;) {
    f += -Math.log(1 - random()) * 43200;
    if (f >= span) break;
    const at = Math.floor(f);
    let node = Math.floor(random() * nodeCount);
    while ((downUntil.get(node) ?? -1) > at) node = (node + 1) % nodeCount;
    const never = random() < 0.05;
    const repair = Math.round(Math.exp(Math.log(7200) + 0.9 * normal(random)));
    const repairAt = never ? undefined : at + Math.max(600, Math.min(repair, 3 * 86400));
    downUntil.set(node, repairAt ?? Number.POSITIVE_INFINITY);
    failures.push({ at, node: nodeId(node), ...(repairAt !== undefined ? { repairAt } : {}) });
  }

  return {
    name: '10k',
    description: `10,000 jobs over ${days} days on ${nodeCount} nodes (${bufferNodes} buffer) with ${failures.length} node failures; generated by workloads/generate.ts (seed ${seed})`,
    start: '2026-01-05T00:00:00Z',
    currency: 'EUR',
    cluster: 'cluster-256.json',
    jobs,
    failures,
  };
}

/**
 * workloads/10k-failures.json: the jobs of 10k.json, a tenth of their SLA jobs forbidding
 * migration (sla:MigrationPolicy None), under a heavy failure trace: single nodes about six
 * times a day, repaired after a lognormal time (median 4 h, capped at 3 days, 5 % not
 * within the run), and about every two days a whole group of 32 nodes (half an island
 * behind one switch or power distribution unit: nodes 1-32, 33-64, ...) out for a
 * lognormal time (median 8 h, capped at 2 days). A node is never failed twice at once:
 * a group failure leaves out the nodes of the group that are out already.
 */
export function generateWithFailures(streamSeed = failureSeed): Generated {
  const base = generate();
  const random = prng(streamSeed);
  const span = days * 86400;
  const jobs = base.jobs.map((job) => {
    if (job.kind !== 'deadline' && job.kind !== 'reservation') return job;
    return random() < 0.1 ? { ...job, migration: 'None' } : job;
  });
  const events: Array<{ at: number; nodes: number[]; repairAfter: number | undefined }> = [];
  for (let t = 0; ; ) {
    t += -Math.log(1 - random()) * 14400;
    if (t >= span) break;
    const never = random() < 0.05;
    const repair = Math.round(Math.exp(Math.log(4 * 3600) + 0.9 * normal(random)));
    events.push({ at: Math.floor(t), nodes: [Math.floor(random() * nodeCount)], repairAfter: never ? undefined : Math.max(600, Math.min(repair, 3 * 86400)) });
  }
  for (let t = 0; ; ) {
    t += -Math.log(1 - random()) * 2 * 86400;
    if (t >= span) break;
    const group = Math.floor(random() * (nodeCount / 32));
    const repair = Math.round(Math.exp(Math.log(8 * 3600) + 0.6 * normal(random)));
    events.push({ at: Math.floor(t), nodes: Array.from({ length: 32 }, (_, k) => group * 32 + k), repairAfter: Math.max(1800, Math.min(repair, 2 * 86400)) });
  }
  events.sort((a, b) => a.at - b.at || (a.nodes[0] as number) - (b.nodes[0] as number));
  const failures: Failure[] = [];
  const downUntil = new Map<number, number>();
  for (const event of events) {
    for (const node of event.nodes) {
      if ((downUntil.get(node) ?? -1) > event.at) continue; // already out
      const repairAt = event.repairAfter === undefined ? undefined : event.at + event.repairAfter;
      downUntil.set(node, repairAt ?? Number.POSITIVE_INFINITY);
      failures.push({ at: event.at, node: nodeId(node), ...(repairAt !== undefined ? { repairAt } : {}) });
    }
  }
  return {
    ...base,
    name: '10k-failures',
    description: `the 10,000 jobs of 10k.json (a tenth of the SLA jobs forbidding migration) on ${nodeCount} nodes with a heavy trace of ${failures.length} node failures, whole groups of 32 nodes among them; generated by workloads/generate.ts (seed ${seed}, failures ${streamSeed})`,
    jobs,
    failures,
  };
}

/**
 * workloads/vo-3.json: three VOs sharing the 8-node cluster-small.json for two weeks under
 * workloads/vo-policy.json, asking for about 130 % of the site between them (atlas about
 * half of the demand, astro a third, bio the rest), so the shares decide who gets what.
 */
export const voSeed = 20260107;
export function generateVo(): Generated {
  const random = prng(voSeed);
  const span = 14 * 86400;
  const arrivals = Array.from({ length: 1100 }, () => Math.floor(random() * span)).sort((a, b) => a - b);
  const jobs: Job[] = arrivals.map((arrival, i) => {
    const vo = pick(random, [['atlas', 48], ['astro', 34], ['bio', 18]] as const);
    const nodes = pick(random, [[1, 40], [2, 35], [4, 25]] as const);
    const estimate = Math.round(logUniform(random, 1800, 4 * 3600) / 60) * 60;
    const deadlineJob = random() < 0.4;
    const level = deadlineJob ? pick(random, [['Legacy', 50], ['Standard', 50]] as const) : 'Legacy';
    const job: Job = { id: `v${String(i + 1).padStart(4, '0')}`, arrival, kind: deadlineJob ? 'deadline' : 'best-effort', level, nodes, estimate, runtime: estimate, value: 1, penalty: 0, vo };
    if (deadlineJob) job.deadline = arrival + Math.round((estimate * between(random, 2, 6)) / 60) * 60;
    return job;
  });
  return {
    name: 'vo-3',
    description: 'Three VOs (atlas, astro, bio) on the 8 nodes of cluster-small.json for two weeks, asking for about 130 % of the site; for wsag sim --vo-policy workloads/vo-policy.json.',
    start: '2026-01-05T00:00:00Z',
    currency: 'EUR',
    cluster: 'cluster-small.json',
    jobs,
    failures: [],
  };
}

/** Node ids of cluster-256.json: n001 ... n256 (the last eight are buffer nodes). */
function nodeId(index: number): string {
  return `n${String(index + 1).padStart(3, '0')}`;
}

/** The file text: top-level fields one per line, then one job and one failure per line (diffable). */
export function render(workload: Generated): string {
  const { jobs, failures, ...head } = workload;
  const lines = ['{'];
  for (const [key, value] of Object.entries(head)) lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(value)},`);
  lines.push('  "jobs": [');
  jobs.forEach((j, i) => lines.push(`    ${JSON.stringify(j)}${i < jobs.length - 1 ? ',' : ''}`));
  lines.push('  ],');
  lines.push('  "failures": [');
  failures.forEach((x, i) => lines.push(`    ${JSON.stringify(x)}${i < failures.length - 1 ? ',' : ''}`));
  lines.push('  ]');
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

export const outputFile = fileURLToPath(new URL('./10k.json', import.meta.url));
export const failuresOutputFile = fileURLToPath(new URL('./10k-failures.json', import.meta.url));
export const voOutputFile = fileURLToPath(new URL('./vo-3.json', import.meta.url));

/** The generated files and their generators. */
export const outputs: ReadonlyArray<{ file: string; generate: () => Generated }> = [
  { file: outputFile, generate },
  { file: failuresOutputFile, generate: generateWithFailures },
  { file: voOutputFile, generate: generateVo },
];

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1]);
const heavyDraw = process.argv.indexOf('--heavy-draw');
if (isMain && heavyDraw > 0) {
  const streamSeed = Number(process.argv[heavyDraw + 1]);
  if (!Number.isInteger(streamSeed)) throw new Error('--heavy-draw expects a whole number: the seed of the draw');
  process.stdout.write(render(generateWithFailures(streamSeed)));
} else if (isMain) {
  for (const output of outputs) {
    const workload = output.generate();
    const text = render(workload);
    const name = `workloads/${output.file.split('/').pop()}`;
    if (process.argv.includes('--check')) {
      const same = fs.existsSync(output.file) && fs.readFileSync(output.file, 'utf8') === text;
      console.log(same ? `${name} is up to date` : `${name} differs from the generator output`);
      if (!same) process.exitCode = 1;
    } else {
      fs.writeFileSync(output.file, text);
      console.log(`wrote ${name}: ${workload.jobs.length} jobs, ${workload.failures.length} failures`);
    }
  }
}
