import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { MemoryIdempotencyRecords } from '../../src/store/memory-idempotency-records.js';
import { idempotent } from '../../src/web/idempotency.js';
import { bodyWithin } from '../../src/web/json-body.js';
import { sendProblem } from '../../src/web/problem.js';
import { startSqliteServer } from '../support/server.js';

/** Idempotency-Key on creates and accepts: the first answer again, durable across a restart and a lost answer. */
const post = async (url: string, body: unknown, key?: string) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key !== undefined ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    body: (await response.json()) as { id: string; title?: string; detail?: string; state?: string },
  };
};

describe('Idempotency-Key on a server with its SQLite store', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-idempotency-'));
  let server: RunningServer | undefined;
  const start = () => startSqliteServer(dataDir);
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const request = { template: 'deadline-job', items: { NodeCount: 1 } };

  it('answers the same key and body with the first answer, once made, also after a restart; refuses another body', async () => {
    server = await start();
    const url = `${server.url}/api/agreements`;
    const first = await post(url, request, 'order-17');
    expect(first).toMatchObject({ status: 201, replayed: false, body: { state: 'Observed' } });
    // Sent twice at once and again: one agreement.
    const again = await Promise.all([post(url, request, 'order-17'), post(url, request, 'order-17')]);
    for (const answer of again) expect(answer).toEqual({ ...first, replayed: true });
    const reused = await post(url, { ...request, items: { NodeCount: 2 } }, 'order-17');
    expect(reused).toMatchObject({ status: 422, body: { title: 'IdempotencyKeyReused' } });
    expect(reused.body.detail).toMatch(/^Idempotency-Key "order-17" was sent with another request at /);
    // Without a key, or under another, a request makes its own agreement.
    expect((await post(url, request)).body.id).not.toBe(first.body.id);
    expect((await post(url, request, 'order-18')).body.id).not.toBe(first.body.id);
    const tooLong = await post(url, request, 'k'.repeat(256));
    expect(tooLong).toMatchObject({ status: 400, body: { title: 'MalformedMessage' } });

    await server.close();
    server = await start();
    const afterRestart = await post(`${server.url}/api/agreements`, request, 'order-17');
    expect(afterRestart).toEqual({ ...first, replayed: true });
    const agreements = (await (await fetch(`${server.url}/api/agreements`)).json()) as Array<{ id: string }>;
    expect(agreements.filter((a) => a.id === first.body.id)).toHaveLength(1);
    expect(agreements).toHaveLength(3);
  });
});

describe('idempotent()', () => {
  it('after a crash between making the agreement and storing the answer, a retry answers with what was made', async () => {
    const records = new MemoryIdempotencyRecords();
    let ids = 0;
    const once = idempotent({ records, ids: { next: () => `id-${++ids}` }, now: () => new Date() });
    const made = new Map<string, { id: string }>();
    let crash = true;
    const app = express();
    app.post('/make', ...bodyWithin(1024), async (req, res) => {
      try {
        await once(
          req,
          res,
          { identity: 'alice', isAdmin: false },
          {
            made: async (id) => (id === undefined ? undefined : made.get(id)),
            make: async (id) => {
              made.set(id, { id });
              if (crash) throw new Error('the process died here');
              return { id };
            },
          },
          201,
        );
      } catch (error) {
        sendProblem(res, error, 'making');
      }
    });
    const listener = app.listen(0, '127.0.0.1');
    await new Promise((ready) => listener.once('listening', ready));
    try {
      const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/make`;
      expect((await post(url, { n: 1 }, 'k')).status).toBe(500);
      crash = false;
      const retry = await post(url, { n: 1 }, 'k');
      expect(retry).toEqual({ status: 201, replayed: true, body: { id: 'id-1' } });
      expect([...made.keys()]).toEqual(['id-1']);
    } finally {
      listener.close();
    }
  });
});
