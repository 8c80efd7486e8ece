/**
 * `npm run bench:held`: does the cost of a request grow with the agreements the server
 * holds? For 1,000, 10,000 and 100,000 stored agreements (ended ones, written
 * straight into the SQLite store of a data directory), `npm start` runs as its own process
 * (SQLite WAL, every commit synced before its answer, 4,096 nodes, no run time) and is measured: start-up time,
 * sequential CreateAgreement (one client), CreateAgreement from 16 concurrent clients while
 * two more read the largest page of GET /api/agreements over and over, /healthz meanwhile,
 * and the server's RSS.
 * Prints a Markdown table; `--write` puts it in docs/benchmarks.md in place of the last.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WsagClient } from '../src/client/wsag-client.js';
import { oneNodeJobOffer } from './job-offer.js';
import { nodeFlagsPrefix, rssMiB, startProcess } from './server-process.js';
import { stopProcess, storeClones } from './stored-clones.js';
import { machineHeading, publish, quantiles } from './report.js';

const counts = (process.env.BENCH_HELD ?? '1000,10000,100000').split(',').map(Number);
const sequential = Number(process.env.BENCH_ROUNDS ?? 300);
const concurrent = { clients: 16, each: 40 };
const heldEnv = { WSAG_CLUSTER_NODES: '4096', WSAG_EXECUTOR: 'none' };

/** One real agreement, made by the server, cloned `count` times into the data directory's store as ended agreements. */
async function fill(dataDir: string, count: number): Promise<void> {
  const { child, url } = await startProcess(dataDir, heldEnv);
  const client = new WsagClient(url);
  const { agreementId } = await client.createAgreement(await oneNodeJobOffer(client));
  await client.terminate(agreementId);
  await stopProcess(child);
  const start = Date.now() - count * 60_000;
  await storeClones(dataDir, agreementId, count, (model, i) => {
    const createdAt = new Date(start + i * 60_000);
    return {
      ...model,
      id: `held-${String(i).padStart(7, '0')}`,
      state: i % 4 === 0 ? 'Terminated' : 'Complete',
      createdAt,
      updatedAt: createdAt,
    };
  });
}

async function timed(op: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await op();
  return performance.now() - t0;
}

const rows: string[] = [];
for (const held of counts) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-held-'));
  await fill(dataDir, held);
  const { child, url, startMs } = await startProcess(dataDir, heldEnv);
  const client = new WsagClient(url);
  const offer = await oneNodeJobOffer(client);
  for (let i = 0; i < 20; i++) await client.createAgreement(offer); // warm-up
  const seq: number[] = [];
  const seqStarted = performance.now();
  for (let i = 0; i < sequential; i++) seq.push(await timed(() => client.createAgreement(offer)));
  const seqRate = (sequential / (performance.now() - seqStarted)) * 1000;

  // 16 clients create while two page through the listing and a probe asks /healthz every 20 ms.
  let running = true;
  const health: number[] = [];
  const probe = (async () => {
    while (running) {
      health.push(await timed(() => fetch(`${url}/healthz`).then((r) => r.arrayBuffer())));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const listers = [0, 1].map(async () => {
    while (running)
      await fetch(`${url}/api/agreements?limit=1000`).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
  });
  const conc: number[] = [];
  const concStarted = performance.now();
  await Promise.all(
    Array.from({ length: concurrent.clients }, async () => {
      for (let i = 0; i < concurrent.each; i++) conc.push(await timed(() => client.createAgreement(offer)));
    }),
  );
  const concRate = (conc.length / (performance.now() - concStarted)) * 1000;
  running = false;
  await Promise.all([probe, ...listers]);
  const rss = rssMiB(child.pid as number);
  child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });

  const s = quantiles(seq);
  const c = quantiles(conc);
  const h = quantiles(health);
  rows.push(
    `| ${held.toLocaleString('en')} | ${(startMs / 1000).toFixed(1)} | ${seqRate.toFixed(0)} | ${s.median.toFixed(1)} | ${s.p99.toFixed(1)} | ${concRate.toFixed(0)} | ${c.p99.toFixed(1)} | ${h.p99.toFixed(1)} | ${rss} |`,
  );
  console.error(rows.at(-1));
}

publish(
  [
    machineHeading('agreements held'),
    '',
    `Command: \`${nodeFlagsPrefix()}npm run bench:held\` (\`npm start\` as its own process: SQLite WAL, every commit synced before its answer, 4,096 nodes, no run time; the agreements held are ended ones in its store; ${sequential} sequential CreateAgreement from one client, then ${concurrent.clients} clients × ${concurrent.each} while two clients read GET /api/agreements?limit=1000 over and over and /healthz is asked every 20 ms).`,
    '',
    '| agreements held | start-up s | sequential creates/s | p50 ms | p99 ms | 16 clients creates/s | p99 ms | /healthz p99 ms | RSS MiB |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
