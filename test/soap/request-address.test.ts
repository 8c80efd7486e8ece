import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/engine/configuration/index.js';
import { requestBaseUrl, trustedProxies } from '../../src/soap/request-address.js';
import { ns } from '../../src/xml/namespaces.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { soap11 } from '../support/soap.js';

/**
 * Addresses in answers (EPRs, WSDL ports) name where the client reached the server: with
 * HOST=0.0.0.0 and no WSAG_PUBLIC_URL they read http://0.0.0.0:8080/..., which no client can
 * call. WSAG_PUBLIC_URL first, then the request's Host (or a trusted proxy's X-Forwarded-Host
 * and -Proto), then the listening address, never an unspecified one.
 */
const request = (headers: Record<string, string>, remoteAddress = '10.1.2.3', encrypted = false) =>
  ({ headers, socket: { remoteAddress, encrypted } }) as unknown as IncomingMessage;

describe('requestBaseUrl', () => {
  const none = trustedProxies([]);
  const proxies = trustedProxies(['10.1.2.3', '192.168.0.0/16', 'fd00::/8']);

  it('names the Host the request was sent to, https on a TLS connection', () => {
    expect(requestBaseUrl(request({ host: 'Grid.Example.org:8080' }), none)).toBe('http://grid.example.org:8080');
    expect(requestBaseUrl(request({ host: 'grid.example.org' }, '10.1.2.3', true), none)).toBe(
      'https://grid.example.org',
    );
    expect(requestBaseUrl(request({ host: '[2001:db8::1]:8443' }), none)).toBe('http://[2001:db8::1]:8443');
  });

  it('names nothing for a missing, malformed or unspecified Host', () => {
    for (const host of [undefined, '', '0.0.0.0:8080', '[::]:8080', 'evil.org/x', 'a b', '"><x', 'h:99999999']) {
      const headers: Record<string, string> = host === undefined ? {} : { host };
      expect(requestBaseUrl(request(headers), none), String(host)).toBeUndefined();
    }
  });

  it('believes X-Forwarded-Host and -Proto only from a trusted proxy', () => {
    const headers = {
      host: 'backend:8080',
      'x-forwarded-host': 'sla.example.org, inner',
      'x-forwarded-proto': 'https',
    };
    expect(requestBaseUrl(request(headers, '10.9.9.9'), proxies)).toBe('http://backend:8080');
    expect(requestBaseUrl(request(headers, '10.1.2.3'), proxies)).toBe('https://sla.example.org');
    expect(requestBaseUrl(request(headers, '::ffff:192.168.4.5'), proxies)).toBe('https://sla.example.org');
    expect(requestBaseUrl(request(headers, 'fd00::17'), proxies)).toBe('https://sla.example.org');
    expect(requestBaseUrl(request({ ...headers, 'x-forwarded-proto': 'gopher' }, '10.1.2.3'), proxies)).toBe(
      'http://sla.example.org',
    );
  });

  it('WSAG_TRUSTED_PROXIES refuses an entry that is not an address or a range, by name', () => {
    expect(() => loadConfig({ WSAG_TRUSTED_PROXIES: '10.0.0.1, proxy.local' })).toThrow(
      /WSAG_TRUSTED_PROXIES: "proxy.local" is not an IP address or a CIDR range/,
    );
    expect(() => loadConfig({ WSAG_TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/"10.0.0.0\/33"/);
    expect(loadConfig({ WSAG_TRUSTED_PROXIES: '10.0.0.1, 10.2.0.0/16' }).trustedProxies).toEqual([
      '10.0.0.1',
      '10.2.0.0/16',
    ]);
  });
});

describe('a server listening on 0.0.0.0 without WSAG_PUBLIC_URL', () => {
  let server: TestServer;
  let port: number;
  beforeAll(async () => {
    server = await startTestServer({ config: { host: '0.0.0.0' } });
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => server.close());

  /** A request to 127.0.0.1 with the given Host header (fetch will not send one of its own choosing). */
  const send = (method: string, path: string, host: string, body?: string) =>
    new Promise<string>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          setHost: false,
          headers: { host, ...(body ? { 'content-type': 'text/xml; charset=utf-8' } : {}) },
        },
        (res) => resolve(text(res)),
      );
      req.on('error', reject);
      req.end(body);
    });

  it('announces itself by this host name, not 0.0.0.0', () => {
    expect(server.url).toBe(`http://${os.hostname()}:${port}`);
  });

  it('names the Host the client used in WSDL addresses and EPRs', async () => {
    const wsdl = await send('GET', '/wsag/AgreementFactory?wsdl', 'sla.example.org:8080');
    expect(wsdl).toContain('location="http://sla.example.org:8080/wsag/AgreementFactory"');
    const context =
      '<wsag-neg:NegotiationContext><wsag-neg:NegotiationType><wsag-neg:Negotiation/></wsag-neg:NegotiationType>' +
      '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>';
    const created = await send(
      'POST',
      '/wsag/NegotiationFactory',
      `127.0.0.1:${port}`,
      soap11(
        `<wsag-neg:InitiateNegotiationInput xmlns:wsag-neg="${ns.wsagNeg}">${context}</wsag-neg:InitiateNegotiationInput>`,
      ),
    );
    expect(created).toMatch(new RegExp(`<wsa:Address>http://127.0.0.1:${port}/wsag/Negotiation</wsa:Address>`));
  });

  it('without a Host (HTTP/1.0), names this host, never 0.0.0.0', async () => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end('GET /wsag/Agreement?wsdl HTTP/1.0\r\n\r\n'));
    const wsdl = await text(socket);
    expect(wsdl).toMatch(/^HTTP\/1.[01] 200/);
    expect(wsdl).toContain(`location="http://${os.hostname()}:${port}/wsag/Agreement"`);
    expect(wsdl).not.toContain('0.0.0.0');
  });
});
