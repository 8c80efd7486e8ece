import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { parseXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { createAgreementBody, faultOf, post, soap11, soap12 } from '../support/soap.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Every face answers every failure in
 * its own form (a problem document under /api, a SOAP Fault on a port, plain text
 * elsewhere), never a stack, a path or the framework's page; every answer is well-formed.
 */
let server: TestServer;
let factory: string;
let offer: string;

beforeAll(async () => {
  server = await startTestServer();
  factory = `${server.url}/wsag/AgreementFactory`;
  const template = (await new WsagClient(server.url).templates()).find((t) =>
    t.includes('<wsag:Name>deadline-job</wsag:Name>'),
  ) as string;
  offer = offerFromTemplate(template);
});
afterAll(async () => server.close());

const noLeak = (text: string) => {
  expect(text).not.toMatch(/\bat .*\.(ts|js):\d+|<html|<!DOCTYPE html|\/work\/|node_modules|[A-Z]\w+Error:/);
};

/** A well-formed document, by a parser that does not recover. */
const wellFormed = (text: string) => parseXml(text, 'answer').dispose();

async function problem(response: Response, status: number, code: string): Promise<string> {
  const text = await response.text();
  noLeak(text);
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(text) as { type: string; title: string; status: number; detail: string };
  expect(body).toMatchObject({ title: code, status, type: `https://schemas.wsag-server.org/2026/11/faults#${code}` });
  return body.detail;
}

/** Sends raw bytes and returns the first answer (status line and body) without ending the request. */
function raw(request: string | Buffer, waitMs = 5000, url = server.url): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer || 'no answer');
    }, waitMs);
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (/\r\n\r\n/.test(answer) && /content-length: (\d+)/i.test(answer)) {
        const length = Number(/content-length: (\d+)/i.exec(answer)?.[1]);
        if (answer.split('\r\n\r\n')[1]!.length >= length) {
          clearTimeout(timer);
          socket.destroy();
          resolve(answer);
        }
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer || 'no answer');
    });
    socket.on('error', reject);
  });
}

describe('the /api face answers every failure with a problem document (class 2)', () => {
  it('a broken percent-encoding in a path parameter', async () => {
    const detail = await problem(await fetch(`${server.url}/api/agreements/%E0%A4%A/report`), 400, 'MalformedMessage');
    expect(detail).toMatch(/^the URL holds a malformed percent-encoding/);
  });

  it('an unknown charset on subscriptions and on the countersignature', async () => {
    const subscribe = await fetch(`${server.url}/api/agreements/x/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=klingon' },
      body: '{}',
    });
    expect(await problem(subscribe, 415, 'UnsupportedMediaType')).toBe(
      'charset "klingon" is not supported: send UTF-8',
    );
    const countersign = await fetch(`${server.url}/api/agreements/x/countersignature`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml; charset=klingon' },
      body: '<a/>',
    });
    expect(await problem(countersign, 415, 'UnsupportedMediaType')).toBe(
      'charset "klingon" is not supported: send UTF-8',
    );
  });

  it('a subscription body over 16 KiB', async () => {
    const big = await fetch(`${server.url}/api/agreements/x/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"url":"${'a'.repeat(17 * 1024)}"}`,
    });
    expect(await problem(big, 413, 'MessageTooLarge')).toMatch(/the limit is 16384 bytes$/);
  });

  it('a gzip or deflate body that does not decompress', async () => {
    for (const encoding of ['gzip', 'deflate']) {
      const broken = await fetch(`${server.url}/api/agreements/x/subscriptions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: 'not compressed at all',
      });
      expect(await problem(broken, 400, 'MalformedMessage')).toMatch(/^the request body could not be read/);
    }
  });

  it('a compressed body that does decompress is read', async () => {
    const body = zlib.gzipSync(JSON.stringify({ url: 'ftp://example.org/' }));
    const answer = await fetch(`${server.url}/api/agreements/x/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    // Read, and refused for what it says: no agreement x.
    expect(await problem(answer, 404, 'UnknownResource')).toBe('no agreement with id "x"');
  });

  it('an unknown /api route is a problem document too; a static route answers plain text', async () => {
    await problem(await fetch(`${server.url}/api/nothing-here`), 404, 'UnknownResource');
    const schema = await fetch(`${server.url}/schemas/%E0%A4%A`);
    expect(schema.status).toBe(400);
    expect(schema.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await schema.text();
    noLeak(text);
    expect(text).toMatch(/^MalformedMessage: the URL holds a malformed percent-encoding/);
  });
});

describe('every SOAP answer is well-formed XML (class 4)', () => {
  it('a wsa:MessageID holding "]]>" comes back escaped in wsa:RelatesTo', async () => {
    const id = 'urn:x]]>&<"\'';
    const header = `<wsa:Action xmlns:wsa="${ns.wsa}">${ns.wsag}/AgreementFactory/CreateAgreementRequest</wsa:Action><wsa:MessageID xmlns:wsa="${ns.wsa}">urn:x]]&gt;&amp;&lt;"'</wsa:MessageID>`;
    const response = await post(factory, soap11(createAgreementBody(offer), header));
    expect(response.status).toBe(200);
    const doc = parseXml(response.text, 'answer');
    try {
      expect(doc.get('//wsa:RelatesTo', { wsa: ns.wsa })?.content).toBe(id);
    } finally {
      doc.dispose();
    }
  });

  it('a NUL inside a refused declaration is not echoed raw into the fault', async () => {
    const response = await post(factory, `<!DOC\u0000TYPE x>${soap11('<x/>')}`);
    expect(response.text).not.toContain('\u0000');
    wellFormed(response.text);
    expect(faultOf(response.text).code).toBe('MalformedMessage');
  });
});

describe('a declared body over the limit is refused at once (class 5)', () => {
  it('Content-Length above the limit with a short body: 413 without waiting for the rest', async () => {
    const started = Date.now();
    const answer = await raw(
      `POST /wsag/AgreementFactory HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 50000000\r\n\r\n<soap:Envelope`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toContain('MessageTooLarge');
    expect(answer).toContain('declared as 50000000 bytes (Content-Length); the limit is 1048576 bytes');
    expect(Date.now() - started).toBeLessThan(4000); // the answer came long before the 5 s the helper would wait
  });
});

describe('a request that never arrives whole does not hold its connection', () => {
  it('is cut off with 408 after WSAG_REQUEST_TIMEOUT_SECONDS', async () => {
    const slow = await startTestServer({ config: { requestTimeoutSeconds: 1 } });
    try {
      const started = Date.now();
      const answer = await raw(
        `POST /wsag/AgreementFactory HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 1000\r\n\r\n<soap:Envelope`,
        8000,
        slow.url,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(Date.now() - started).toBeLessThan(6000);
      expect((await fetch(`${slow.url}/healthz`)).status).toBe(200);
    } finally {
      await slow.close();
    }
  });
});

describe('the transport rules of SOAP and HTTP (class 8)', () => {
  it('invalid UTF-8 is refused naming the byte, not replaced', async () => {
    const text = soap11(createAgreementBody(offer.replace('<wsag:Name>', '<wsag:Name>caf\u00e9 ')));
    const bytes = Buffer.from(text);
    const at = bytes.indexOf(Buffer.from('caf')) + 3;
    bytes[at] = 0xff; // not a UTF-8 lead byte
    const response = await post(factory, bytes);
    expect(faultOf(response.text)).toEqual({
      code: 'MalformedMessage',
      message: `request body is not valid UTF-8 (byte ${at} starts a sequence that is not): send UTF-8`,
    });
  });

  it('a charset other than UTF-8, UTF-16 and ISO-8859-1 is refused with UnsupportedMediaType', async () => {
    const response = await post(factory, soap11(createAgreementBody(offer)), 'text/xml; charset=shift_jis');
    expect(response.status).toBe(415);
    expect(faultOf(response.text)).toEqual({
      code: 'UnsupportedMediaType',
      message:
        'the Content-Type charset "shift_jis" is not read here: send the SOAP message as UTF-8 (UTF-16 and ' +
        'ISO-8859-1 are read too)',
    });
  });

  const unknown = (attrs: string) => `<x:Transaction xmlns:x="urn:example:tx" ${attrs}>42</x:Transaction>`;

  it('SOAP 1.1: an unknown header block with mustUnderstand="1" is a soap:MustUnderstand fault, nothing created', async () => {
    const before = (await new WsagClient(server.url).agreements()).length;
    const response = await post(
      factory,
      soap11(createAgreementBody(offer), unknown(`xmlns:s="${ns.soap11}" s:mustUnderstand="1"`)),
    );
    expect(response.status).toBe(500);
    expect(response.text).toContain('<faultcode>soap:MustUnderstand</faultcode>');
    expect(faultOf(response.text).message).toMatch(
      /^header block \{urn:example:tx\}Transaction is marked mustUnderstand/,
    );
    expect((await new WsagClient(server.url).agreements()).length).toBe(before);
  });

  it('SOAP 1.2: env:MustUnderstand with an env:NotUnderstood header naming the block', async () => {
    const response = await post(
      factory,
      soap12(createAgreementBody(offer), unknown(`xmlns:s="${ns.soap12}" s:mustUnderstand="true"`)),
      'application/soap+xml; charset=utf-8',
    );
    wellFormed(response.text);
    expect(response.text).toContain('<soap:Value>soap:MustUnderstand</soap:Value>');
    expect(response.text).toMatch(/<soap:NotUnderstood xmlns:nu="urn:example:tx" qname="nu:Transaction"\/>/);
  });

  it('a block for another role, or not marked, is no obstacle; understood blocks marked mustUnderstand are processed', async () => {
    const otherActor = unknown(`xmlns:s="${ns.soap11}" s:mustUnderstand="1" s:actor="urn:example:some-proxy"`);
    const notMarked = unknown('');
    const action = `<wsa:Action xmlns:wsa="${ns.wsa}" xmlns:s="${ns.soap11}" s:mustUnderstand="1">${ns.wsag}/AgreementFactory/CreateAgreementRequest</wsa:Action>`;
    const response = await post(factory, soap11(createAgreementBody(offer), otherActor + notMarked + action));
    expect(response.status).toBe(200);
  });

  it.each(['PUT', 'PATCH', 'DELETE', 'TRACE'])('%s on a SOAP port is 405 with Allow', async (method) => {
    const { port, hostname } = new URL(server.url);
    const answer = await new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
      const req = http.request({ host: hostname, port, method, path: '/wsag/AgreementFactory' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer).toMatchObject({ status: 405, allow: 'GET, POST' });
    expect(answer.body).toMatch(/^MethodNotAllowed: AgreementFactory answers POST/);
  });
});
