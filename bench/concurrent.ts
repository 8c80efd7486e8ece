/**
 * `npm run bench:concurrent`: CreateAgreement under concurrent load, measured by autocannon
 * (64 connections by default), against real server processes (`npm start`) signing every
 * agreement with the demo PKI's key: SQLite (WAL, synchronous=FULL), and PostgreSQL with one
 * and with three instances (each instance gets a third of the connections; the figures are
 * the sum of the three throughputs and the worst of their latencies). Beside them, the same
 * run's floors: a bare node:http server answering the same request, and SQLite fsync'd commits
 * per second. `--targets sqlite,pg1,pg3`, `--seconds N`, `--connections N`, `--key-type ec|rsa`
 * (the demo PKI's key, ECDSA P-256 by default as for every new demo PKI); `--write`
 * appends the table to docs/benchmarks.md.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { WsagClient } from '../src/client/wsag-client.js';
import { createDemoPki } from '../src/crypto/demo-pki.js';
import { ns } from '../src/xml/namespaces.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { machineHeading, publish } from './report.js';
import { rssMiB, startProcess } from './server-process.js';

const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] as string) : fallback;
};
const seconds = Number(option('seconds', '10'));
const connections = Number(option('connections', '64'));
const targets = option('targets', 'sqlite,pg1,pg3').split(',');
const keyType = option('key-type', 'ec') as 'rsa' | 'ec';
const CLUSTER_NODES = 4096;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bench-concurrent-'));
const pki = path.join(work, 'pki');
await createDemoPki({ dir: pki, force: false, keyType });
const serverEnv = (extra: Record<string, string> = {}) => ({
  WSAG_CLUSTER_NODES: String(CLUSTER_NODES), WSAG_EXECUTOR: 'none', WSAG_SIGN_AGREEMENTS: 'on',
  WSAG_TLS_CERT: path.join(pki, 'server.pem'), WSAG_TLS_KEY: path.join(pki, 'server.key'), WSAG_CA_FILE: path.join(pki, 'ca.pem'), ...extra,
});
let dirs = 0;
const dataDir = () => fs.mkdtempSync(path.join(work, `data-${dirs++}-`));

/** One CreateAgreement request: a one-node deadline job, as a broker places a workflow's tasks. */
async function createRequest(url: string): Promise<string> {
  const template = (await new WsagClient(url).templates()).find((t) => t.includes('deadline-job-v1')) as string;
  const offer = offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]);
  return `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${offer}</wsag:CreateAgreementInput></soap:Body></soap:Envelope>`;
}

interface Load { requests: number; ok: number; errors: number; perSecond: number; p50: number; p99: number }

/** autocannon against each URL at once, the connections split between them. */
async function load(urls: string[], body: string, path = '/wsag/AgreementFactory', duration = seconds): Promise<Load> {
  const results = await Promise.all(urls.map((url, i) => autocannon({
    url: url + path, method: 'POST', body, duration,
    connections: Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0),
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${ns.wsag}/AgreementFactory/CreateAgreementRequest"` },
  })));
  const sum = (f: (r: autocannon.Result) => number) => results.reduce((s, r) => s + f(r), 0);
  const ok = sum((r) => r['2xx']);
  return {
    requests: sum((r) => r.requests.total),
    ok,
    errors: sum((r) => r.non2xx + r.errors + r.timeouts),
    perSecond: ok / duration,
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
  };
}

/** Floor 1: a bare node:http server that reads the same request and answers a 2 KB response. */
async function bareHttp(body: string): Promise<Load> {
  const answer = 'x'.repeat(2048);
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/xml' }).end(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await load([`http://127.0.0.1:${(server.address() as AddressInfo).port}`], body, '/', Math.min(seconds, 5));
  } finally {
    server.close();
  }
}

/** Floor 2: fsync'd SQLite commits per second (WAL, synchronous=FULL), one small row each. */
function sqliteCommits(): number {
  const db = new Database(path.join(work, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < 3000) {
    insert.run('x'.repeat(200));
    n++;
  }
  db.close();
  return n / ((performance.now() - started) / 1000);
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((c) => new Promise((resolve) => {
    c.once('exit', resolve);
    c.kill('SIGTERM');
  })));
}

async function measureTarget(target: string, pg: TestPostgres | undefined): Promise<{ label: string; result: Load; rss: number[] }> {
  const instances = target === 'sqlite' ? 1 : Number(target.slice(2));
  const env = target === 'sqlite' ? serverEnv() : serverEnv({ WSAG_DATABASE_URL: (pg as TestPostgres).url });
  const started = [];
  for (let i = 0; i < instances; i++) started.push(await startProcess(dataDir(), env)); // the first leads
  const urls = started.map((s) => s.url);
  try {
    const body = await createRequest(urls[0] as string);
    await load(urls, body, undefined, 2); // warm up
    const result = await load(urls, body);
    const label = target === 'sqlite' ? 'SQLite, one server' : `PostgreSQL, ${instances === 1 ? 'one instance' : `${instances} instances (one leader, ${instances - 1} forwarding)`}`;
    return { label, result, rss: started.map((s) => rssMiB(s.child.pid as number)) };
  } finally {
    await stopAll(started.map((s) => s.child));
  }
}

const pg = targets.some((t) => t.startsWith('pg')) ? await startPostgres({ durable: true }) : undefined;
try {
  const body = await (async () => {
    const probe = await startProcess(dataDir(), serverEnv());
    try {
      return await createRequest(probe.url);
    } finally {
      await stopAll([probe.child]);
    }
  })();
  const floorHttp = await bareHttp(body);
  const floorCommits = sqliteCommits();
  const rows: string[] = [];
  for (const target of targets) {
    const { label, result, rss } = await measureTarget(target, pg);
    rows.push(`| ${label} | ${result.ok} | ${result.errors} | ${result.perSecond.toFixed(0)} | ${result.p50.toFixed(0)} | ${result.p99.toFixed(0)} | ${(result.perSecond / floorHttp.perSecond).toFixed(4)} | ${(result.perSecond / floorCommits).toFixed(3)} | ${rss.join(', ')} |`);
    console.error(rows.at(-1));
  }
  publish([
    machineHeading('CreateAgreement under concurrent load'),
    '',
    `Command: \`npm run bench:concurrent -- --seconds ${seconds} --connections ${connections} --targets ${targets.join(',')} --key-type ${keyType}\` (autocannon, ${connections} connections, ${seconds} s after a 2 s warm-up, a ${CLUSTER_NODES}-node cluster, every agreement signed with the demo PKI's ${keyType === 'ec' ? 'ECDSA P-256' : 'RSA 2048'} key; PostgreSQL ${pg ? 'with fsync and synchronous_commit on, on the same machine' : 'not run'}). The load generator runs on the same two cores.`,
    '',
    `Floors in the same run: a bare node:http server answering the same request, ${floorHttp.perSecond.toFixed(0)} requests/s (p99 ${floorHttp.p99.toFixed(0)} ms); SQLite fsync'd commits, ${floorCommits.toFixed(0)}/s.`,
    '',
    '| server | agreements created | errors | agreements/s | p50 ms | p99 ms | ÷ bare HTTP | ÷ SQLite commits | RSS MiB after |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'));
} finally {
  await pg?.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
