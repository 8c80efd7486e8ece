import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { startInstance, type RunningInstance } from '../../src/assembly/cluster.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { wsag } from '../cli/support.js';
import { instanceConfig, windowLocation } from './support.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * A network partition between the planning leader and the database (issue 56, fault 4):
 * every session of the leader's database user is ended and its reconnects refused, while
 * the other instance still reaches the database. The old leader stops planning and the
 * other takes over; no two leaders act at once (no node booked twice, one audit chain
 * that verifies), nothing acknowledged is lost, and the gap is printed. Each instance
 * connects as its own database user so that one of them can be cut off.
 */
let postgres: TestPostgres | undefined;
const instances: RunningInstance[] = [];
afterAll(async () => {
  for (const instance of instances.reverse()) await instance.close();
  await postgres?.stop();
});

const userUrl = (url: string, user: string) => url.replace('//wsag@', `//${user}@`);

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe.skipIf(skipPostgres)('the planning leader cut off from the database', () => {
  it('stops planning; the other instance takes over; no node booked twice, one audit chain, nothing acknowledged lost', async () => {
    postgres = await startPostgres();
    const db = postgres;
    await admin(db.url, 'CREATE ROLE wsag_a LOGIN SUPERUSER; CREATE ROLE wsag_b LOGIN SUPERUSER');
    const logger = pino({ level: process.env.SHOW_FAULTS ? 'error' : 'silent' });
    const a = await startInstance(instanceConfig(userUrl(db.url, 'wsag_a'), 256), { logger }, { pollMs: 200 });
    instances.push(a);
    const b = await startInstance(instanceConfig(userUrl(db.url, 'wsag_b'), 256), { logger }, { pollMs: 200 });
    instances.push(b);
    expect([a.role(), b.role()]).toEqual(['leader', 'standby']);

    // Two clients through b (which will lead) create one-node reservations over the same hour: nodes for all.
    const client = new WsagClient(b.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const start = new Date(Math.ceil((Date.now() + 3 * 3600_000) / 60_000) * 60_000);
    const offer = offerFromTemplate(template, [
      { location: 'NodeCount', value: '1' },
      { location: windowLocation('StartTime'), value: start.toISOString() },
      { location: windowLocation('EndTime'), value: new Date(start.getTime() + 3600_000).toISOString() },
    ]);
    const acknowledged: Array<{ id: string; at: number }> = [];
    const refusals = new Map<string, number>();
    let running = true;
    const loops = [0, 1].map(async () => {
      while (running && acknowledged.length < 60) {
        try {
          acknowledged.push({ id: (await client.createAgreement(offer)).agreementId, at: Date.now() });
        } catch (error) {
          const code = error instanceof WsagFault ? error.code : `not a fault: ${String(error)}`;
          refusals.set(code, (refusals.get(code) ?? 0) + 1);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    });
    while (acknowledged.length < 10) await new Promise((resolve) => setTimeout(resolve, 20));

    // The partition: a's sessions ended, its reconnects refused; b still reaches the database.
    const cutAt = Date.now();
    await admin(
      db.url,
      "ALTER ROLE wsag_a NOLOGIN; SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'wsag_a'",
    );
    const deadline = Date.now() + 20_000;
    while ((a.role() === 'leader' || b.role() !== 'leader') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect([a.role(), b.role()]).toEqual(['standby', 'leader']);
    const tookOver = Date.now();
    while (running && acknowledged.length < 60 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    running = false;
    await Promise.all(loops);
    // Acknowledged by the new leader: after it took over.
    const firstAfter = acknowledged.find((x) => x.at > tookOver)?.at;
    expect(firstAfter).toBeDefined();

    // One leader at a time: the stored bookings never put a node to two uses, the audit chain is one.
    const store = await PgStore.open(db.url, { readOnly: true });
    try {
      const agreements = await store.agreements.list({ withoutDocument: true });
      const stored = new Set(agreements.map((x) => x.id));
      expect(acknowledged.filter((x) => !stored.has(x.id))).toEqual([]);
      const uses = new Map<string, number>();
      for (const agreement of agreements)
        for (const segment of agreement.allocation?.segments ?? [])
          for (const node of segment.nodeIds) uses.set(node, (uses.get(node) ?? 0) + 1);
      // Every reservation has the same hour: a node used twice would be booked twice.
      expect([...uses.values()].filter((n) => n > 1)).toEqual([]);
    } finally {
      await store.close();
    }
    const verified = await wsag(['audit', 'verify'], { env: { WSAG_DATABASE_URL: db.url } });
    expect(verified.out.at(-1), verified.stdout + verified.stderr).toBe('all well');
    expect([...refusals.keys()].filter((code) => code !== 'ServiceUnavailable')).toEqual([]);

    // The partition heals: a comes back as a standby and names b as the leader.
    await admin(db.url, 'ALTER ROLE wsag_a LOGIN');
    const healed = Date.now() + 10_000;
    let seen = (await (await fetch(`${a.url}/api/cluster`)).json()) as { leader?: { url: string } };
    while (seen.leader?.url !== b.url && Date.now() < healed) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = (await (await fetch(`${a.url}/api/cluster`)).json()) as { leader?: { url: string } };
    }
    expect(seen).toMatchObject({ role: 'standby', leader: { url: b.url } });
    console.log(
      `partition of the leader from the database: ${acknowledged.length} acknowledged; the other instance led ` +
        `${((tookOver - cutAt) / 1000).toFixed(2)} s after the cut, its first create acknowledged ` +
        `${(((firstAfter as number) - cutAt) / 1000).toFixed(2)} s after it; refused: ` +
        `${JSON.stringify(Object.fromEntries(refusals))}`,
    );
  }, 120_000);
});
