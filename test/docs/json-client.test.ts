import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, startTestServer, stopTestServer, type TestServer } from '../support/server.js';

/**
 * End to end over JSON only: docs/examples/json_negotiation.py (Python's standard library,
 * no client of ours) negotiates Advisory then Solicited, checks the hold and price, accepts,
 * waits for the job to run to Complete on the local executor, and reads its usage record.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    config: {
      executor: 'local',
      cpuTimeScale: 0.001,
      cluster: {
        nodeGroups: [{ count: 4, idPrefix: 'n', memoryGB: 64, cpus: 16, interconnect: 'InfiniBand' }],
        timing: {
          nodeInitSeconds: 0,
          storageInitSecondsPerGB: 0,
          storageRollbackSecondsPerGB: 0,
          storageMountSeconds: 0,
          deinitSeconds: 0,
          slowdownFactor: 1,
        },
      },
    },
  });
});
afterAll(() => stopTestServer(server));

describe('the Python example of docs/api.md', () => {
  it('negotiates, accepts, sees the agreement Complete and reads its usage record', async () => {
    const script = path.join(projectRoot, 'docs', 'examples', 'json_negotiation.py');
    const { stdout } = await promisify(execFile)('python3', [script, server.url], { timeout: 60_000 }).catch(
      (error: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`${error.message}\n${error.stdout ?? ''}`);
      },
    );
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^template deadline-job items: .*NodeCount/);
    expect(stdout).toMatch(/^acceptable \S+: \d+(\.\d+)? EUR, 2 nodes held until \S+$/m);
    expect(stdout).toMatch(/^agreement \S+ Observed document: \/api\/agreements\/\S+\/document$/m);
    expect(stdout).toMatch(/^agreement \S+ Complete guarantees: CompletionByDeadline Fulfilled$/m);
    expect(lines.at(-1)).toMatch(/^usage record: <ur:JobUsageRecord /);
  }, 90_000);
});
