import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { startInstance, type RunningInstance } from '../../src/assembly/cluster.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { instanceConfig, windowLocation } from './support.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * PostgreSQL restarted, or stopped for a while, under load (issue 56, fault 1), with one
 * instance and with two: every create is answered (an agreement or a named fault), nothing
 * acknowledged is lost, and the service comes back by itself once the database does. The
 * time without service and the refusals are printed for docs/benchmarks.md.
 */
let postgres: TestPostgres | undefined;
const instances: RunningInstance[] = [];
afterEach(async () => {
  for (const instance of instances.splice(0).reverse()) await instance.close();
  await postgres?.stop();
  postgres = undefined;
});

interface Load {
  acknowledged: string[];
  refusals: Map<string, number>;
  /** When creates stopped being acknowledged, and when they were again (ms since the epoch). */
  outages: Array<{ from: number; to?: number }>;
  stop(): Promise<void>;
}

/** `clients` loops creating one-node reservations through the instances, round robin. */
async function load(clients: WsagClient[]): Promise<Load> {
  const template = (await (clients[0] as WsagClient).templates()).find((t) =>
    t.includes('advance-reservation-v1'),
  ) as string;
  const start = new Date(Math.ceil((Date.now() + 3 * 3600_000) / 60_000) * 60_000);
  const offer = offerFromTemplate(template, [
    { location: 'NodeCount', value: '1' },
    { location: windowLocation('StartTime'), value: start.toISOString() },
    { location: windowLocation('EndTime'), value: new Date(start.getTime() + 600_000).toISOString() },
  ]);
  const state: Load = { acknowledged: [], refusals: new Map(), outages: [], stop: async () => {} };
  let running = true;
  const loops = clients.map(async (client) => {
    while (running) {
      try {
        const { agreementId } = await client.createAgreement(offer);
        state.acknowledged.push(agreementId);
        const open = state.outages.at(-1);
        if (open && open.to === undefined) open.to = Date.now();
      } catch (error) {
        const name = error instanceof WsagFault ? error.code : `not a fault: ${String(error)}`;
        if (process.env.SHOW_FAULTS) console.log(name, error instanceof Error ? error.message : error);
        state.refusals.set(name, (state.refusals.get(name) ?? 0) + 1);
        const open = state.outages.at(-1);
        if (!open || open.to !== undefined) state.outages.push({ from: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  state.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return state;
}

async function storedIds(url: string): Promise<Set<string>> {
  const store = await PgStore.open(url);
  try {
    return new Set((await store.agreements.list({ limit: 1_000_000, withoutDocument: true })).map((a) => a.id));
  } finally {
    await store.close();
  }
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe.skipIf(skipPostgres)('PostgreSQL restarted or stopped under load', () => {
  for (const { fault, count } of [
    { fault: 'restarted', count: 1 },
    { fault: 'restarted', count: 2 },
    { fault: 'stopped for 30 s', count: 1 },
    { fault: 'stopped for 30 s', count: 2 },
  ])
    it(`${fault}, ${count} instance(s): every create answered, none acknowledged lost, service back by itself`, async () => {
      postgres = await startPostgres();
      const db = postgres;
      for (let i = 0; i < count; i++)
        instances.push(
          await startInstance(
            instanceConfig(db.url, 4096),
            { logger: pino({ level: process.env.SHOW_FAULTS ? 'error' : 'silent' }) },
            { pollMs: 200 },
          ),
        );
      const clients = [0, 1, 2, 3].map((k) => new WsagClient((instances[k % count] as RunningInstance).url));
      const running = await load(clients);
      await until(() => running.acknowledged.length >= 20, 20_000);
      const before = running.acknowledged.length;
      const faultAt = Date.now();
      if (fault === 'restarted') db.restart();
      else {
        db.pause();
        await new Promise((resolve) => setTimeout(resolve, 30_000));
        db.resume();
      }
      const back = Date.now();
      // Served again: creates acknowledged after the database is back.
      await until(() => running.acknowledged.length >= before + 20, 60_000);
      await running.stop();
      expect(running.acknowledged.length).toBeGreaterThanOrEqual(before + 20);
      const stored = await storedIds(db.url);
      expect(running.acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      // Every refusal says in words that the service is unavailable for now (and whether anything may be stored).
      expect([...running.refusals.keys()].filter((k) => k !== 'ServiceUnavailable')).toEqual([]);
      const gap = running.outages.reduce((sum, o) => sum + ((o.to ?? Date.now()) - o.from), 0);
      console.log(
        `database ${fault}, ${count} instance(s): ${running.acknowledged.length} acknowledged, ` +
          `without service ${(gap / 1000).toFixed(1)} s (the fault took ${((back - faultAt) / 1000).toFixed(1)} s), ` +
          `refused: ${JSON.stringify(Object.fromEntries(running.refusals))}`,
      );
    }, 180_000);
});
