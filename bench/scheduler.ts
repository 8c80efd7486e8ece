/**
 * `npm run bench` (with bench/create-agreement.ts) or `npm run bench:scheduler`: the
 * planning scheduler's admission latency and re-planning time (SCHEDULER.md, "Speed").
 * Plans of 1k, 10k and 100k planned jobs (a mix of deadline jobs at every level,
 * reservations, best-effort and background jobs on a 1024-node cluster with buffer nodes
 * and InfiniBand islands) are laid out directly (`synthesize`: priced by the scheduler,
 * packed from the first free nodes, restored into the plan); then, on each plan:
 * - probe: one more request decided without booking (varied kinds), many samples;
 * - admit: one more request admitted and booked (best-effort jobs in its way move), then
 *   released (not timed);
 * - failure: re-planning after one node fails (figure 3.4 with suspension and partial
 *   execution); each failure is undone by repairing the node (timed separately), a
 *   minute passes between failures.
 * Separately, plans of 1k and 10k jobs are built by admitting requests one by one (the
 * whole figure 3.4 admission, best-effort jobs giving way): the cost per request while a
 * plan grows.
 * Prints Markdown tables; `--write` puts them in docs/benchmarks.md in place of the last.
 * BENCH_SIZES=1000,10000 and BENCH_BUILD_SIZES=1000 limit the sizes.
 */
import { machineHeading, publish, quantiles } from './report.js';
import type { ClusterNode } from '../src/scheduler/model.js';
import { BUFFER, build, DAY, HOUR, MINUTE, NODES, random, request, synthesize, T0 } from './scheduler-workload.js';

const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const buildSizes = (process.env.BENCH_BUILD_SIZES ?? '1000,10000').split(',').filter(Boolean).map(Number);

function time(op: () => unknown): number {
  const t0 = performance.now();
  op();
  return performance.now() - t0;
}

interface Row {
  size: number;
  buildMs: number;
  reachDays: number;
  probe: { median: number; p99: number };
  admit: { median: number; p99: number };
  failure: { median: number; p99: number };
  repair: { median: number; p99: number };
  samples: { probe: number; admit: number; failures: number };
}

function measure(size: number): Row {
  const built = synthesize(size);
  const { pm } = built;
  const now = T0 + HOUR; // jobs planned from T0 are running
  pm.advance(now);
  const next = random(size + 1);
  const reach = built.reachDays * DAY;
  const samples = {
    probe: size >= 100_000 ? 500 : 2000,
    admit: size >= 100_000 ? 300 : 1000,
    failures: size >= 100_000 ? 10 : 30,
  };
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
    const at = now + (i + 1) * MINUTE;
    pm.advance(at);
    const node = pm.cluster.nodes[Math.floor(next() * (NODES - BUFFER))] as ClusterNode;
    failureTimes.push(time(() => pm.nodeFailed(node.id, at)));
    repairTimes.push(time(() => pm.nodeRepaired(node.id, at)));
  }
  return {
    size,
    buildMs: built.buildMs,
    reachDays: built.reachDays,
    probe,
    admit,
    failure: quantiles(failureTimes),
    repair: quantiles(repairTimes),
    samples,
  };
}

const rows: Row[] = [];
for (const size of sizes) {
  const row = measure(size);
  rows.push(row);
  console.error(`${size} planned jobs: laid out in ${(row.buildMs / 1000).toFixed(1)} s, measured`);
}
const builds = buildSizes.map((size) => {
  const built = build(size);
  console.error(`${size} planned jobs: built by admission in ${(built.buildMs / 1000).toFixed(1)} s`);
  return { size, requests: built.requests, buildMs: built.buildMs, reachDays: built.reachDays };
});

const ms = (v: number) => (v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(2) : v.toFixed(0));
const growth = rows.slice(1).map((row, i) => {
  const prev = rows[i] as Row;
  const n = row.size / prev.size;
  const nlogn = (row.size * Math.log(row.size)) / (prev.size * Math.log(prev.size));
  const f = (a: number, b: number) => `${(a / b).toFixed(1)}×`;
  return `| ${prev.size} → ${row.size} | ${n.toFixed(0)}× / ${nlogn.toFixed(1)}× | ${f(row.probe.median, prev.probe.median)} | ${f(row.admit.median, prev.admit.median)} | ${f(row.failure.median, prev.failure.median)} | ${f(row.repair.median, prev.repair.median)} |`;
});
const table = [
  machineHeading('scheduler', { withKernel: true }),
  '',
  `Command: \`npm run bench\` (bench/scheduler.ts; one process; ${NODES} nodes of which ${BUFFER} buffer nodes, 8 islands, half with InfiniBand; ` +
    'a mix of deadline jobs at every level, reservations, best-effort and background jobs, 1 to 256 nodes, 5 minutes to 4 hours). ' +
    'Plans laid out directly (priced by the scheduler, packed onto the nodes free first, restored), measured an hour after they begin, when the first jobs run. ' +
    'Probe: one more request of the same mix decided without booking. Admit: one more request admitted and booked (best-effort jobs in its way move), then released (not timed). ' +
    'Failure: re-planning after one node fails (problems re-placed, suspension, partial execution); repair: re-planning when it is back; each failure is undone by its repair, a minute apart.',
  '',
  '| planned jobs | plan reaches | laid out in s | probe median / p99 ms (samples) | admit median / p99 ms (samples) | failure re-plan median / p99 ms (samples) | repair median / p99 ms |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.size} | ${r.reachDays.toFixed(1)} days | ${(r.buildMs / 1000).toFixed(1)} | ${ms(r.probe.median)} / ${ms(r.probe.p99)} (${r.samples.probe}) | ${ms(r.admit.median)} / ${ms(r.admit.p99)} (${r.samples.admit}) | ${ms(r.failure.median)} / ${ms(r.failure.p99)} (${r.samples.failures}) | ${ms(r.repair.median)} / ${ms(r.repair.p99)} |`,
  ),
  '',
  ...(growth.length > 0
    ? [
        'Growth of the medians between sizes (for n log n the second figure of the first column):',
        '',
        '| sizes | n / n log n | probe | admit | failure re-plan | repair |',
        '|---|---|---|---|---|---|',
        ...growth,
        '',
      ]
    : []),
  ...(builds.length > 0
    ? [
        'Building a plan by admitting requests one by one at one instant (deadlines and windows spread over the plan so far; refused requests count):',
        '',
        '| planned jobs | requests | plan reaches | s | ms per request |',
        '|---|---|---|---|---|',
        ...builds.map(
          (b) =>
            `| ${b.size} | ${b.requests} | ${b.reachDays.toFixed(1)} days | ${(b.buildMs / 1000).toFixed(1)} | ${ms(b.buildMs / b.requests)} |`,
        ),
        '',
      ]
    : []),
].join('\n');
publish(table);
