import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardMac } from '../../src/crypto/forward-mac.js';
import { checkingForwards, wasForwarded } from '../../src/web/forwarded-requests.js';

/**
 * Instances prove a forwarded request with an HMAC, never the secret. The
 * leader's listener checks the MAC over method, path, time, nonce, body and chain before
 * anything reads the request, then hands the body on intact; a changed, stale, replayed or
 * unkeyed request is refused with 401.
 */
const secret = 'a cluster secret of 32 characters';
let server: http.Server;
let url = '';
beforeAll(async () => {
  const echo: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      res.end(JSON.stringify({ forwarded: wasForwarded(req), body: Buffer.concat(chunks).toString() })),
    );
  };
  server = http.createServer(
    checkingForwards(echo, {
      secret,
      maxBodyBytes: 1024 * 1024,
      now: () => new Date(),
      logger: pino({ level: 'silent' }),
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise((resolve) => server.close(resolve)));

const send = (path: string, body: string, headers: Record<string, string>) =>
  fetch(url + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const signed = (path: string, body: string, chain = 'MIIB', at = new Date(), key = secret) => ({
  'x-wsag-client-chain': chain,
  'x-wsag-forward-mac': forwardMac(key, { method: 'POST', path, body: Buffer.from(body), chain }, at),
});

describe('forwarded requests', () => {
  it('a request with a good MAC reaches the routes with its body intact, marked forwarded; the secret is never sent', async () => {
    const body = JSON.stringify({ big: 'x'.repeat(200_000) });
    const headers = signed('/api/x?y=1', body);
    expect(JSON.stringify(headers)).not.toContain(secret);
    const answer = await send('/api/x?y=1', body, headers);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ forwarded: true, body });
    // Without a MAC the request passes unmarked (its chain header is then refused by the authenticator).
    expect(await (await send('/api/x', 'plain', {})).json()).toEqual({ forwarded: false, body: 'plain' });
  });

  it('refuses a changed body, path or chain, a stale or replayed message, and a MAC made with another key', async () => {
    const refusal = async (answer: Response) => [answer.status, (await answer.text()).trim()];
    expect(await refusal(await send('/api/x', '{"a":2}', signed('/api/x', '{"a":1}')))).toEqual([
      401,
      expect.stringMatching(/^NotAuthenticated: the forwarded request's MAC does not hold/),
    ]);
    expect((await send('/api/y', '{}', signed('/api/x', '{}'))).status).toBe(401);
    expect((await send('/api/x', '{}', { ...signed('/api/x', '{}'), 'x-wsag-client-chain': 'MIIC' })).status).toBe(401);
    expect(
      await refusal(await send('/api/x', '{}', signed('/api/x', '{}', 'MIIB', new Date(Date.now() - 120_000)))),
    ).toEqual([401, expect.stringMatching(/more than 60 s from now/)]);
    expect(
      (await send('/api/x', '{}', signed('/api/x', '{}', 'MIIB', new Date(), 'another secret of 32 characters!')))
        .status,
    ).toBe(401);
    const once = signed('/api/x', '{}');
    expect((await send('/api/x', '{}', once)).status).toBe(200);
    expect(await refusal(await send('/api/x', '{}', once))).toEqual([
      401,
      'NotAuthenticated: this forwarded request was received already',
    ]);
  });
});
