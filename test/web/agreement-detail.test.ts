import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import type { RunningServer } from '../../src/server.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startSqliteServer } from '../support/server.js';

/** GET /api/agreements/ID, the dashboard's detail view, on the default SQLite store (which keeps the audit trail). */
let server: RunningServer;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-detail-'));
  server = await startSqliteServer(dataDir);
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('GET /api/agreements/ID', () => {
  it('gives the agreement with its term states, allocation, audit history and signatures', async () => {
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }]),
    );
    await client.terminate(agreementId);
    const response = await fetch(`${server.url}/api/agreements/${agreementId}`);
    expect(response.status).toBe(200);
    const detail = (await response.json()) as Record<string, unknown> & {
      history: Array<{ seq: number; action: string; actor: string }>;
      allocation: { nodes: number; segments: unknown[] };
    };
    expect(detail).toMatchObject({
      id: agreementId,
      state: 'Terminated',
      template: 'deadline-job',
      request: { nodeCount: 2 },
      signatures: { signed: false },
    });
    expect(detail.guaranteeTerms).toEqual([{ termName: 'CompletionByDeadline', state: 'NotDetermined' }]);
    expect(detail.allocation.nodes).toBe(2);
    expect(detail.history.map((e) => [e.action, e.actor])).toEqual([
      ['created', 'anonymous'],
      ['terminated', 'anonymous'],
    ]);
    expect(detail.history[1]?.seq).toBeGreaterThan(detail.history[0]?.seq as number);
  });

  it('an unknown agreement is a problem document naming it', async () => {
    const response = await fetch(`${server.url}/api/agreements/no-such-agreement`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/no-such-agreement/);
  });
});
