/**
 * `npm run bench:holds`: what capacity held by negotiations costs a server that is otherwise
 * idle. A broker placing a large workflow holds hundreds of Acceptable offers at once
 * (preparatory reservations, until WSAG_HOLD_SECONDS); the expiry timer looks for holds due
 * every second. For each count (BENCH_HOLDS, default 0,1000,5000) `npm start` runs as its own
 * process (SQLite WAL, 4,096 nodes, no run time), that many negotiations each get a one-node
 * job's Solicited offer answered Acceptable (its capacity held for 300 s), and then, for 10 s
 * in which no hold expires, the server's CPU time a second and the latency of /healthz asked
 * every 20 ms are measured. Prints a Markdown table; `--write` puts it in docs/benchmarks.md in place of the last.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WsagClient } from '../src/client/wsag-client.js';
import { negotiationOffer } from '../src/xml/accepting-offer.js';
import { oneNodeJobOffer } from './job-offer.js';
import { machineHeading, publish, quantiles } from './report.js';
import { cpuSeconds, nodeFlagsPrefix, rssMiB, startProcess } from './server-process.js';
import { stopProcess } from './stored-clones.js';

const counts = (process.env.BENCH_HOLDS ?? '0,1000,5000').split(',').map(Number);
const MEASURED_SECONDS = 10;
const CLIENTS = 8;
const env = { WSAG_CLUSTER_NODES: '4096', WSAG_EXECUTOR: 'none', WSAG_HOLD_SECONDS: '300' };

interface Row {
  holds: number;
  cpuMsPerSecond: number;
  median: number;
  p99: number;
  max: number;
  rss: number;
}

async function measure(holds: number, work: string): Promise<Row> {
  const { child, url } = await startProcess(fs.mkdtempSync(path.join(work, 'data-')), env);
  try {
    const client = new WsagClient(url);
    const solicited = negotiationOffer(await oneNodeJobOffer(client), {
      counterOfferTo: 'deadline-job-v1',
      state: 'Solicited',
    });
    let made = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (made < holds) {
          made++;
          const { negotiationId } = await client.initiateNegotiation();
          const [answer] = await client.negotiate(negotiationId, [solicited]);
          if (answer?.state !== 'Acceptable')
            throw new Error(`hold ${made}: the server answered ${answer?.state ?? 'nothing'}`);
        }
      }),
    );
    // Past the first timer pass after the last hold.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const cpuBefore = cpuSeconds(child.pid as number);
    const started = performance.now();
    const latencies: number[] = [];
    while (performance.now() - started < MEASURED_SECONDS * 1000) {
      const asked = performance.now();
      const response = await fetch(`${url}/healthz`);
      await response.arrayBuffer();
      latencies.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const cpuMsPerSecond =
      ((cpuSeconds(child.pid as number) - cpuBefore) * 1000) / ((performance.now() - started) / 1000);
    const { median, p99 } = quantiles(latencies);
    return { holds, cpuMsPerSecond, median, p99, max: Math.max(...latencies), rss: rssMiB(child.pid as number) };
  } finally {
    await stopProcess(child);
  }
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bench-holds-'));
const rows: Row[] = [];
try {
  for (const holds of counts) rows.push(await measure(holds, work));
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
publish(
  [
    machineHeading('capacity held by negotiations, the server otherwise idle'),
    '',
    `Command: \`${nodeFlagsPrefix()}npm run bench:holds\` (\`npm start\` as its own process: SQLite WAL, 4,096 nodes, no run time; each hold a negotiation whose one-node job's Solicited offer was answered Acceptable, held for 300 s; then ${MEASURED_SECONDS} s in which none expires, /healthz asked every 20 ms by one client; CPU time from /proc, every thread of the server).`,
    '',
    '| live holds | server CPU ms a second | /healthz p50 ms | p99 ms | max ms | RSS MiB |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.holds} | ${r.cpuMsPerSecond.toFixed(0)} | ${r.median.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.rss} |`,
    ),
    '',
  ].join('\n'),
);
