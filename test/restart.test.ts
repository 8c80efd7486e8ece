import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagClient } from '../src/client/wsag-client.js';
import { AuditService } from '../src/engine/audit/audit-service.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { acceptingOffer, negotiationOffer } from '../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { oneNodeJobOffer } from '../bench/job-offer.js';
import { startServerProcess } from './support/server-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** The server on `dataDir`, killed after the test if it still runs. */
async function started(dataDir: string, env: Record<string, string>) {
  const server = await startServerProcess(dataDir, env);
  children.push(server.child);
  return server;
}

/** Sends `signal`; resolves once the process has exited (listening first, so no exit is missed). */
function stopped(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<unknown> {
  const exited = once(child, 'exit');
  child.kill(signal);
  return exited;
}

describe('nothing acknowledged is lost', () => {
  it('agreements created before kill -9 are all there after restart, with their state', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-restart-'));
    // Operators may read the plan: it must come back exactly (same nodes, pieces, checkpoint plans).
    const env = { WSAG_ADMINS: 'anonymous' };
    const plan = async (url: string) => {
      const response = await fetch(`${url}/api/plan`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { bookings: Array<{ id: string }> }).bookings.sort((a, b) =>
        a.id.localeCompare(b.id),
      );
    };
    const first = await started(dataDir, env);
    const client = new WsagClient(first.url);
    const templates = await client.templates();
    const created: string[] = [];
    for (let i = 0; i < 6; i++) {
      const template = templates[i % templates.length] as string;
      created.push(
        (
          await client.createAgreement(
            offerFromTemplate(template, [{ location: '/wsag:AgreementOffer/wsag:Name', value: `job-${i}` }]),
          )
        ).agreementId,
      );
    }
    await client.terminate(created[1] as string);
    const before = await client.agreements();
    const planBefore = await plan(first.url);
    expect(planBefore.map((b) => b.id)).toEqual(created.filter((id) => id !== created[1]).sort());

    await stopped(first.child);

    const second = await started(dataDir, env);
    const after = await new WsagClient(second.url).agreements();
    expect(after.map((a) => [a.id, a.state, a.name])).toEqual(before.map((a) => [a.id, a.state, a.name]));
    expect(after.map((a) => a.id)).toEqual(created);
    expect(after.filter((a) => a.state === 'Terminated').map((a) => a.id)).toEqual([created[1]]);
    expect((await new WsagClient(second.url).state(created[0] as string)).state).toBe('Observed');
    expect(await plan(second.url)).toEqual(planBefore);
  }, 60_000);
});

/**
 * `clients` loops of `work` against the server, a kill -9 in their midst once `count` of
 * them were answered; resolves with every answer, once the process has exited.
 */
async function answeredUntilKilled<T>(
  child: ChildProcess,
  clients: number,
  count: number,
  work: () => Promise<T>,
): Promise<T[]> {
  const acknowledged: T[] = [];
  let killed = false;
  const looping = async () => {
    while (!killed) {
      try {
        acknowledged.push(await work());
      } catch (error) {
        if (!killed) throw error;
      }
    }
  };
  const running = Array.from({ length: clients }, looping);
  while (acknowledged.length < count) await new Promise((resolve) => setTimeout(resolve, 2));
  killed = true;
  const exited = stopped(child);
  await Promise.all(running);
  await exited;
  return acknowledged;
}

/** The server started again on `dataDir`, with the ids of the agreements it holds. */
async function restartedWithAgreements(dataDir: string, env: Record<string, string>) {
  const second = await started(dataDir, env);
  const stored = new Set((await new WsagClient(second.url).agreements()).map((a) => a.id));
  return { second, stored };
}

describe('nothing acknowledged is lost under concurrent writes', () => {
  it('every agreement answered while 16 clients were creating survives a kill -9 in their midst, and the audit chain holds', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-restart-concurrent-'));
    // Commits are grouped (writes made while the log's sync runs share a transaction): an
    // answer must never go out before its group is committed and synced.
    const env = { WSAG_CLUSTER_NODES: '1024' };
    const first = await started(dataDir, env);
    const client = new WsagClient(first.url);
    // A one-node job of an hour with a day's deadline: a thousand fit on 1,024 nodes.
    const offer = await oneNodeJobOffer(client);
    const acknowledged = await answeredUntilKilled(
      first.child,
      16,
      200,
      async () => (await client.createAgreement(offer)).agreementId,
    );

    const { second, stored } = await restartedWithAgreements(dataDir, env);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    await stopped(second.child, 'SIGTERM');
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

describe('nothing acknowledged is lost when negotiated offers are accepted', () => {
  it('every agreement answered while 8 clients were negotiating and accepting survives a kill -9 in their midst, its negotiation concluded', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-restart-accepts-'));
    // Accepting stores the agreement, then the negotiation, and answers once one sync of
    // the log has made both durable: no answer may go out before the agreement's sync.
    const env = { WSAG_CLUSTER_NODES: '1024' };
    const first = await started(dataDir, env);
    const client = new WsagClient(first.url);
    const solicited = negotiationOffer(await oneNodeJobOffer(client), {
      counterOfferTo: 'deadline-job-v1',
      state: 'Solicited',
    });
    const acknowledged = await answeredUntilKilled(first.child, 8, 60, async () => {
      const { negotiationId } = await client.initiateNegotiation();
      const [answer] = await client.negotiate(negotiationId, [solicited]);
      const { agreementId } = await client.createAgreement(acceptingOffer(answer?.xml as string));
      return { agreementId, negotiationId };
    });

    const { second, stored } = await restartedWithAgreements(dataDir, env);
    expect(acknowledged.filter(({ agreementId }) => !stored.has(agreementId))).toEqual([]);
    for (const { agreementId, negotiationId } of acknowledged.slice(-8)) {
      const negotiation = (await (await fetch(`${second.url}/api/negotiations/${negotiationId}`)).json()) as {
        state: string;
        agreementCreated?: string;
      };
      expect(negotiation).toMatchObject({ state: 'Concluded', agreementCreated: agreementId });
    }
  }, 90_000);
});

describe('wsag:ExpirationTime across a restart (case 3)', () => {
  it('an agreement that expired while the server was down is ended at start-up, and its capacity is free', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-expiry-'));
    const env = { WSAG_CLUSTER_NODES: '8' };
    const first = await started(dataDir, env);
    const client = new WsagClient(first.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const whole = offerFromTemplate(template, [{ location: 'NodeCount', value: '8' }]);
    const expiresAt = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    const { agreementId } = await client.createAgreement(
      whole.replace(
        '</wsag:ServiceProvider>',
        `</wsag:ServiceProvider><wsag:ExpirationTime>${expiresAt.toISOString()}</wsag:ExpirationTime>`,
      ),
    );
    await stopped(first.child);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() + 200)));

    const second = await started(dataDir, env);
    const again = new WsagClient(second.url);
    await expect.poll(async () => (await again.state(agreementId)).state, { timeout: 5000 }).toBe('Complete');
    expect((await again.state((await again.createAgreement(whole)).agreementId)).state).toBe('Observed');
  }, 60_000);
});
