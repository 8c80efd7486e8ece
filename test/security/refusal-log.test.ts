import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { projectRoot } from '../support/server.js';

/**
 * Every refusal of a party is logged with its reason, where the request
 * came from and what it presented, on the SOAP ports and under /api alike, so an operator can
 * follow an attempt from the log.
 */
describe('refusals in the log', () => {
  let server: RunningServer;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    server = await startServer(
      loadConfig(
        {},
        {
          port: 0,
          dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-refusals-')),
          templatesDir: path.join(projectRoot, 'templates'),
          anonymous: 'deny',
          executor: 'none',
        },
      ),
      { logger: pino({ level: 'info' }, sink) },
    );
  });
  afterAll(async () => server?.close());

  it('names the fault, the reason, the source address and the route', async () => {
    await new WsagClient(server.url).templates().catch(() => undefined);
    const api = await fetch(`${server.url}/api/nodes/n001/fail`, {
      method: 'POST',
      headers: { 'x-requested-with': 'test', 'x-forwarded-for': '203.0.113.7' },
    });
    expect(api.status).toBe(401);
    const soap = lines.find((l) => l.msg === 'soap request refused');
    expect(soap).toMatchObject({
      level: 40,
      port: 'AgreementFactory',
      refused: 'NotAuthenticated',
      source: '127.0.0.1',
      reason: expect.stringMatching(/authenticated parties only/),
    });
    const json = lines.find(
      (l) => typeof l.msg === 'string' && (l.msg as string).endsWith('refused') && l.path === '/api/nodes/n001/fail',
    );
    expect(json).toMatchObject({
      level: 40,
      refused: 'NotAuthenticated',
      method: 'POST',
      source: '127.0.0.1',
      forwardedFor: '203.0.113.7',
    });
  });
});
