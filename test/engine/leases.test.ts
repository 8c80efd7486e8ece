import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wsag } from '../cli/support.js';
import { at, planOf, reservationOffer, simulatedServer, type SimulatedServer } from './run-time-support.js';

/**
 * Leases (Shirako): a reservation agreement is a lease its holder extends or
 * shrinks with `wsag lease` (a renegotiation the plan must allow), and hears about
 * through its subscription before the window ends. An 8-node site on a simulated clock.
 */
describe('leases', () => {
  let server: SimulatedServer;
  let receiver: http.Server;
  const received: Array<{ agreementId: string; notice?: { kind: string; endsAt: string } }> = [];
  beforeAll(async () => {
    server = await simulatedServer({ nodes: 8 });
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await server?.close();
    receiver?.close();
  });
  const hour = 3600;
  const lease = async (nodes: number, from: number, to: number) =>
    (await server.client.createAgreement(await reservationOffer(server.client, nodes, at(from * hour), at(to * hour))))
      .agreementId;
  const booking = async (id: string) => (await planOf(server)).bookings.find((b) => b.id === id);

  it('extends a lease the plan can keep, and refuses one it cannot, saying why', async () => {
    const id = await lease(4, 2, 4);
    const extended = await wsag(['lease', 'extend', id, '--until', at(6 * hour).toISOString()], { url: server.url });
    expect(extended.err).toEqual([]);
    expect(extended.out[0]).toMatch(
      new RegExp(`^lease ${id} extended until 2026-11-23T06:00:00Z \\(price now \\d+\\.\\d\\d EUR\\)$`),
    );
    expect(new Date((await booking(id))?.end as string)).toEqual(at(6 * hour));
    // Another lease takes the other four nodes from 6 h and every node from 8 h: no room to extend past 8 h.
    await lease(4, 6, 10);
    await lease(4, 8, 10);
    const refused = await wsag(['lease', 'extend', id, '--until', at(9 * hour).toISOString()], { url: server.url });
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toMatch(new RegExp(`^error: lease ${id} not changed: .*4 nodes`));
    expect(new Date((await booking(id))?.end as string)).toEqual(at(6 * hour));
  });

  it('shrinks a lease to fewer nodes', async () => {
    const id = await lease(3, 12, 14);
    const shrunk = await wsag(['lease', 'shrink', id, '--nodes', '1'], { url: server.url });
    expect(shrunk.out[0]).toMatch(new RegExp(`^lease ${id} shrunk to 1 node`));
    expect((await booking(id))?.nodeIds).toHaveLength(1);
  });

  it('the holder hears before the lease ends, through its subscription', async () => {
    const id = await lease(2, 20, 22);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await fetch(`${server.url}/api/agreements/${id}/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    await server.advanceTo(22 * hour - 601);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(received.filter((n) => n.agreementId === id && n.notice)).toEqual([]);
    await server.advanceTo(22 * hour - 599);
    // The server's one-second timer sends due notices.
    for (let i = 0; i < 30 && !received.some((n) => n.agreementId === id && n.notice); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    await server.notifications.idle();
    expect(received.filter((n) => n.agreementId === id && n.notice)).toEqual([
      expect.objectContaining({
        agreementId: id,
        notice: { kind: 'lease-ending', endsAt: at(22 * hour).toISOString() },
      }),
    ]);
  });

  it('after a restart, the holder still hears before the lease ends (the start-up watches every lease it reads)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-lease-restart-'));
    // No run time: nothing changes the agreement after the restart, so only the start-up can watch it.
    const first = await simulatedServer({ nodes: 8, dataDir, sqlite: true, config: { executor: 'none' } });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const id = (
      await first.client.createAgreement(await reservationOffer(first.client, 2, at(30 * hour), at(32 * hour)))
    ).agreementId;
    await fetch(`${first.url}/api/agreements/${id}/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    await first.close();

    const second = await simulatedServer({
      nodes: 8,
      dataDir,
      sqlite: true,
      startAt: at(31 * hour),
      config: { executor: 'none' },
    });
    try {
      await second.advanceTo(32 * hour - 599);
      for (let i = 0; i < 30 && !received.some((n) => n.agreementId === id && n.notice); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      await second.notifications.idle();
      expect(received.filter((n) => n.agreementId === id && n.notice)).toEqual([
        expect.objectContaining({
          agreementId: id,
          notice: { kind: 'lease-ending', endsAt: at(32 * hour).toISOString() },
        }),
      ]);
    } finally {
      await second.close();
    }
  });
});
