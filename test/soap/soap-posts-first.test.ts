import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { soapPostsFirst } from '../../src/soap/http-endpoint.js';
import type { Port } from '../../src/soap/operation.js';
import { ns } from '../../src/xml/namespaces.js';
import { serveOnLoopback } from '../support/loopback.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { post, soap11 } from '../support/soap.js';

const echo: Port = {
  name: 'Echo',
  targetNamespace: 'urn:test',
  path: '/wsag/Echo',
  wsdlFile: 'none.wsdl',
  operations: [
    {
      name: 'Echo',
      namespace: 'urn:test',
      element: 'Echo',
      action: 'urn:test:Echo',
      responseAction: 'urn:test:EchoResponse',
      handle: async () => '<t:EchoResponse xmlns:t="urn:test"/>',
    },
  ],
};

describe('SOAP POSTs ahead of the express application (soapPostsFirst)', () => {
  it('answers a POST to exactly a port path itself, and hands everything else to the rest', async () => {
    const handedOn: string[] = [];
    const answered: string[] = [];
    const front = await serveOnLoopback(
      soapPostsFirst(
        {
          ports: [echo],
          maxBodyBytes: 65536,
          maxXmlDepth: 64,
          baseUrl: () => 'http://example.org',
          identify: () => ({ identity: 'anonymous', isAdmin: false }),
          now: () => new Date(),
          logger: pino({ level: 'silent' }),
          onRequest: (done) => answered.push(`${done.port} ${done.operation} ${done.outcome}`),
        },
        (req, res) => {
          handedOn.push(`${req.method} ${req.url}`);
          res.writeHead(404).end('rest');
        },
      ),
    );
    try {
      const envelope = soap11('<t:Echo xmlns:t="urn:test"/>');
      const direct = await post(`${front.url}/wsag/Echo`, envelope);
      expect(direct.status).toBe(200);
      expect(direct.text).toContain('EchoResponse');
      for (const path of ['/wsag/Echo?x=1', '/wsag/Echo/', '/wsag/echo', '/wsag/Other'])
        expect((await post(front.url + path, envelope)).text).toBe('rest');
      expect(await (await fetch(`${front.url}/wsag/Echo?wsdl`)).text()).toBe('rest');
      expect(handedOn).toEqual([
        'POST /wsag/Echo?x=1',
        'POST /wsag/Echo/',
        'POST /wsag/echo',
        'POST /wsag/Other',
        'GET /wsag/Echo?wsdl',
      ]);
      expect(answered).toEqual(['Echo Echo ok']);
    } finally {
      await front.close();
    }
  });
});

describe('SOAP POSTs on the server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { clusterNodes: 4, documentThreads: 0 } });
  });
  afterAll(async () => server.close());

  const templates = soap11(
    `<wsrf-rp:GetResourceProperty xmlns:wsrf-rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">wsag:Template</wsrf-rp:GetResourceProperty>`,
  );
  const answeredOn = async (): Promise<number> => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const lines = text
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('wsag_soap_requests_total{') &&
          l.includes('port="AgreementFactory"') &&
          l.includes('outcome="ok"'),
      );
    return lines.reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };

  it('answers alike on the direct path and through the express router, counted in the metrics either way', async () => {
    const before = await answeredOn();
    const direct = await post(`${server.url}/wsag/AgreementFactory`, templates);
    const routed = await post(`${server.url}/wsag/AgreementFactory?from=test`, templates);
    expect(direct.status).toBe(200);
    expect(routed.status).toBe(200);
    expect(routed.contentType).toBe(direct.contentType);
    expect(routed.text).toBe(direct.text);
    expect(direct.text).toContain('advance-reservation');
    expect(await answeredOn()).toBe(before + 2);
  });
});
