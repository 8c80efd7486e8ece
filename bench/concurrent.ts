/**
 * `npm run bench:concurrent`: CreateAgreement under concurrent load, measured by autocannon
 * (64 connections by default), against real server processes (`npm start`) signing every
 * agreement with the demo PKI's key: SQLite (WAL, every commit synced before its answer), and PostgreSQL with one
 * and with three instances (each instance gets a third of the connections; the figures are
 * the sum of the three throughputs and the worst of their latencies). Beside them, the same
 * run's floors: a bare node:http server answering the same request, and SQLite fsync'd commits
 * per second. `--targets sqlite,pg1,pg3`, `--seconds N`, `--connections N`, `--key-type ec|rsa`
 * (the demo PKI's key, ECDSA P-256 by default as for every new demo PKI); `--operation
 * negotiate` measures negotiated agreements instead: each connection repeats
 * InitiateNegotiation, Negotiate with a Solicited offer (the server holds the capacity and
 * answers Acceptable) and CreateAgreement accepting that offer. `--rate N` offers creates at
 * an even N a second instead of as fast as the server answers (bench/fixed-rate.ts), for the
 * latency at a given load rather than at saturation. `--warm-up N`: seconds of the same load
 * before the measured run (default 2, 5 at a rate; a server just started compiles its code
 * for several seconds more, so steady-state figures take 10). `--write` puts the table in place of the last in
 * docs/benchmarks.md.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { XmlElement } from 'libxml2-wasm';
import Database from 'better-sqlite3';
import { plainEnvelope } from '../src/client/soap-requests.js';
import { initiateNegotiationInput } from '../src/xml/negotiation-input.js';
import { WsagClient } from '../src/client/wsag-client.js';
import { createDemoPki } from '../src/crypto/demo-pki.js';
import { DocumentThreads } from '../src/workers/document-threads.js';
import { acceptingOffer } from '../src/xml/accepting-offer.js';
import { withXml } from '../src/xml/libxml.js';
import { ns } from '../src/xml/namespaces.js';
import { one } from '../src/xml/xpath.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { loadAtRate } from './fixed-rate.js';
import { createBody, oneNodeJobOffer, solicitedNegotiateInput } from './job-offer.js';
import { machineHeading, publish } from './report.js';
import { cpuSeconds, machineCpu, nodeFlagsPrefix, rssMiB, startProcess, storageWriteBytes } from './server-process.js';
import { scrapeStages, stagesTable } from './server-metrics.js';

const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] as string) : fallback;
};
const seconds = Number(option('seconds', '10'));
const connections = Number(option('connections', '64'));
const targets = option('targets', 'sqlite,pg1,pg3').split(',');
const keyType = option('key-type', 'ec') as 'rsa' | 'ec';
const operation = option('operation', 'create') as 'create' | 'negotiate';
/** Worker threads reading offers and signing (WSAG_DOCUMENT_THREADS); unset: the server's default for the machine. */
const documentThreads = option('document-threads', '');
/** Creates due per second, all targets together (0: as many as the server answers). */
const rate = Number(option('rate', '0'));
if (rate > 0 && operation !== 'create')
  throw new Error('--rate measures CreateAgreement only; leave out --operation negotiate');
const CLUSTER_NODES = 4096;
/** Seconds of the same load before the measured run (compilation, the heap growing): 5 at a rate, else 2 unless `--warm-up N`. */
const warmUp = Number(option('warm-up', rate > 0 ? '5' : '2'));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bench-concurrent-'));
const pki = path.join(work, 'pki');
await createDemoPki({ dir: pki, force: false, keyType });
const serverEnv = (extra: Record<string, string> = {}) => ({
  WSAG_CLUSTER_NODES: String(CLUSTER_NODES),
  WSAG_EXECUTOR: 'none',
  WSAG_SIGN_AGREEMENTS: 'on',
  ...(documentThreads ? { WSAG_DOCUMENT_THREADS: documentThreads } : {}),
  WSAG_TLS_CERT: path.join(pki, 'server.pem'),
  WSAG_TLS_KEY: path.join(pki, 'server.key'),
  WSAG_CA_FILE: path.join(pki, 'ca.pem'),
  ...extra,
});
let dirs = 0;
const dataDir = () => fs.mkdtempSync(path.join(work, `data-${dirs++}-`));

const jobOffer = (url: string) => oneNodeJobOffer(new WsagClient(url));
const soapHeaders = (action: string) => ({ 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` });
const createAction = `${ns.wsag}/AgreementFactory/CreateAgreementRequest`;

interface Load {
  requests: number;
  ok: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** At a fixed rate: the slowest answer, and how many requests waited for a free connection. */
  atRate?: { max: number; waited: number };
}

/** The connections of the i-th of `targets` URLs loaded at once: the run's, split as evenly as they go. */
const connectionsOf = (i: number, targets: number) =>
  Math.floor(connections / targets) + (i < connections % targets ? 1 : 0);

/**
 * autocannon against each URL at once, the connections split between them: one request
 * over and over, or a sequence of requests (`done` counts the sequences completed).
 */
async function load(
  urls: string[],
  work: { body: string; path?: string } | { requests: autocannon.Request[]; done: () => number },
  duration = seconds,
): Promise<Load> {
  const results = await Promise.all(
    urls.map((url, i) =>
      autocannon({
        url: url + ('path' in work && work.path ? work.path : '/wsag/AgreementFactory'),
        method: 'POST',
        duration,
        connections: connectionsOf(i, urls.length),
        ...('requests' in work ? { requests: work.requests } : { body: work.body, headers: soapHeaders(createAction) }),
      }),
    ),
  );
  const sum = (f: (r: autocannon.Result) => number) => results.reduce((s, r) => s + f(r), 0);
  const ok = 'done' in work ? work.done() : sum((r) => r['2xx']);
  return {
    requests: sum((r) => r.requests.total),
    ok,
    errors: sum((r) => r.non2xx + r.errors + r.timeouts),
    perSecond: ok / duration,
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
  };
}

/** `--rate`: the creates due at an even rate, split between the URLs as the connections are. */
async function loadAtFixedRate(urls: string[], body: string, duration = seconds): Promise<Load> {
  const results = await Promise.all(
    urls.map((url, i) =>
      loadAtRate(
        { url: `${url}/wsag/AgreementFactory`, body, headers: soapHeaders(createAction) },
        { rate: rate / urls.length, connections: connectionsOf(i, urls.length), seconds: duration },
      ),
    ),
  );
  const sum = (f: (r: (typeof results)[number]) => number) => results.reduce((s, r) => s + f(r), 0);
  const worst = (f: (r: (typeof results)[number]) => number) => Math.max(...results.map(f));
  return {
    requests: sum((r) => r.due),
    ok: sum((r) => r.ok),
    errors: sum((r) => r.errors),
    perSecond: sum((r) => r.perSecond),
    p50: worst((r) => r.p50),
    p99: worst((r) => r.p99),
    atRate: { max: worst((r) => r.max), waited: sum((r) => r.waited) },
  };
}

/**
 * Negotiated agreements: each connection initiates a negotiation, sends a Solicited offer
 * (the server holds the capacity and answers with an Acceptable counter-offer) and creates
 * the agreement accepting it, then starts again. Counts the agreements created.
 */
function negotiatedAgreements(offer: string): { requests: autocannon.Request[]; done: () => number } {
  let created = 0;
  type Context = { negotiationId?: string; accepting?: string };
  const solicited = solicitedNegotiateInput(offer);
  const negAction = (port: string, message: string) => `${ns.wsagNeg}/${port}/${message}`;
  return {
    done: () => created,
    requests: [
      {
        method: 'POST',
        path: '/wsag/NegotiationFactory',
        body: plainEnvelope(initiateNegotiationInput({}, '')),
        headers: soapHeaders(negAction('NegotiationFactory', 'InitiateNegotiationRequest')),
        onResponse: (_status, body, context: Context) => {
          context.negotiationId = /NegotiationId[^>]*>([^<]+)</.exec(body)?.[1];
        },
      },
      {
        method: 'POST',
        path: '/wsag/Negotiation',
        headers: soapHeaders(negAction('Negotiation', 'NegotiateRequest')),
        setupRequest: (request, context: Context) => ({
          ...request,
          body: plainEnvelope(solicited, { parameter: 'NegotiationId', id: context.negotiationId as string }),
        }),
        onResponse: (status, body, context: Context) => {
          // The accepting offer is built here, from the answer as parsed (as a broker would).
          context.accepting =
            status === 200
              ? withXml(body, 'NegotiateOutput', (doc) =>
                  acceptingOffer(one(doc.root, '//wsag-neg:NegotiationCounterOffer') as XmlElement),
                )
              : undefined;
        },
      },
      {
        method: 'POST',
        path: '/wsag/AgreementFactory',
        headers: soapHeaders(createAction),
        // Without an Acceptable offer to accept, the sequence starts again.
        setupRequest: (request, context: Context) =>
          context.accepting
            ? { ...request, body: createBody(context.accepting) }
            : (undefined as unknown as autocannon.Request),
        onResponse: (status) => {
          if (status === 200) created++;
        },
      },
    ],
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
    return await load(
      [`http://127.0.0.1:${(server.address() as AddressInfo).port}`],
      { body, path: '/' },
      Math.min(seconds, 5),
    );
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
  await Promise.all(
    children.map(
      (c) =>
        new Promise((resolve) => {
          c.once('exit', resolve);
          c.kill('SIGTERM');
        }),
    ),
  );
}

async function measureTarget(
  target: string,
  pg: TestPostgres | undefined,
): Promise<{
  label: string;
  result: Load;
  cpuMs: number;
  generatorMs: number;
  machine: { msPerAgreement: number; coresBusy: number };
  writtenKiB: number | undefined;
  rss: number[];
  stages: string[];
}> {
  const instances = target === 'sqlite' ? 1 : Number(target.slice(2));
  const env = target === 'sqlite' ? serverEnv() : serverEnv({ WSAG_DATABASE_URL: (pg as TestPostgres).url });
  const started = [];
  for (let i = 0; i < instances; i++) started.push(await startProcess(dataDir(), env)); // the first leads
  const urls = started.map((s) => s.url);
  try {
    const offer = await jobOffer(urls[0] as string);
    const work = () => (operation === 'negotiate' ? negotiatedAgreements(offer) : { body: createBody(offer) });
    // At a rate, warmed up as measured and for longer: a saturating warm-up leaves a backlog
    // to the run, and at 80 % of the cores a stall of the first seconds (compilation, the
    // heap growing) takes seconds to drain.
    if (rate > 0) await loadAtFixedRate(urls, createBody(offer), warmUp);
    else await load(urls, work(), warmUp);
    const pids = started.map((s) => s.child.pid as number);
    // What the servers' processes used or wrote between two readings, all of them together.
    const serversSince = (read: (pid: number) => number, before: number[]) =>
      pids.reduce((sum, pid, i) => sum + read(pid) - (before[i] as number), 0);
    const cpuBefore = pids.map(cpuSeconds);
    const writtenBefore = pids.map(storageWriteBytes);
    const stagesBefore = await scrapeStages(urls);
    const generatorBefore = process.cpuUsage();
    const machineBefore = machineCpu();
    const result = rate > 0 ? await loadAtFixedRate(urls, createBody(offer)) : await load(urls, work());
    const generator = process.cpuUsage(generatorBefore);
    const written = serversSince(storageWriteBytes, writtenBefore);
    const machineAfter = machineCpu();
    const stages = stagesTable(stagesBefore, await scrapeStages(urls));
    const perAgreement = (total: number) => total / Math.max(result.ok, 1);
    // Servers' CPU per agreement: steadier than the rate when the machine is noisy, and what the rate follows.
    const cpuMs = perAgreement(1000 * serversSince(cpuSeconds, cpuBefore));
    const label =
      target === 'sqlite'
        ? 'SQLite, one server'
        : `PostgreSQL, ${instances === 1 ? 'one instance' : `${instances} instances (one leader, ${instances - 1} forwarding)`}`;
    // The load generator's own CPU (it shares the cores): what it leaves the servers.
    const generatorMs = perAgreement((generator.user + generator.system) / 1000);
    // All of it (PostgreSQL's processes and the kernel's threads too): how close the run came to the machine's cores.
    const machineBusy = machineAfter.busySeconds - machineBefore.busySeconds;
    const machine = {
      msPerAgreement: perAgreement(1000 * machineBusy),
      coresBusy: machineBusy / ((machineAfter.at - machineBefore.at) / 1000),
    };
    // With PostgreSQL the database's own processes write the data: only SQLite's figure is the store's.
    const writtenKiB = target === 'sqlite' ? perAgreement(written / 1024) : undefined;
    return { label, result, cpuMs, generatorMs, machine, writtenKiB, rss: pids.map(rssMiB), stages };
  } finally {
    await stopAll(started.map((s) => s.child));
  }
}

const pg = targets.some((t) => t.startsWith('pg')) ? await startPostgres({ durable: true }) : undefined;
try {
  const body = await (async () => {
    const probe = await startProcess(dataDir(), serverEnv());
    try {
      return createBody(await jobOffer(probe.url));
    } finally {
      await stopAll([probe.child]);
    }
  })();
  const floorHttp = await bareHttp(body);
  const floorCommits = sqliteCommits();
  const rows: string[] = [];
  const atRate: string[] = [];
  const stageTables: string[] = [];
  for (const target of targets) {
    const { label, result, cpuMs, generatorMs, machine, writtenKiB, rss, stages } = await measureTarget(target, pg);
    stageTables.push(
      '',
      `Where the time went, ${label} (means over the run, from the servers' /metrics):`,
      '',
      ...stages,
    );
    rows.push(
      `| ${label} | ${result.ok} | ${result.errors} | ${result.perSecond.toFixed(0)} | ${result.p50.toFixed(0)} | ${result.p99.toFixed(0)} | ${cpuMs.toFixed(2)} | ${generatorMs.toFixed(2)} | ${machine.msPerAgreement.toFixed(2)} | ${machine.coresBusy.toFixed(2)} of ${os.availableParallelism()} | ${writtenKiB === undefined ? '—' : writtenKiB.toFixed(0)} | ${(result.perSecond / floorHttp.perSecond).toFixed(4)} | ${(result.perSecond / floorCommits).toFixed(3)} | ${rss.join(', ')} |`,
    );
    console.error(rows.at(-1));
    if (result.atRate)
      atRate.push(
        `${label}: slowest answer ${result.atRate.max.toFixed(0)} ms; ${result.atRate.waited} of ${result.requests} requests found every connection busy and waited.`,
      );
    if (result.errors > 0)
      console.error(
        `warning: ${label}: ${result.errors} requests were not answered 2xx (refused, or failed); the figures are not of agreements alone`,
      );
  }
  publish(
    [
      machineHeading(
        operation === 'negotiate'
          ? 'Negotiated agreements under concurrent load'
          : 'CreateAgreement under concurrent load',
      ),
      '',
      `Command: \`${process.env.WSAG_CPU_SCHEDULING ? `WSAG_CPU_SCHEDULING=${process.env.WSAG_CPU_SCHEDULING} ` : ''}${nodeFlagsPrefix()}npm run bench:concurrent -- --seconds ${seconds} --connections ${connections} --targets ${targets.join(',')} --key-type ${keyType}${operation === 'negotiate' ? ' --operation negotiate' : ''}${documentThreads ? ` --document-threads ${documentThreads}` : ''}${rate > 0 ? ` --rate ${rate}` : ''}${process.argv.includes('--warm-up') ? ` --warm-up ${warmUp}` : ''}\` (${rate > 0 ? `creates due at an even ${rate} a second on at most ${connections} keep-alive connections (bench/fixed-rate.ts), each latency from when its request was due, a wait for a free connection included` : `autocannon, ${connections} connections`}, ${seconds} s after a ${warmUp} s warm-up${rate > 0 ? ' at the same rate' : ''}, a ${CLUSTER_NODES}-node cluster, ${documentThreads ? `${documentThreads} document threads (WSAG_DOCUMENT_THREADS), ` : `the server's default document threads (${DocumentThreads.defaultCount(os.availableParallelism())} here), `}its threads' CPU scheduling ${process.env.WSAG_CPU_SCHEDULING || 'normal'} (WSAG_CPU_SCHEDULING), ${operation === 'negotiate' ? 'each connection negotiating its agreements: InitiateNegotiation, Negotiate with a Solicited offer answered Acceptable with the capacity held, CreateAgreement accepting it (latencies are of single requests)' : 'one CreateAgreement after another'} (a one-node job of an hour, its deadline a day ahead), every agreement signed with the demo PKI's ${keyType === 'ec' ? 'ECDSA P-256' : 'RSA 2048'} key; PostgreSQL ${pg ? 'with fsync and synchronous_commit on, on the same machine, every write answered once the log is flushed' : 'not run'}). The load generator runs on the same two cores.`,
      '',
      `Floors in the same run: a bare node:http server answering the same request, ${floorHttp.perSecond.toFixed(0)} requests/s (p99 ${floorHttp.p99.toFixed(0)} ms); SQLite fsync'd commits, ${floorCommits.toFixed(0)}/s.`,
      '',
      '| server | agreements created | errors | agreements/s | p50 ms | p99 ms | server CPU ms per agreement | load generator CPU ms per agreement | machine CPU ms per agreement | cores busy | KiB written to storage per agreement | ÷ bare HTTP | ÷ SQLite commits | RSS MiB after |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      ...(atRate.length > 0 ? ['', ...atRate] : []),
      ...stageTables,
      '',
    ].join('\n'),
    `concurrent-${operation}${rate > 0 ? '-at-rate' : ''}`,
  );
} finally {
  await pg?.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
