/**
 * `npm run bench` (with bench/create-agreement.ts) or `npm run bench:scheduler`: the
 * planning scheduler's admission latency and re-planning time (SCHEDULER.md, "Speed").
 * Plans of 1k, 10k and 100k planned jobs (a mix of deadline jobs at every level,
 * reservations, best-effort and background jobs on a 1024-node cluster with buffer nodes
 * and InfiniBand islands) are built by admitting requests; then, on each plan:
 * - probe: one more request decided without booking (varied kinds), many samples;
 * - admit: one more request admitted and booked (best-effort jobs in its way move), then
 *   released (not timed);
 * - failure: re-planning after one node fails (figure 3.4 with suspension and partial
 *   execution); each failure is undone by repairing the node (timed separately).
 * Prints a Markdown table; `--write` appends it to docs/benchmarks.md.
 * BENCH_SIZES=1000,10000 limits the sizes.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { ClusterNode } from '../src/scheduler/model.js';
import { BUFFER, build, DAY, HOUR, NODES, random, request, T0 } from './scheduler-workload.js';

const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);

function quantiles(times: number[]): { median: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return { median: q(0.5), p99: q(0.99) };
}

function time(op: () => unknown): number {
  const t0 = performance.now();
  op();
  return performance.now() - t0;
}

interface Row {
  size: number;
  requests: number;
  buildMs: number;
  reachDays: number;
  probe: { median: number; p99: number };
  admit: { median: number; p99: number };
  failure: { median: number; p99: number };
  repair: { median: number; p99: number };
  samples: { probe: number; admit: number; failures: number };
}

function measure(size: number): Row {
  const built = build(size);
  const { pm } = built;
  const now = T0 + HOUR; // jobs planned from T0 are running
  pm.advance(now);
  const next = random(size + 1);
  const reach = built.reachDays * DAY;
  const samples = { probe: size >= 100_000 ? 500 : 2000, admit: size >= 100_000 ? 300 : 1000, failures: size >= 100_000 ? 10 : 30 };
  const warm = (n: number, op: (i: number) => unknown) => {
    for (let i = 0; i < n; i++) op(i);
  };

  const probeOp = (i: number) => pm.probe(request(next, `probe-${i}`, now, reach), now);
  warm(50, probeOp);
  const probe = quantiles(Array.from({ length: samples.probe }, (_, i) => time(() => probeOp(i))));

  const admitTimes: number[] = [];
  for (let i = 0; i < samples.admit + 50; i++) {
    const spec = request(next, `admit-${i}`, now, reach);
    const t = time(() => pm.admit(spec, now));
    if (i >= 50) admitTimes.push(t);
    pm.release(spec.id);
  }
  const admit = quantiles(admitTimes);

  const failureTimes: number[] = [];
  const repairTimes: number[] = [];
  for (let i = 0; i < samples.failures; i++) {
    const node = pm.cluster.nodes[Math.floor(next() * (NODES - BUFFER))] as ClusterNode;
    failureTimes.push(time(() => pm.nodeFailed(node.id, now)));
    repairTimes.push(time(() => pm.nodeRepaired(node.id, now)));
  }
  return { size, requests: built.requests, buildMs: built.buildMs, reachDays: built.reachDays, probe, admit, failure: quantiles(failureTimes), repair: quantiles(repairTimes), samples };
}

const rows: Row[] = [];
for (const size of sizes) {
  const row = measure(size);
  rows.push(row);
  console.error(`${size} planned jobs: built in ${(row.buildMs / 1000).toFixed(1)} s`);
}

const ms = (v: number) => (v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(2) : v.toFixed(0));
const growth = rows.slice(1).map((row, i) => {
  const prev = rows[i] as Row;
  const n = row.size / prev.size;
  const nlogn = (row.size * Math.log(row.size)) / (prev.size * Math.log(prev.size));
  const f = (a: number, b: number) => `${(a / b).toFixed(1)}×`;
  return `| ${prev.size} → ${row.size} | ${n.toFixed(0)}× / ${nlogn.toFixed(1)}× | ${f(row.probe.median, prev.probe.median)} | ${f(row.admit.median, prev.admit.median)} | ${f(row.failure.median, prev.failure.median)} | ${f(row.buildMs / row.size, prev.buildMs / prev.size)} |`;
});
const table = [
  `### ${new Date().toISOString().slice(0, 10)}: scheduler, ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${os.platform()} ${os.release()}`,
  '',
  `Command: \`npm run bench\` (bench/scheduler.ts; one process, ${NODES} nodes of which ${BUFFER} buffer nodes, ` +
    'requests of every kind admitted at one instant until the plan holds the given number of jobs; measured an hour later, when the first jobs run). ' +
    'Probe: one more request decided without booking. Admit: one more request admitted and booked (best-effort jobs in its way move), then released (not timed). ' +
    'Failure: re-planning after one node fails; repair: re-planning when it is back (each failure is undone by its repair).',
  '',
  '| planned jobs | requests to build | plan reaches | build s | probe median / p99 ms | admit median / p99 ms | failure re-plan median / p99 ms | repair median / p99 ms |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.size} | ${r.requests} | ${r.reachDays.toFixed(1)} days | ${(r.buildMs / 1000).toFixed(1)} | ${ms(r.probe.median)} / ${ms(r.probe.p99)} (${r.samples.probe}) | ${ms(r.admit.median)} / ${ms(r.admit.p99)} (${r.samples.admit}) | ${ms(r.failure.median)} / ${ms(r.failure.p99)} (${r.samples.failures}) | ${ms(r.repair.median)} / ${ms(r.repair.p99)} |`,
  ),
  '',
  ...(growth.length > 0
    ? ['Growth of the medians between sizes (n log n would be the second figure of the first column):', '', '| sizes | n / n log n | probe | admit | failure re-plan | build per job |', '|---|---|---|---|---|---|', ...growth, '']
    : []),
].join('\n');
console.log(table);
if (process.argv.includes('--write')) fs.appendFileSync('docs/benchmarks.md', `\n${table}`);
