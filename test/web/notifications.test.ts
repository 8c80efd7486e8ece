import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateNotification } from '../../src/engine/execution/notifications.js';
import {
  at,
  deadlineOffer,
  getJson,
  postJson,
  simulatedServer,
  type SimulatedServer,
} from '../engine/run-time-support.js';

/**
 * HTTP callback subscriptions: the owner of an agreement registers a URL, and
 * every change of the agreement's states is POSTed there as JSON. A local listener plays
 * the subscriber; the server runs on a simulated clock with the simulated executor.
 */
let server: SimulatedServer;
let listener: http.Server;
let callbackUrl: string;
const received: StateNotification[] = [];
let failNext = 0;

beforeAll(async () => {
  server = await simulatedServer({ parts: { notificationBackoffMs: 1 } });
  listener = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (failNext > 0) {
        failNext--;
        res.writeHead(503).end();
        return;
      }
      received.push(JSON.parse(body) as StateNotification);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/wsag-callbacks`;
});
afterAll(async () => {
  await server?.close();
  await new Promise<void>((resolve) => listener.close(() => resolve()));
});

describe('notifications of state changes', () => {
  it("POSTs every change of the agreement's states to each subscriber, until the agreement is complete", async () => {
    const id = (
      await server.client.createAgreement(await deadlineOffer(server.client, { level: 'Standard', deadline: at(5000) }))
    ).agreementId;
    const subscribed = await postJson<{ id: string; url: string; agreementId: string }>(
      `${server.url}/api/agreements/${id}/subscriptions`,
      { url: callbackUrl },
    );
    expect(subscribed.status).toBe(200);
    expect(subscribed.body).toMatchObject({ agreementId: id, url: callbackUrl });
    // The same URL again is the same subscription.
    expect(
      (await postJson<{ id: string }>(`${server.url}/api/agreements/${id}/subscriptions`, { url: callbackUrl })).body
        .id,
    ).toBe(subscribed.body.id);
    expect((await getJson<unknown[]>(`${server.url}/api/agreements/${id}/subscriptions`)).body).toHaveLength(1);

    failNext = 1; // the first delivery fails once and is tried again
    await server.runUntilIdle();

    const states = received
      .filter((n) => n.agreementId === id)
      .map((n) => [n.state, n.serviceTerms[0]?.state, n.serviceTerms[0]?.subState ?? '', n.guaranteeTerms[0]?.state]);
    expect(states).toEqual([
      ['Observed', 'Ready', 'Processing', 'NotDetermined'], // computing from 30 s
      ['Observed', 'Completed', '', 'NotDetermined'],
      ['Observed', 'Completed', '', 'Fulfilled'],
      ['Complete', 'Completed', '', 'Fulfilled'],
    ]);
    expect(received.at(-1)?.at).toBe(at(30 + 5 * 720 + 4 * 120).toISOString()); // 5 intervals of 720 s and 4 checkpoints of 120 s after 30 s
    expect(await server.client.state(id)).toMatchObject({ state: 'Complete' });
    // After the final state the subscription is gone.
    expect((await getJson<unknown[]>(`${server.url}/api/agreements/${id}/subscriptions`)).body).toEqual([]);
  });

  it('takes only http(s) URLs, a bounded number per agreement, for agreements that exist', async () => {
    const id = (
      await server.client.createAgreement(
        await deadlineOffer(server.client, { level: 'Standard', deadline: at(20_000) }),
      )
    ).agreementId;
    const subscribe = (url: unknown) =>
      postJson<{ error: string; message: string }>(`${server.url}/api/agreements/${id}/subscriptions`, { url });
    expect(await subscribe('ftp://example.org/x')).toMatchObject({ status: 400, body: { error: 'MalformedMessage' } });
    expect(await subscribe(42)).toMatchObject({ status: 400 });
    for (let i = 0; i < 5; i++) expect((await subscribe(`${callbackUrl}?n=${i}`)).status).toBe(200);
    const sixth = await subscribe(`${callbackUrl}?n=6`);
    expect(sixth).toMatchObject({ status: 400, body: { error: 'MalformedMessage' } });
    expect(sixth.body.message).toContain('has 5 subscriptions already');
    const list = (await getJson<Array<{ id: string }>>(`${server.url}/api/agreements/${id}/subscriptions`)).body;
    const removed = await fetch(`${server.url}/api/agreements/${id}/subscriptions/${list[0]?.id}`, {
      method: 'DELETE',
    });
    expect(removed.status).toBe(204);
    expect((await subscribe(`${callbackUrl}?n=6`)).status).toBe(200);
    expect(
      (await postJson(`${server.url}/api/agreements/no-such-agreement/subscriptions`, { url: callbackUrl })).status,
    ).toBe(404);
    const notJson = await fetch(`${server.url}/api/agreements/${id}/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'url=x',
    });
    expect(notJson.status).toBe(400);
    // A form's body is refused before it is read: a page on another site could send it.
    const form = await fetch(`${server.url}/api/agreements/${id}/subscriptions`, { method: 'POST', body: 'url=x' });
    expect([form.status, ((await form.json()) as { error: string }).error]).toEqual([415, 'UnsupportedMediaType']);
  });
});
