/**
 * `npm run bench:interactive`: interactive jobs against the running server under load
 * (CrossBroker). `npm start` as its own process (SQLite WAL, every commit synced before its answer,
 * 4,096 nodes, no run time, so the plan is what is measured). The cluster is first filled
 * with best-effort work that starts at once (512 jobs of 8 nodes for four hours); then 16 clients send CreateAgreement for
 * BENCH_SECONDS (default 20): 80 % best-effort jobs, 15 % deadline jobs, 5 % interactive
 * jobs (1 to 4 nodes, 30 minutes). For every interactive request: whether it was accepted,
 * how long the answer took, and how long after the answer its booking starts (the start
 * delay the plan promises; the run time adds the node set-up of the site, 30 s by default).
 * Prints a Markdown table; `--write` puts it in docs/benchmarks.md in place of the last.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WsagClient, WsagFault } from '../src/client/wsag-client.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { machineHeading, publish, quantiles } from './report.js';
import { nodeFlagsPrefix, rssMiB, startProcess } from './server-process.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const clients = 16;
const nodes = 4096;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-interactive-'));
const { child, url } = await startProcess(dataDir, { WSAG_CLUSTER_NODES: String(nodes), WSAG_EXECUTOR: 'none' });
const client = new WsagClient(url);
const templates = await client.templates();
const template = (name: string) => templates.find((t) => t.includes(`${name}-v1`)) as string;
const offer = (name: string, settings: Record<string, string>) =>
  offerFromTemplate(
    template(name),
    Object.entries(settings).map(([location, value]) => ({ location, value })),
  );

// The cluster full of best-effort work that runs now: jobs of 8 nodes for four hours.
const fill = offer('best-effort-job', { NodeCount: '8', RuntimeEstimate: '14400' });
await Promise.all(
  Array.from({ length: 8 }, async () => {
    for (let i = 0; i < nodes / 8 / 8; i++) await client.createAgreement(fill);
  }),
);

let random = 20261125;
const next = () => (random = (Math.imul(random, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const answers: number[] = [];
const otherAnswers: number[] = [];
const delays: number[] = [];
let interactive = 0;
let refused = 0;
let others = 0;
const deadline = () => new Date(Date.now() + 12 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const stopAt = performance.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: clients }, async () => {
    while (performance.now() < stopAt) {
      const roll = next();
      if (roll < 0.05) {
        interactive++;
        const request = offer('interactive-job', {
          NodeCount: String(1 + Math.floor(next() * 4)),
          RuntimeEstimate: '1800',
        });
        const t0 = performance.now();
        try {
          const { agreementId } = await client.createAgreement(request);
          const answeredAt = Date.now();
          answers.push(performance.now() - t0);
          const booking = (await client.plan()).bookings.find((b) => b.id === agreementId);
          delays.push(Math.max(0, (Date.parse(booking?.start as string) - answeredAt) / 1000));
        } catch (error) {
          answers.push(performance.now() - t0);
          if (!(error instanceof WsagFault)) throw error;
          refused++;
        }
      } else {
        others++;
        const request =
          roll < 0.2
            ? offer('deadline-job', {
                NodeCount: '2',
                '//sla:ServiceLevel/sla:Deadline': deadline(),
                '//sla:CompletedBy': deadline(),
              })
            : offer('best-effort-job', {
                NodeCount: String(1 + Math.floor(next() * 4)),
                RuntimeEstimate: String(600 + Math.floor(next() * 3000)),
              });
        const t0 = performance.now();
        await client.createAgreement(request).catch((error: unknown) => {
          if (!(error instanceof WsagFault)) throw error;
        });
        otherAnswers.push(performance.now() - t0);
      }
    }
  }),
);
const rss = rssMiB(child.pid as number);
child.kill('SIGKILL');
fs.rmSync(dataDir, { recursive: true, force: true });

const a = quantiles(answers);
const d = quantiles(delays);
const o = quantiles(otherAnswers);
publish(
  [
    machineHeading('interactive jobs under load'),
    '',
    `Command: \`${nodeFlagsPrefix()}npm run bench:interactive\` (\`npm start\` as its own process, ${nodes} nodes, SQLite WAL, every commit synced before its answer, no run time; the cluster first filled with best-effort work running now, 512 jobs of 8 nodes; then ${clients} clients for ${seconds} s: 80 % best-effort, 15 % deadline and 5 % interactive CreateAgreement, interactive jobs of 1 to 4 nodes for 30 minutes, to start within 5 s).`,
    '',
    "The floor is the same run's other CreateAgreement answers (best-effort and deadline jobs): the ratios say what deciding an interactive job (and suspending batch work for it) adds.",
    '',
    '| requests | interactive | accepted | refused | answer p50 ms | answer p99 ms | others p50 / p99 ms | ratio p50 / p99 | start delay p50 s | start delay p99 s | RSS MiB |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    `| ${others + interactive} | ${interactive} | ${interactive - refused} | ${refused} (${((refused / Math.max(1, interactive)) * 100).toFixed(1)} %) | ${a.median.toFixed(1)} | ${a.p99.toFixed(1)} | ${o.median.toFixed(1)} / ${o.p99.toFixed(1)} | ${(a.median / o.median).toFixed(2)} / ${(a.p99 / o.p99).toFixed(2)} | ${d.median.toFixed(2)} | ${d.p99.toFixed(2)} | ${rss} |`,
    '',
  ].join('\n'),
);
