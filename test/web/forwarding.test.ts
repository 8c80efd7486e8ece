import type http from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { standbyApp, type ForwardingOptions } from '../../src/web/forwarding.js';
import { serveOnLoopback } from '../support/loopback.js';
import { faultOf, post, soap11 } from '../support/soap.js';

/** A standby's forwarding (src/web/forwarding.ts) against stand-in leaders; the real cluster is test/cluster. */
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function serve(handler: http.RequestListener): Promise<string> {
  const { url, close } = await serveOnLoopback(handler);
  closers.push(close);
  return url;
}

function standby(leaderUrl: ForwardingOptions['leaderUrl'], extra: Partial<ForwardingOptions> = {}): Promise<string> {
  return serve(
    standbyApp({
      leaderUrl,
      instanceUrl: 'http://standby.invalid',
      maxBodyBytes: 1000,
      waitMs: 400,
      soapPaths: ['/wsag/AgreementFactory'],
      now: () => new Date('2026-11-25T12:00:00Z'),
      logger: pino({ level: 'silent' }),
      ...extra,
    }),
  );
}

describe('a standby forwarding to the planning leader', () => {
  it('relays the request and the answer, dropping headers a caller may not set and saying who forwarded', async () => {
    let seen: http.IncomingHttpHeaders = {};
    let body = '';
    const leader = await serve((req, res) => {
      seen = req.headers;
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () =>
        res.writeHead(201, { 'content-type': 'text/plain', 'x-answer': 'yes' }).end(`got ${req.method} ${req.url}`),
      );
    });
    const url = await standby(async () => leader);
    const response = await fetch(`${url}/api/x?y=1`, {
      method: 'POST',
      body: 'hello',
      headers: {
        'content-type': 'application/json',
        'x-wsag-client-chain': 'forged',
        'x-wsag-forward-mac': 'forged',
        'x-custom': 'kept',
      },
    });
    expect([response.status, response.headers.get('x-answer'), await response.text()]).toEqual([
      201,
      'yes',
      'got POST /api/x?y=1',
    ]);
    expect(body).toBe('hello');
    expect(seen).toMatchObject({
      'x-custom': 'kept',
      'x-wsag-forwarded-by': 'http://standby.invalid',
      'x-forwarded-proto': 'http',
      'content-length': '5',
    });
    expect(seen['x-wsag-client-chain']).toBeUndefined();
    expect(seen['x-wsag-forward-mac']).toBeUndefined();
  });

  it('with no leader: a SOAP caller gets a ServiceUnavailable fault, an API caller a problem document, both 503', async () => {
    const url = await standby(async () => undefined);
    const soap = await post(`${url}/wsag/AgreementFactory`, soap11('<x/>'));
    expect(soap.status).toBe(503);
    expect(faultOf(soap.text)).toEqual({
      code: 'ServiceUnavailable',
      message: 'no planning leader answered within 0.4 s (a takeover may be under way): try again shortly',
    });
    const api = await fetch(`${url}/api/agreements`);
    expect(api.status).toBe(503);
    expect(await api.json()).toMatchObject({ error: 'ServiceUnavailable' });
  });

  it('waits through a takeover: a leader that is not reachable yet, then one that is', async () => {
    const leader = await serve((_req, res) => res.end('new leader'));
    let asked = 0;
    const url = await standby(
      async (fresh) => {
        asked++;
        return fresh && asked > 2 ? leader : 'http://127.0.0.1:1'; // the dead leader's address, refused
      },
      { waitMs: 5000 },
    );
    expect(await (await fetch(`${url}/api/plan`)).text()).toBe('new leader');
    expect(asked).toBe(3);
  });

  it('a leader that dies holding the request: the outcome is unknown, and the caller is told so rather than the request sent again', async () => {
    let received = 0;
    const leader = await serve((req) => {
      received++;
      req.socket.destroy();
    });
    const url = await standby(async () => leader);
    const response = await post(`${url}/wsag/AgreementFactory`, soap11('<x/>'));
    expect(response.status).toBe(503);
    expect(faultOf(response.text).message).toMatch(
      /^the planning leader failed while it held this request \(.+\); whether it was carried out is unknown/,
    );
    expect(received).toBe(1);
  });

  it('answers its own /healthz, refuses an over-long body, and never forwards a forwarded request again', async () => {
    const url = await standby(async () => undefined);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok', role: 'standby', leader: null });
    const large = await post(`${url}/wsag/AgreementFactory`, soap11('x'.repeat(2000)));
    expect([large.status, faultOf(large.text).code]).toEqual([413, 'MessageTooLarge']);
    const again = await fetch(`${url}/api/plan`, { headers: { 'x-wsag-forwarded-by': 'http://other.invalid' } });
    expect([again.status, again.headers.get('x-wsag-not-leader')]).toEqual([503, '1']);
  });
});
