import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagClient } from '../src/client/wsag-client.js';
import { AuditService } from '../src/engine/audit/audit-service.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { startServerProcess } from './support/server-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

describe('nothing acknowledged is lost', () => {
  it('agreements created before kill -9 are all there after restart, with their state', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-restart-'));
    // Operators may read the plan: it must come back exactly (same nodes, pieces, checkpoint plans).
    const env = { WSAG_ADMINS: 'anonymous' };
    const plan = async (url: string) => {
      const response = await fetch(`${url}/api/plan`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { bookings: Array<{ id: string }> }).bookings.sort((a, b) => a.id.localeCompare(b.id));
    };
    const first = await startServerProcess(dataDir, env);
    children.push(first.child);
    const client = new WsagClient(first.url);
    const templates = await client.templates();
    const created: string[] = [];
    for (let i = 0; i < 6; i++) {
      const template = templates[i % templates.length] as string;
      created.push((await client.createAgreement(offerFromTemplate(template, [{ location: '/wsag:AgreementOffer/wsag:Name', value: `job-${i}` }]))).agreementId);
    }
    await client.terminate(created[1] as string);
    const before = await client.agreements();
    const planBefore = await plan(first.url);
    expect(planBefore.map((b) => b.id)).toEqual(created.filter((id) => id !== created[1]).sort());

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = await startServerProcess(dataDir, env);
    children.push(second.child);
    const after = await new WsagClient(second.url).agreements();
    expect(after.map((a) => [a.id, a.state, a.name])).toEqual(before.map((a) => [a.id, a.state, a.name]));
    expect(after.map((a) => a.id)).toEqual(created);
    expect(after.filter((a) => a.state === 'Terminated').map((a) => a.id)).toEqual([created[1]]);
    expect((await new WsagClient(second.url).state(created[0] as string)).state).toBe('Observed');
    expect(await plan(second.url)).toEqual(planBefore);
  }, 60_000);
});

describe('nothing acknowledged is lost under concurrent writes', () => {
  it('every agreement answered while 16 clients were creating survives a kill -9 in their midst, and the audit chain holds', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-restart-concurrent-'));
    // Commits are grouped (writes made while the log's sync runs share a transaction): an
    // answer must never go out before its group is committed and synced.
    const env = { WSAG_CLUSTER_NODES: '1024' };
    const first = await startServerProcess(dataDir, env);
    children.push(first.child);
    const client = new WsagClient(first.url);
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const deadline = new Date(Math.ceil(Date.now() / 1000) * 1000 + 24 * 3600_000).toISOString().replace('.000Z', 'Z');
    const offer = offerFromTemplate(template, [
      { location: 'NodeCount', value: '1' },
      { location: '//sla:ServiceLevel/sla:Deadline', value: deadline },
      { location: '//sla:CompletedBy', value: deadline },
    ]);
    const acknowledged: string[] = [];
    let killed = false;
    const creating = async () => {
      while (!killed) {
        try {
          acknowledged.push((await client.createAgreement(offer)).agreementId);
        } catch (error) {
          if (!killed) throw error;
        }
      }
    };
    const clients = Array.from({ length: 16 }, creating);
    while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 2));
    killed = true;
    first.child.kill('SIGKILL');
    await Promise.all(clients);
    await new Promise((resolve) => first.child.exitCode !== null || first.child.signalCode !== null ? resolve(undefined) : first.child.once('exit', resolve));

    const second = await startServerProcess(dataDir, env);
    children.push(second.child);
    const stored = new Set((await new WsagClient(second.url).agreements()).map((a) => a.id));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
    const store = SqliteStore.openReadOnly(path.join(dataDir, 'wsag.db'));
    try {
      const chain = await new AuditService({ audit: store.audit, agreements: store.agreements }).verifyChain();
      expect(chain.firstBroken).toBeUndefined();
      expect(chain.entries).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await store.close();
    }
  }, 90_000);
});

describe('wsag:ExpirationTime across a restart (issue 12, case 3)', () => {
  it('an agreement that expired while the server was down is ended at start-up, and its capacity is free', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-expiry-'));
    const env = { WSAG_CLUSTER_NODES: '8' };
    const first = await startServerProcess(dataDir, env);
    children.push(first.child);
    const client = new WsagClient(first.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const whole = offerFromTemplate(template, [{ location: 'NodeCount', value: '8' }]);
    const expiresAt = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    const { agreementId } = await client.createAgreement(
      whole.replace('</wsag:ServiceProvider>', `</wsag:ServiceProvider><wsag:ExpirationTime>${expiresAt.toISOString()}</wsag:ExpirationTime>`),
    );
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() + 200)));

    const second = await startServerProcess(dataDir, env);
    children.push(second.child);
    const again = new WsagClient(second.url);
    await expect.poll(async () => (await again.state(agreementId)).state, { timeout: 5000 }).toBe('Complete');
    expect((await again.state((await again.createAgreement(whole)).agreementId)).state).toBe('Observed');
  }, 60_000);
});
