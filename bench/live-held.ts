/**
 * `npm run bench:live`: a server holding many LIVE agreements ("RSS with 100,000
 * stored agreements, and a restart with 100,000 agreements, plan rebuilt, serving again
 * within 10 s"). One real one-node advance reservation is made by the server, then cloned
 * into the SQLite store as Observed agreements tiling a 4,096-node cluster (each on its own
 * node and hour, so the plan holds every one of them). `npm start` then starts on that data
 * directory as its own process and is measured: time until it serves (the plan rebuilt from
 * every stored agreement), its peak RSS until then, its RSS then, and after 2,000 more creates
 * (before the plan is listed to count its bookings), and the time of a /metrics scrape
 * (between the two), of GET /api/plan for six hours (the dashboard zoomed in) and for every
 * booking. Counts from BENCH_LIVE (default 10000,100000). Prints a Markdown table; `--write` puts it in place of the last in
 * docs/benchmarks.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WsagClient } from '../src/client/wsag-client.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { oneNodeJobOffer } from './job-offer.js';
import { machineHeading, publish } from './report.js';
import { nodeFlagsPrefix, peakRssMiB, rssMiB, startProcess } from './server-process.js';
import { stopProcess, storeClones } from './stored-clones.js';

const counts = (process.env.BENCH_LIVE ?? '10000,100000').split(',').map(Number);
const env = { WSAG_CLUSTER_NODES: '4096', WSAG_EXECUTOR: 'none', WSAG_ADMINS: 'anonymous' };
const hour = 3600_000;

const windowLocation = (end: 'StartTime' | 'EndTime') =>
  `/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:${end}`;

async function fill(dataDir: string, count: number): Promise<Date> {
  const { child, url } = await startProcess(dataDir, env);
  const client = new WsagClient(url);
  const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
  const base = new Date(Math.ceil((Date.now() + 2 * hour) / hour) * hour);
  const { agreementId } = await client.createAgreement(
    offerFromTemplate(template, [
      { location: 'NodeCount', value: '1' },
      { location: windowLocation('StartTime'), value: base.toISOString() },
      { location: windowLocation('EndTime'), value: new Date(base.getTime() + hour).toISOString() },
    ]),
  );
  const nodes = (await client.nodes()).map((n) => n.id);
  await client.terminate(agreementId);
  await stopProcess(child);
  await storeClones(dataDir, agreementId, count, (model, i) => {
    // Each on its own node and hour: node i mod 4096, hour i div 4096 after the base.
    const start = new Date(base.getTime() + Math.floor(i / nodes.length) * hour);
    const end = new Date(start.getTime() + hour);
    const segment = {
      ...model.allocation!.segments![0]!,
      start,
      end,
      nodeIds: [nodes[i % nodes.length] as string],
      spareNodeIds: [],
    };
    return {
      ...model,
      id: `live-${String(i).padStart(7, '0')}`,
      state: 'Observed',
      // As accepted: the model was terminated, and its terms' states with it.
      serviceTerms: model.serviceTerms.map((t) => ({ ...t, state: 'NotReady' as const })),
      guaranteeTerms: model.guaranteeTerms.map((t) => ({ ...t, state: 'NotDetermined' as const })),
      request: { ...model.request, window: { start, end } },
      allocation: { ...model.allocation!, start, end, segments: [segment] },
    };
  });
  return base;
}

// BENCH_LIVE_FILL=DIR: only fill DIR with the first count (for profiling a start-up by hand).
if (process.env.BENCH_LIVE_FILL) {
  await fill(process.env.BENCH_LIVE_FILL, counts[0] as number);
  process.exit(0);
}

/** The median time of five Prometheus scrapes: a scrape must not cost in proportion to the live agreements. */
async function medianScrapeMs(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const response = await fetch(`${url}/metrics`);
    if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
    await response.text();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2] as number;
}

const rows: string[] = [];
for (const live of counts) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-live-'));
  const base = await fill(dataDir, live);
  const { child, url, startMs } = await startProcess(dataDir, env);
  const client = new WsagClient(url);
  // Measured a moment after start-up, before anything is asked.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const rssServing = rssMiB(child.pid as number);
  const peakStarting = peakRssMiB(child.pid as number);
  const scrapeMs = await medianScrapeMs(url);
  const offer = await oneNodeJobOffer(client);
  const more = 2000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = 0; i < more / 16; i++) await client.createAgreement(offer);
    }),
  );
  const rssAfter = rssMiB(child.pid as number);
  // The dashboard's view zoomed to six hours (GET /api/plan?from=&to=), then, last (it takes
  // memory of its own), every booking.
  const windowStarted = performance.now();
  const inWindow = (await (
    await fetch(`${url}/api/plan?from=${base.toISOString()}&to=${new Date(base.getTime() + 6 * hour).toISOString()}`)
  ).json()) as { bookings: unknown[] };
  const windowMs = performance.now() - windowStarted;
  const planStarted = performance.now();
  const planned = (await client.plan()).bookings.length;
  const planMs = performance.now() - planStarted;
  await stopProcess(child);
  fs.rmSync(dataDir, { recursive: true, force: true });
  rows.push(
    `| ${live.toLocaleString('en')} | ${planned.toLocaleString('en')} | ${(startMs / 1000).toFixed(1)} | ${peakStarting} | ${rssServing} | ${scrapeMs.toFixed(0)} | ${rssAfter} | ${planMs.toFixed(0)} | ${windowMs.toFixed(0)} (${inWindow.bookings.length.toLocaleString('en')}) |`,
  );
  console.error(rows.at(-1));
}
publish(
  [
    machineHeading('A server holding live agreements'),
    '',
    `Command: \`${nodeFlagsPrefix()}npm run bench:live\` (\`npm start\` as its own process on a data directory holding that many Observed one-node reservations, a 4,096-node cluster, SQLite WAL, every commit synced before its answer, no run time; then 2,000 more creates from 16 clients).`,
    '',
    '| live agreements stored | bookings in the plan at the end (stored and created) | start-up until serving, s | peak RSS while starting, MiB | RSS serving (2 s after), MiB | a /metrics scrape (median of 5), ms | RSS after the scrapes and 2,000 more creates, MiB | GET /api/plan (every booking), ms | GET /api/plan for six hours (bookings in them), ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
