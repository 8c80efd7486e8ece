import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer } from '../../src/server.js';
import { projectRoot } from '../support/server.js';
import { deadlineOffer } from './run-time-support.js';

/**
 * The default executor through the server, on the real clock: an agreement's job runs as a
 * local process (the demo job, a minute of runtime estimate scaled to 60 ms) on a site with
 * no initialisation or deinitialisation time, and the agreement completes with its report.
 */
describe('the local process executor behind the server', () => {
  it("runs an accepted agreement's job as a process, and the agreement completes", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-local-exec-'));
    const zero = {
      nodeInitSeconds: 0,
      storageInitSecondsPerGB: 0,
      storageRollbackSecondsPerGB: 0,
      storageMountSeconds: 0,
      deinitSeconds: 0,
      slowdownFactor: 1,
    };
    const config = loadConfig(
      {},
      {
        port: 0,
        dataDir,
        templatesDir: path.join(projectRoot, 'templates'),
        logLevel: 'silent',
        executor: 'local',
        cpuTimeScale: 0.001,
        cluster: {
          nodeGroups: [{ count: 4, idPrefix: 'n', memoryGB: 16, cpus: 16, interconnect: 'InfiniBand' }],
          timing: zero,
        },
      },
    );
    const server = await startServer(config, { logger: pino({ level: 'silent' }) });
    try {
      const client = new WsagClient(server.url);
      const id = (
        await client.createAgreement(
          await deadlineOffer(client, {
            level: 'Legacy',
            nodes: 2,
            runtimeSeconds: 60,
            deadline: new Date(Date.now() + 3600_000),
          }),
        )
      ).agreementId;
      let state = await client.state(id);
      for (let i = 0; i < 100 && state.state !== 'Complete'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        await server.execution.idle();
        state = await client.state(id);
      }
      expect(state).toEqual({
        state: 'Complete',
        serviceTerms: [{ termName: 'Job', state: 'Completed' }],
        guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'Fulfilled' }],
      });
      const log = fs.readFileSync(path.join(dataDir, 'checkpoints', 'jobs', id, 'demo-job.log'), 'utf8');
      expect(log).toMatch(/start progress=0\.0000/);
      expect(log).toMatch(/done/);
      const report = (await (await fetch(`${server.url}/api/agreements/${id}/report`)).json()) as {
        happened: { outcome: string };
      };
      expect(report.happened.outcome).toBe('completed');
    } finally {
      await server.close();
    }
  }, 20_000);
});
