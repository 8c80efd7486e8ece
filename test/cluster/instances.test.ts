import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import type { Agreement } from '../../src/domain/agreement.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startInstance, type RunningInstance } from '../../src/assembly/cluster.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { acceptingOffer, negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { projectRoot } from '../support/server.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * Three instances on one PostgreSQL serve one cluster: the first leads, the
 * others forward; racing creates through all three never over-allocate a node.
 */
let postgres: TestPostgres | undefined;
const instances: RunningInstance[] = [];
beforeAll(async () => {
  if (skipPostgres) return;
  postgres = await startPostgres();
  for (let i = 0; i < 3; i++)
    instances.push(await startInstance(configFor(tempDir()), { logger: pino({ level: 'silent' }) }, { pollMs: 200 }));
}, 120_000);
afterAll(async () => {
  for (const instance of instances.reverse()) await instance.close();
  await postgres?.stop();
});

const CLUSTER_NODES = 16;
function configFor(dataDir: string) {
  return loadConfig(
    { WSAG_DATABASE_URL: (postgres as TestPostgres).url },
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      templatesDir: path.join(projectRoot, 'templates'),
      logLevel: 'silent',
      admins: ['anonymous'],
      clusterNodes: CLUSTER_NODES,
      executor: 'none',
    },
  );
}
const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-cluster-'));

interface ClusterDoc {
  role: string;
  instance?: string;
  leader: { instance: string; url: string; term: number };
  lastTakeover?: { previous: string; gapSeconds: number };
}
const clusterOf = async (instance: RunningInstance): Promise<ClusterDoc> =>
  (await (await fetch(`${instance.url}/api/cluster`)).json()) as ClusterDoc;

const windowLocation = (end: 'StartTime' | 'EndTime') =>
  `/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:${end}`;
const start = new Date(Math.ceil((Date.now() + 3 * 3600_000) / 60_000) * 60_000);

/** An advance reservation of `nodes` nodes over the same two hours: every one competes for the same nodes. */
function reservation(template: string, nodes: number): string {
  return offerFromTemplate(template, [
    { location: 'NodeCount', value: String(nodes) },
    { location: windowLocation('StartTime'), value: start.toISOString() },
    { location: windowLocation('EndTime'), value: new Date(start.getTime() + 2 * 3600_000).toISOString() },
  ]);
}

/** Pairs of stored bookings that put one node to two uses at once (spare nodes count as used). */
function overAllocations(agreements: Agreement[]): string[] {
  const uses = agreements.flatMap((a) =>
    (a.allocation?.segments ?? []).flatMap((s) =>
      [...s.nodeIds, ...s.spareNodeIds].map((node) => ({
        id: a.id,
        node,
        start: s.start.getTime(),
        end: s.end.getTime(),
      })),
    ),
  );
  const clashes: string[] = [];
  for (const [i, u] of uses.entries()) {
    for (const v of uses.slice(i + 1))
      if (u.node === v.node && u.id !== v.id && u.start < v.end && v.start < u.end)
        clashes.push(`${u.node}: ${u.id} and ${v.id}`);
  }
  return clashes;
}

describe.skipIf(skipPostgres)('three instances on one PostgreSQL', () => {
  it('one leads and the others stand by, saying so on /healthz', async () => {
    expect(instances.map((i) => i.role())).toEqual(['leader', 'standby', 'standby']);
    // A standby names the leader it forwards to.
    for (const instance of instances) expect((await fetch(`${instance.url}/api/prices`)).status).toBe(200);
    const health = await Promise.all(instances.map(async (i) => (await fetch(`${i.url}/healthz`)).json()));
    const leader = instances[0]?.url;
    expect(health).toEqual([
      { status: 'ok', role: 'leader', leader },
      { status: 'ok', role: 'standby', leader },
      { status: 'ok', role: 'standby', leader },
    ]);
    // Each answers /api/cluster itself: its own role, one leader of term 1, no takeover yet.
    const states = await Promise.all(instances.map(async (i) => clusterOf(i)));
    expect(states.map((s) => s.role)).toEqual(['leader', 'standby', 'standby']);
    expect(new Set(states.map((s) => s.instance)).size).toBe(3);
    for (const s of states) {
      expect(s.leader).toMatchObject({ instance: states[0]?.instance, url: leader, term: 1 });
      expect(s.lastTakeover).toBeUndefined();
    }
  });

  it('200 creates racing through all three for the last nodes: no node over-allocated, every refusal a named fault', async () => {
    const clients = instances.map((i) => new WsagClient(i.url));
    const template = (await (clients[1] as WsagClient).templates()).find((t) =>
      t.includes('advance-reservation-v1'),
    ) as string;
    // 12 of the 16 nodes go first; 200 requests of 1 to 3 nodes race for the last 4.
    await (clients[2] as WsagClient).createAgreement(reservation(template, 12));
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, k) => {
        const nodes = 1 + (k % 3);
        try {
          const { agreementId } = await (clients[k % 3] as WsagClient).createAgreement(reservation(template, nodes));
          return { accepted: agreementId, nodes };
        } catch (error) {
          return { refused: error instanceof WsagFault ? error.code : String(error), nodes };
        }
      }),
    );
    const accepted = outcomes.filter((o) => o.accepted);
    const refusals = new Set(outcomes.flatMap((o) => (o.refused ? [o.refused] : [])));
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.reduce((sum, o) => sum + o.nodes, 0)).toBeLessThanOrEqual(4);
    expect([...refusals]).toEqual(['CannotSatisfy']);

    // From what is stored, not from what the leader believes.
    const store = await PgStore.open((postgres as TestPostgres).url, { readOnly: true });
    try {
      const stored = await store.agreements.list({ state: ['Observed', 'Pending'] });
      expect(stored.length).toBe(accepted.length + 1);
      expect(overAllocations(stored)).toEqual([]);
      expect(new Set(stored.flatMap((a) => a.allocation?.segments?.flatMap((s) => s.nodeIds) ?? [])).size).toBe(
        12 + accepted.reduce((sum, o) => sum + o.nodes, 0),
      );
    } finally {
      await store.close();
    }
  }, 120_000);

  it('a negotiation started through one instance continues through the others', async () => {
    const [a, b, c] = instances.map((i) => new WsagClient(i.url)) as [WsagClient, WsagClient, WsagClient];
    const template = (await a.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const offer = reservation(template, 1)
      .replace(start.toISOString(), new Date(start.getTime() + 86_400_000).toISOString())
      .replace(
        new Date(start.getTime() + 2 * 3600_000).toISOString(),
        new Date(start.getTime() + 86_400_000 + 3600_000).toISOString(),
      );
    const { negotiationId } = await b.initiateNegotiation();
    const [answer] = await c.negotiate(negotiationId, [
      negotiationOffer(offer, { counterOfferTo: 'advance-reservation-v1', state: 'Solicited' }),
    ]);
    expect(answer?.state).toBe('Acceptable');
    const { agreementId } = await a.createAgreement(acceptingOffer(answer?.xml as string));
    expect((await b.state(agreementId)).state).toBe('Observed');
    const negotiation = await c.negotiation(negotiationId);
    expect(negotiation).toMatchObject({ state: 'Concluded', agreementCreated: agreementId });
    expect(negotiation.offers.at(-1)?.hold?.state).toBe('Confirmed');
  }, 60_000);

  it('a caller cannot pass itself off with a forwarded certificate chain: the leader refuses the header without a forward MAC, a standby drops it', async () => {
    const forged = { 'x-wsag-client-chain': 'MIIB', 'x-wsag-cluster-secret': 'guess' };
    const response = await fetch(`${instances[0]?.url}/api/agreements`, { headers: forged });
    expect(response.status).toBe(401);
    expect((await response.json()) as { error: string; message: string }).toMatchObject({
      error: 'NotAuthenticated',
      message:
        'the x-wsag-client-chain header is accepted only from another instance of this cluster, with a forward MAC made with WSAG_CLUSTER_SECRET',
    });
    // Through a standby the caller is who it proves to be: here the anonymous party.
    expect((await fetch(`${instances[1]?.url}/api/agreements`, { headers: forged })).status).toBe(200);
  });

  it('a leader whose database session ends stops planning and stands by; another instance takes over and serves', async () => {
    const extra = await startInstance(configFor(tempDir()), { logger: pino({ level: 'silent' }) }, { pollMs: 200 });
    instances.push(extra);
    expect(extra.role()).toBe('standby');
    const before = await clusterOf(instances[0] as RunningInstance);
    expect(before.role).toBe('leader');
    // As when the database restarts or the network cuts the leader off: its lock session is gone.
    const admin = new pg.Client({ connectionString: (postgres as TestPostgres).url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ ended: boolean }>(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_locks WHERE locktype = 'advisory' AND objid = 727000 AND granted",
      );
      expect(rows.map((r) => r.ended)).toEqual([true]);
    } finally {
      await admin.end();
    }
    const deadline = Date.now() + 20_000;
    while (instances[0]?.role() === 'leader' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(instances[0]?.role()).toBe('standby');
    const next = await Promise.race(instances.map((i) => i.leading().then(() => i)));
    expect(next).not.toBe(instances[0]);
    // Requests through the former leader reach the new one, and what was stored is there.
    const client = new WsagClient((instances[0] as RunningInstance).url);
    expect((await client.plan()).bookings.length).toBeGreaterThan(0);
    const health = (await (await fetch(`${instances[0]?.url}/healthz`)).json()) as { role: string; leader: string };
    expect(health).toEqual({ status: 'ok', role: 'standby', leader: next.url });
    // The new leader says who it took over from, and the gap since the former one's last heartbeat.
    const formerName = before.instance as string;
    const state = await clusterOf(next);
    expect(state).toMatchObject({ role: 'leader', leader: { url: next.url, term: before.leader.term + 1 } });
    expect(state.lastTakeover?.previous).toBe(formerName);
    expect(state.lastTakeover?.gapSeconds).toBeGreaterThanOrEqual(0);
    expect(state.lastTakeover?.gapSeconds).toBeLessThan(20);
    const metrics = await (await fetch(`${next.url}/metrics`)).text();
    expect(metrics).toMatch(/^wsag_cluster_leader 1$/m);
    expect(metrics).toMatch(new RegExp(`^wsag_cluster_term ${before.leader.term + 1}$`, 'm'));
    expect(metrics).toMatch(/^wsag_cluster_last_takeover_gap_seconds \d/m);
    // The former leader, a standby now, reads the same from the database at its next try.
    const until = Date.now() + 5000;
    let seen = await clusterOf(instances[0] as RunningInstance);
    while (seen.leader?.url !== next.url && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await clusterOf(instances[0] as RunningInstance);
    }
    expect(seen).toMatchObject({ role: 'standby', leader: { url: next.url }, lastTakeover: { previous: formerName } });
  }, 60_000);
});
