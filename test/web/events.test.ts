import type http from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/domain/identity.js';
import type { AgreementChange } from '../../src/engine/agreements/agreement-changes.js';
import { EventStream } from '../../src/web/events.js';

/** /api/events on its own: who is told what, and the bounds on open streams (2 here, 1 per party; operators exempt). */
const stream = new EventStream(2, 1);
let server: http.Server;
let url = '';
beforeAll(async () => {
  const app = express();
  app.use(
    stream.router(
      (req) =>
        ({ identity: String(req.headers['x-who'] ?? 'alice'), isAdmin: req.headers['x-who'] === 'operator' }) as Caller,
    ),
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/events`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Opens a stream and collects what arrives on it. */
async function follow(who: string): Promise<{ text: () => string; close: () => void }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { 'x-who': who }, signal: controller.signal });
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  let received = '';
  const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      received += new TextDecoder().decode(value);
    }
  })();
  return { text: () => received, close: () => controller.abort() };
}

const change = (initiator: string) =>
  ({ after: { id: 'agr-1', state: 'Observed', initiator }, notes: [] }) as unknown as AgreementChange;
/** Waits (up to 10 s) until `ready` holds: events cross a socket, however loaded the machine. */
async function until(ready: () => boolean): Promise<void> {
  for (const started = Date.now(); !ready(); ) {
    if (Date.now() - started > 10_000) throw new Error('timed out waiting for the events');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const events = (text: string) => text.match(/^event: \w+$/gm) ?? [];

describe('GET /api/events', () => {
  it("tells an agreement's initiator and operators of its changes, and only operators of re-plans", async () => {
    const [alice, operator] = [await follow('alice'), await follow('operator')];
    stream.agreementChanged(change('bob'));
    stream.agreementChanged(change('alice'));
    stream.replanned('node-failed', ['agr-1']);
    stream.agreementChanged(change('alice')); // the last one: when alice has it, she has everything sent to her
    await until(() => events(alice.text()).length === 2 && events(operator.text()).length === 4);
    expect(events(alice.text())).toEqual(['event: agreement', 'event: agreement']);
    expect(events(operator.text())).toEqual([
      'event: agreement',
      'event: agreement',
      'event: replan',
      'event: agreement',
    ]);
    expect(operator.text()).toContain('data: {"kind":"replan","cause":"node-failed","moved":["agr-1"]}');

    // Alice has one stream open, the most one party keeps here: a second is refused, with a problem document.
    const second = await fetch(url, { headers: { 'x-who': 'alice' } });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('30');
    expect((await second.json()) as { title: string; detail: string }).toMatchObject({
      title: 'TooManyStreams',
      detail: 'alice has 1 event streams open, the most one party keeps: close a dashboard first',
    });
    // Bob takes the last of the two; then the server is full for parties, never for an operator.
    const bob = await follow('bob');
    const carol = await fetch(url, { headers: { 'x-who': 'carol' } });
    expect(carol.status).toBe(503);
    expect(((await carol.json()) as { title: string }).title).toBe('TooManyStreams');
    const operator2 = await follow('operator');
    operator2.close();
    bob.close();
    // A stream closed makes room for another.
    alice.close();
    operator.close();
    for (const started = Date.now(); ; ) {
      const response = await fetch(url, { headers: { 'x-who': 'alice' } });
      if (response.status === 200) {
        await response.body?.cancel();
        break;
      }
      await response.arrayBuffer();
      if (Date.now() - started > 10_000) throw new Error('no stream was let in after two were closed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
});
