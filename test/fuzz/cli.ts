import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startServerProcess } from '../support/server-process.js';
import { runFuzz } from './harness.js';

/**
 * `npm run fuzz -- [--runs N] [--seed S] [--url URL] [--out FILE]`: the fuzz harness of
 * test/fuzz/fuzz.test.ts for any number of cases. Without --url it starts `npm start` as
 * its own process (SQLite in a temporary directory, 64 nodes) and watches it for exits.
 * Prints the figures docs/security.md records; exits 1 when any rule was broken.
 */
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    seed: { type: 'string' },
    url: { type: 'string' },
    out: { type: 'string' },
  },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
const server = values.url
  ? undefined
  : await startServerProcess(fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-fuzz-')), {
      WSAG_CLUSTER_NODES: '64',
      WSAG_ADMINS: 'anonymous',
    });
let exits = 0;
server?.child.once('exit', () => exits++);
// Interrupted: the server process goes too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server?.child.kill('SIGKILL');
    process.exit(130);
  });
}
const url = values.url ?? (server?.url as string);
const started = Date.now();
let lastPrint = 0;
const report = await runFuzz({
  url,
  runs,
  seed,
  onBatch: (done) => {
    if (Date.now() - lastPrint > 10_000) {
      lastPrint = Date.now();
      process.stderr.write(`${done} of ${runs} cases, ${Math.round((Date.now() - started) / 1000)} s\n`);
    }
  },
});
const seconds = (Date.now() - started) / 1000;
const summary = {
  command: `npm run fuzz -- --runs ${runs} --seed ${seed}`,
  machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  seconds: Math.round(seconds),
  casesPerSecond: Math.round(report.cases / seconds),
  exits,
  ...report,
};
console.log(JSON.stringify(summary, null, 2));
if (values.out) fs.writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
server?.child.kill('SIGKILL');
process.exit(report.breaches.length === 0 && exits === 0 ? 0 : 1);
