/**
 * `npm run bench`: end-to-end latency of the SOAP operations (agreements and negotiation) against a real
 * server process setup (SQLite on disk, every commit synced before its answer), sequential requests from one
 * client on loopback. Prints a Markdown table; `--write` puts it in docs/benchmarks.md in place of the last.
 */
import fs from 'node:fs';
import os from 'node:os';
import { oneNodeJobOffer } from './job-offer.js';
import { machineHeading, publish, quantiles } from './report.js';
import path from 'node:path';
import { pino } from 'pino';
import { WsagClient } from '../src/client/wsag-client.js';
import { loadConfig } from '../src/engine/configuration/config.js';
import { startServer } from '../src/server.js';
import { acceptingOffer, negotiationOffer } from '../src/xml/accepting-offer.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 500);
/** A cluster of realistic size with room for every agreement the rounds create: admission runs the planning scheduler over its nodes. */
const CLUSTER_NODES = 4096;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bench-'));
const server = await startServer(
  // No run time: the measured requests alone, not hundreds of demo jobs starting half a minute in.
  loadConfig(
    {},
    {
      port: 0,
      dataDir,
      templatesDir: path.resolve('templates'),
      clusterNodes: CLUSTER_NODES,
      logLevel: 'silent',
      executor: 'none',
    },
  ),
  { logger: pino({ level: 'silent' }) },
);
const client = new WsagClient(server.url);
const offer = await oneNodeJobOffer(client);

async function measure(label: string, op: (i: number) => Promise<unknown>): Promise<string> {
  const warmUp = 20;
  for (let i = 0; i < warmUp; i++) await op(i);
  const times: number[] = [];
  const started = performance.now();
  // Every measurement calls op with 0, 1, 2, ...: row k can use what row k-1 made for call i.
  for (let i = warmUp; i < warmUp + rounds; i++) {
    const t0 = performance.now();
    await op(i);
    times.push(performance.now() - t0);
  }
  const total = performance.now() - started;
  const { median, p99 } = quantiles(times);
  return `| ${label} | ${rounds} | ${median.toFixed(2)} | ${p99.toFixed(2)} | ${((rounds / total) * 1000).toFixed(0)} |`;
}

/**
 * A late round of a long negotiation: `count` negotiations each answer `before` rounds of
 * `perRound` Advisory offers (each answered with 3 slots), then the next round is timed. What
 * a round costs beyond the first is what the negotiation carries from earlier rounds.
 */
async function lateRound(before: number, perRound: number, count: number): Promise<string> {
  const offers = Array.from({ length: perRound }, () => advisory);
  const times: number[] = [];
  const started = performance.now();
  for (let n = 0; n < count; n++) {
    const { negotiationId } = await client.initiateNegotiation();
    for (let round = 0; round < before; round++) await client.negotiate(negotiationId, offers);
    const t0 = performance.now();
    await client.negotiate(negotiationId, offers);
    times.push(performance.now() - t0);
  }
  const { median, p99 } = quantiles(times);
  return `| Negotiate, Advisory, round ${before + 1} (${perRound} offers a round, ${before * perRound * 4} offers before it) | ${count} | ${median.toFixed(2)} | ${p99.toFixed(2)} | ${((count / (performance.now() - started)) * 1000).toFixed(1)} negotiations |`;
}

const ids: string[] = [];
const negotiations: string[] = [];
const committed: string[] = [];
const advisory = negotiationOffer(offer, { counterOfferTo: 'deadline-job-v1', state: 'Advisory' });
const solicited = negotiationOffer(offer, { counterOfferTo: 'deadline-job-v1', state: 'Solicited' });
const rows = [
  await measure('CreateAgreement (validate, constraints, admit, persist)', async () =>
    ids.push((await client.createAgreement(offer)).agreementId),
  ),
  await measure('GetResourceProperty wsag:Template', () => client.templates()),
  await measure('AgreementState document', (i) => client.state(ids[i % ids.length] as string)),
  await measure('Terminate', () => client.terminate(ids.shift() as string)),
  await measure('InitiateNegotiation', async () =>
    negotiations.push((await client.initiateNegotiation()).negotiationId),
  ),
  await measure('Negotiate, Advisory (3 start slots, nothing held)', (i) =>
    client.negotiate(negotiations[i] as string, [advisory]),
  ),
  await measure('Negotiate, Solicited (Acceptable offer, hold persisted)', async (i) => {
    const [answer] = await client.negotiate(negotiations[i] as string, [solicited]);
    committed.push(answer?.xml as string);
  }),
  await measure('CreateAgreement accepting the Acceptable offer', (i) =>
    client.createAgreement(acceptingOffer(committed[i] as string)),
  ),
  await lateRound(18, 8, 30),
];
await server.close();
fs.rmSync(dataDir, { recursive: true, force: true });

const table = [
  machineHeading(undefined),
  '',
  `Command: \`npm run bench\` (sequential requests, one client, loopback, SQLite WAL, every commit synced before its answer, a ${CLUSTER_NODES}-node cluster).`,
  '',
  '| operation | requests | median ms | p99 ms | requests/s |',
  '|---|---|---|---|---|',
  ...rows,
  '',
].join('\n');
publish(table);
