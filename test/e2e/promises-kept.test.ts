import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { wsag } from '../cli/support.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * Promises kept on the real clock, end to end, against `npm start` as the README runs it
 * (the local executor, 64 nodes of which 4 are kept warm for interactive sessions, the
 * shipped timing model: 36 s to prepare a node and hand it over, 15 s to release it). One
 * agreement per shipped template, made with the `wsag` command as a user would, each left to
 * run to its end: every guarantee term Fulfilled, no penalty, no violation in the audit
 * trail, and the account charged exactly the settled usage. Windows and runtimes are seconds
 * long, so the whole test takes about two minutes.
 */
const seconds = (s: number) => s * 1000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

let server: ServerProcess | undefined;
let url = '';
let dataDir = '';

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-promises-'));
  server = await startServerProcess(dataDir, { WSAG_ADMINS: 'anonymous' }, { compiled: true });
  url = server.url;
}, 60_000);

afterAll(() => {
  server?.child.kill('SIGTERM');
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function created(args: string[]): Promise<string> {
  const result = await wsag(['create', ...args, '--json'], { url });
  expect(result.err, result.stderr).toEqual([]);
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { agreementId: string }).agreementId;
}

describe('promises kept on the real clock (npm start, the local executor)', () => {
  it('a reservation, an interactive session, a deadline job, best-effort and background work all end as promised', {
    timeout: 240_000,
  }, async () => {
    const client = new WsagClient(url);
    for (const args of [
      ['account', 'create', 'e2e', '--owner', 'anonymous'],
      ['account', 'allocate', 'e2e', '1000'],
    ]) {
      const result = await wsag(args, { url });
      expect(result.code, result.stderr).toBe(0);
    }

    // A window 45 s ahead (its nodes need 36 s of preparation), 30 s long.
    const windowStart = Math.ceil((Date.now() + seconds(45)) / 1000) * 1000;
    const windowEnd = windowStart + seconds(30);
    const reservation = await created([
      '--template',
      'advance-reservation',
      '--set',
      'NodeCount=2',
      '--set',
      `//arp:StartTime=${iso(windowStart)}`,
      '--set',
      `//arp:EndTime=${iso(windowEnd)}`,
      '--account',
      'e2e',
    ]);
    const acceptedAt = Date.now();
    const session = await created([
      '--template',
      'interactive-job',
      '--set',
      'NodeCount=2',
      '--set',
      'RuntimeEstimate=60',
    ]);
    const deadline = await created(['--template', 'deadline-job', '--set', 'NodeCount=1']);
    const bestEffort = await created(['--template', 'best-effort-job', '--set', 'NodeCount=1']);
    const background = await created(['--template', 'background-job']);
    const all = [reservation, session, deadline, bestEffort, background];

    // Every agreement ends on its own: Complete, each guarantee term Fulfilled.
    for (;;) {
      const states = await Promise.all(all.map((id) => client.state(id)));
      if (states.every((s) => s.state === 'Complete')) break;
      expect(Date.now() - acceptedAt, JSON.stringify(states)).toBeLessThan(seconds(200));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    for (const id of all) {
      const state = await client.state(id);
      expect(
        state.guaranteeTerms.every((t) => t.state === 'Fulfilled'),
        `${id}: ${JSON.stringify(state)}`,
      ).toBe(true);
      const report = await client.request<{
        totals: { penalties: unknown[] };
        happened: { started?: string; completed?: string };
      }>(`/api/agreements/${id}/report`, 'report');
      expect(report.totals.penalties, id).toEqual([]);
      const { history } = await client.request<{ history: Array<{ action: string }> }>(
        `/api/agreements/${id}`,
        'agreement',
      );
      expect(
        history.map((e) => e.action).filter((a) => a.includes('violated')),
        id,
      ).toEqual([]);
    }
    expect((await client.state(reservation)).guaranteeTerms).toEqual([
      { termName: 'NodesThroughWindow', state: 'Fulfilled' },
    ]);
    expect((await client.state(session)).guaranteeTerms).toEqual([
      { termName: 'NodesThroughSession', state: 'Fulfilled' },
    ]);
    expect((await client.state(deadline)).guaranteeTerms).toEqual([
      { termName: 'CompletionByDeadline', state: 'Fulfilled' },
    ]);

    // The reservation's session was handed its nodes before the window and held them to its end.
    const held = await client.request<{ happened: { started: string; completed: string } }>(
      `/api/agreements/${reservation}/report`,
      'report',
    );
    expect(Date.parse(held.happened.started)).toBeLessThanOrEqual(windowStart);
    expect(Date.parse(held.happened.completed)).toBeGreaterThanOrEqual(windowEnd);
    // The interactive session computed within the promised 5 s of its acceptance.
    const interactive = await client.request<{ happened: { started: string } }>(
      `/api/agreements/${session}/report`,
      'report',
    );
    expect(Date.parse(interactive.happened.started) - acceptedAt).toBeLessThanOrEqual(seconds(5) + seconds(2));

    // Charged exactly the settled usage: the window, at the quoted price; nothing held any more.
    const agreement = await client.request<{ price: { amount: number } }>(
      `/api/agreements/${reservation}`,
      'agreement',
    );
    const account = await client.request<{ funds: number; held: number }>('/api/accounts/e2e', 'account');
    expect(account.held).toBe(0);
    expect(account.funds).toBeCloseTo(1000 - agreement.price.amount, 2);
  });
});

describe('a reservation across kill -9 (npm start, the local executor)', () => {
  it('killed and restarted in the middle of its window: still Complete, its nodes held throughout, no penalty', {
    timeout: 240_000,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-promises-kill-'));
    let running = await startServerProcess(dir, { WSAG_ADMINS: 'anonymous' }, { compiled: true });
    try {
      const windowStart = Math.ceil((Date.now() + seconds(45)) / 1000) * 1000;
      const windowEnd = windowStart + seconds(40);
      const create = await wsag(
        [
          'create',
          '--template',
          'advance-reservation',
          '--set',
          'NodeCount=2',
          '--set',
          `//arp:StartTime=${iso(windowStart)}`,
          '--set',
          `//arp:EndTime=${iso(windowEnd)}`,
          '--json',
        ],
        { url: running.url },
      );
      expect(create.code, create.stderr).toBe(0);
      const id = (JSON.parse(create.stdout) as { agreementId: string }).agreementId;

      // In the middle of the window, the server dies without warning and comes back on the same data.
      await new Promise((resolve) => setTimeout(resolve, windowStart + seconds(10) - Date.now()));
      expect((await new WsagClient(running.url).state(id)).serviceTerms.map((t) => t.state)).toEqual([
        'Ready',
        'Ready',
      ]);
      running.child.kill('SIGKILL');
      await new Promise((resolve) => running.child.once('exit', resolve));
      running = await startServerProcess(dir, { WSAG_ADMINS: 'anonymous' }, { compiled: true });
      const client = new WsagClient(running.url);

      for (;;) {
        const state = await client.state(id);
        if (state.state === 'Complete') break;
        expect(Date.now()).toBeLessThan(windowEnd + seconds(60));
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      expect((await client.state(id)).guaranteeTerms).toEqual([{ termName: 'NodesThroughWindow', state: 'Fulfilled' }]);
      const report = await client.request<{
        totals: { penalties: unknown[] };
        happened: { started: string; completed: string };
      }>(`/api/agreements/${id}/report`, 'report');
      expect(report.totals.penalties).toEqual([]);
      // The record kept from before the kill: handed over before the window, held to its end.
      expect(Date.parse(report.happened.started)).toBeLessThanOrEqual(windowStart);
      expect(Date.parse(report.happened.completed)).toBeGreaterThanOrEqual(windowEnd);
      const { history } = await client.request<{ history: Array<{ action: string }> }>(
        `/api/agreements/${id}`,
        'agreement',
      );
      expect(history.map((e) => e.action).filter((a) => a.includes('violated'))).toEqual([]);
    } finally {
      running.child.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
