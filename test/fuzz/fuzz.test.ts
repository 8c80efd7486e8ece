import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { runFuzz } from './harness.js';

/**
 * The fuzz harness against `npm start` as its own process (SQLite, 64 nodes, the
 * local executor), WSAG_FUZZ_RUNS cases (5,000 by default), 6 at a time. 0 exits, 0
 * InternalError, 0 stacks or paths, 0 answers that are not well-formed, /healthz within a
 * second (beyond a trivial reference server asked at the same moment) after every batch and throughout, a valid offer still accepted, every created agreement keeping
 * its objectives. `npm run fuzz -- --runs N` runs any number outside the tests.
 */
const runs = Number(process.env.WSAG_FUZZ_RUNS ?? 5000);
let server: ServerProcess;
let exited: number | null | undefined;

beforeAll(async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-fuzz-'));
  server = await startServerProcess(dataDir, { WSAG_CLUSTER_NODES: '64', WSAG_ADMINS: 'anonymous' });
  server.child.once('exit', (code) => (exited = code));
});
afterAll(() => {
  server?.child.kill('SIGKILL');
});

describe(`${runs} mutated requests against a running server`, () => {
  it(
    'answer every one with a named fault or a success, and leave the server healthy and admitting',
    async () => {
      const report = await runFuzz({ url: server.url, runs, seed: Number(process.env.WSAG_FUZZ_SEED ?? 23) });
      expect(exited).toBeUndefined();
      expect(report.breaches).toEqual([]);
      expect(report.cases).toBeGreaterThanOrEqual(runs);
      // /healthz within a second throughout, beyond what a trivial server in a process of its own takes at
      // the same moment: a machine starved of CPU by other work (a run beside other test suites took
      // 1,093 ms) is not the server stalling.
      expect(report.slowestHealthMs).toBeLessThan(1000);
      expect(report.healthWhileRunning.maxBeyondReferenceMs).toBeLessThan(1000);
      expect(report.faults.InternalError).toBeUndefined();
    },
    30 * 60_000,
  );
});
