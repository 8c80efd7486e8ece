import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAtRate } from '../../bench/fixed-rate.js';

/** A server answering each request after `delayMs`, counting the connections it was sent on. */
async function slowServer(delayMs: number, status = 200) {
  let requests = 0;
  const sockets = new Set<unknown>();
  const server = http.createServer((req, res) => {
    requests++;
    sockets.add(req.socket);
    req.resume();
    req.on('end', () => setTimeout(() => res.writeHead(status).end('done'), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests: () => requests,
    connections: () => sockets.size,
  };
}

describe('load at a fixed rate', () => {
  let server: http.Server | undefined;
  afterEach(() => server?.close());

  it('sends every request due, on at most the connections given, and times each from when it was due', async () => {
    // One connection answering in 50 ms serves 20 a second; 40 a second for one second
    // leaves the last requests waiting about a second: timed from the send they would take 50 ms.
    const slow = await slowServer(50);
    server = slow.server;
    const load = await loadAtRate({ url: slow.url, body: 'x', headers: {} }, { rate: 40, connections: 1, seconds: 1 });
    expect(slow.requests()).toBe(40);
    expect(slow.connections()).toBe(1);
    expect(load).toMatchObject({ due: 40, ok: 40, errors: 0 });
    expect(load.waited).toBeGreaterThan(30);
    expect(load.max).toBeGreaterThan(700);
    expect(load.p99).toBeGreaterThan(700);
    expect(load.p50).toBeGreaterThan(300);
    expect(load.perSecond).toBeLessThan(25);
  });

  it('with connections enough, the latency is the answer time and nothing waits', async () => {
    const slow = await slowServer(50);
    server = slow.server;
    const load = await loadAtRate({ url: slow.url, body: 'x', headers: {} }, { rate: 40, connections: 16, seconds: 1 });
    expect(load).toMatchObject({ due: 40, ok: 40, errors: 0, waited: 0 });
    expect(load.p50).toBeGreaterThanOrEqual(49);
    expect(load.p50).toBeLessThan(300);
  });

  it('counts answers other than 200 as errors, not latencies', async () => {
    const failing = await slowServer(0, 500);
    server = failing.server;
    const load = await loadAtRate(
      { url: failing.url, body: 'x', headers: {} },
      { rate: 20, connections: 4, seconds: 0.5 },
    );
    expect(load).toMatchObject({ due: 10, ok: 0, errors: 10 });
    expect(load.p99).toBeNaN();
  });
});
