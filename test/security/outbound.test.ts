import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { OutboundPolicy, rangeOf } from '../../src/client/outbound.js';
import { NotAuthorized } from '../../src/domain/errors.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The server calls out only where the site allows. Callback and
 * acceptance URLs that reach loopback, private or link-local addresses are refused, at
 * registration and at each call, however they are written; redirects are not followed.
 */
describe('outbound calls', () => {
  const servers: Array<{ close(): unknown }> = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('knows loopback, private and link-local addresses however they are written', () => {
    expect(
      [
        '127.0.0.1',
        '127.9.9.9',
        '::1',
        '::ffff:127.0.0.1',
        '0.0.0.0',
        '10.1.2.3',
        '172.20.0.1',
        '192.168.1.1',
        'fd00::1',
        '169.254.169.254',
        'fe80::1',
        '8.8.8.8',
        '2001:db8::1',
      ].map((a) => rangeOf(a) ?? 'public'),
    ).toEqual([
      'loopback',
      'loopback',
      'loopback',
      'loopback',
      'loopback',
      'private',
      'private',
      'private',
      'private',
      'link-local',
      'link-local',
      'public',
      'public',
    ]);
  });

  it('refuses a name that resolves to a range the site does not allow, and lets it through when allowed', async () => {
    const refusal = await new OutboundPolicy().check('http://localhost:9/hook', 'the callback').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refusal).toBeInstanceOf(NotAuthorized);
    expect((refusal as Error).message).toMatch(
      /^the callback http:\/\/localhost:9\/hook reaches (127\.0\.0\.1|::1), a loopback address: this server calls public addresses only, unless the site allows the range \(WSAG_OUTBOUND_ALLOW=loopback\)$/,
    );
    await new OutboundPolicy(['loopback']).check('http://localhost:9/hook', 'the callback');
    const resolvesPrivate = new OutboundPolicy(['loopback'], async () => ['8.8.8.8', '10.0.0.7']);
    await expect(resolvesPrivate.check('http://rebinding.example/hook', 'the callback')).rejects.toThrow(
      'reaches 10.0.0.7, a private address',
    );
  });

  it('a server that allows none refuses loopback callbacks by name', async () => {
    const server: TestServer = await startTestServer({ config: { outboundAllow: [], admins: ['anonymous'] } });
    servers.push(server);
    const client = (await import('../../src/client/wsag-client.js')).WsagClient;
    const c = new client(server.url);
    const template = (await c.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { agreementId } = await c.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]),
    );
    for (const url of [
      'http://localhost:9/hook',
      'http://[::ffff:127.0.0.1]:9/hook',
      'http://169.254.169.254/latest/meta-data',
    ]) {
      const answer = await fetch(`${server.url}/api/agreements/${agreementId}/subscriptions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      const body = (await answer.json()) as { error: string; detail: string };
      expect([answer.status, body.error], url).toEqual([403, 'NotAuthorized']);
      expect(body.detail).toContain('this server calls public addresses only');
    }
  });

  it('does not follow a redirect from an allowed callback to another address', async () => {
    const reached: string[] = [];
    const target = http.createServer((req, res) => {
      reached.push(req.url ?? '');
      res.end();
    });
    let asked = 0;
    const redirecting = http.createServer((_req, res) =>
      (asked++, res)
        .writeHead(307, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/internal` })
        .end(),
    );
    for (const s of [target, redirecting]) {
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
      servers.push({ close: () => new Promise((resolve) => s.close(resolve)) });
    }
    const server: TestServer = await startTestServer({ config: { admins: ['anonymous'] } });
    servers.push(server);
    const { WsagClient } = await import('../../src/client/wsag-client.js');
    const c = new WsagClient(server.url);
    const template = (await c.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { agreementId } = await c.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]),
    );
    const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`;
    expect(
      (
        await fetch(`${server.url}/api/agreements/${agreementId}/subscriptions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
        })
      ).status,
    ).toBe(200);
    await c.terminate(agreementId); // a change of state: a notification is sent
    for (let i = 0; i < 100 && asked === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(asked).toBeGreaterThan(0);
    expect(reached).toEqual([]);
  });
});
