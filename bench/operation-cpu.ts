/**
 * `npm run bench:operations`: the server's CPU for one SOAP operation, thread by thread. A
 * server (as `npm start` runs it, signing with an ECDSA P-256 demo PKI, a 4,096-node cluster,
 * one document thread where two cores) takes BENCH_OPERATIONS (default 1,000) of each
 * operation from 8 concurrent clients: InitiateNegotiation, Negotiate with a Solicited offer,
 * CreateAgreement accepting its counter-offer, and a plain CreateAgreement. Each thread's CPU
 * is read from /proc/PID/task before and after (Linux only), so the figures are the work an
 * operation costs, apart from how busy the machine was while it waited; of five rounds the
 * first warms up and the least of the others is shown. Prints a Markdown table; `--write`
 * puts it in docs/benchmarks.md in place of the last.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WsagClient } from '../src/client/wsag-client.js';
import { createDemoPki } from '../src/crypto/demo-pki.js';
import { acceptingOffer, negotiationOffer } from '../src/xml/accepting-offer.js';
import { oneNodeJobOffer } from './job-offer.js';
import { machineHeading, publish } from './report.js';
import { nodeFlagsPrefix, startProcess } from './server-process.js';

const perRound = Number(process.env.BENCH_OPERATIONS ?? 1000);
const clients = 8;
const rounds = 5;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bench-operations-'));
const pki = path.join(work, 'pki');
await createDemoPki({ dir: pki, force: false, keyType: 'ec' });
const server = await startProcess(fs.mkdtempSync(path.join(work, 'data-')), {
  WSAG_CLUSTER_NODES: '4096',
  WSAG_EXECUTOR: 'none',
  WSAG_SIGN_AGREEMENTS: 'on',
  WSAG_TLS_CERT: path.join(pki, 'server.pem'),
  WSAG_TLS_KEY: path.join(pki, 'server.key'),
  WSAG_CA_FILE: path.join(pki, 'ca.pem'),
});
const pid = server.child.pid as number;

/** CPU milliseconds (user + system) of each of the server's threads, by thread id. */
function threadCpu(): Map<number, number> {
  const ticks = 1000 / 100; // USER_HZ is 100 on Linux
  return new Map(
    fs.readdirSync(`/proc/${pid}/task`).map((task) => {
      const fields = fs
        .readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ');
      return [Number(task), (Number(fields[11]) + Number(fields[12])) * ticks] as const;
    }),
  );
}

/** `run(i)` for i below `count`, from `clients` concurrent callers. */
async function concurrently(count: number, run: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) await run(next++);
    }),
  );
}

interface Cost {
  total: number;
  loop: number;
  documents: number;
}
const least = new Map<string, Cost>();

/** Times one operation's batch: CPU an operation, all threads, the event loop's, and the busiest other thread's (the document thread). */
async function measure(name: string, round: number, run: (i: number) => Promise<void>): Promise<void> {
  const before = threadCpu();
  await concurrently(perRound, run);
  const after = threadCpu();
  const used = [...after].map(([tid, ms]) => [tid, (ms - (before.get(tid) ?? 0)) / perRound] as const);
  const total = used.reduce((sum, [, ms]) => sum + ms, 0);
  const loop = used.find(([tid]) => tid === pid)?.[1] ?? 0;
  const documents = Math.max(0, ...used.filter(([tid]) => tid !== pid).map(([, ms]) => ms));
  if (round === 0) return;
  const seen = least.get(name);
  least.set(name, {
    total: Math.min(seen?.total ?? Infinity, total),
    loop: Math.min(seen?.loop ?? Infinity, loop),
    documents: Math.min(seen?.documents ?? Infinity, documents),
  });
}

try {
  const client = new WsagClient(server.url);
  const offer = await oneNodeJobOffer(client);
  const solicited = negotiationOffer(offer, { counterOfferTo: 'deadline-job-v1', state: 'Solicited' });
  for (let round = 0; round < rounds; round++) {
    const negotiations: string[] = [];
    const counterOffers: string[] = [];
    await measure('InitiateNegotiation', round, async (i) => {
      negotiations[i] = (await client.initiateNegotiation()).negotiationId;
    });
    await measure('Negotiate, a Solicited offer (answered Acceptable, capacity held)', round, async (i) => {
      const [counterOffer] = await client.negotiate(negotiations[i] as string, [solicited]);
      counterOffers[i] = (counterOffer as { xml: string }).xml;
    });
    const accepting = counterOffers.map((xml) => acceptingOffer(xml));
    await measure('CreateAgreement accepting the counter-offer', round, async (i) => {
      await client.createAgreement(accepting[i] as string);
    });
    await measure('CreateAgreement', round, async () => {
      await client.createAgreement(offer);
    });
  }
  const rows = [...least].map(
    ([name, cost]) =>
      `| ${name} | ${cost.total.toFixed(2)} | ${cost.loop.toFixed(2)} | ${cost.documents.toFixed(2)} | ${(cost.total - cost.loop - cost.documents).toFixed(2)} |`,
  );
  publish(
    [
      machineHeading('server CPU an operation'),
      '',
      `Command: \`${nodeFlagsPrefix()}npm run bench:operations\` (${perRound} of each operation a round from ${clients} concurrent clients, the least of ${rounds - 1} rounds after one to warm up; each thread's CPU from /proc/PID/task; every agreement signed with the demo PKI's ECDSA P-256 key, a 4096-node cluster, SQLite).`,
      '',
      '| operation | server CPU ms | event loop ms | document thread ms | other threads ms |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
} finally {
  server.child.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
}
