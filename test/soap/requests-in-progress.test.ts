import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestsInProgress } from '../../src/soap/requests-in-progress.js';
import { ns } from '../../src/xml/namespaces.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { soap11 } from '../support/soap.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 4, documentThreads: 0 } });
});
afterAll(async () => server.close());

/** POSTs `body` to the AgreementFactory in two parts, calling `between` after the first. */
function post(body: string, between: () => Promise<void>): Promise<number> {
  const url = new URL('/wsag/AgreementFactory', server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode as number));
      },
    );
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    void between().then(() => req.end(body.slice(half)), reject);
  });
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** The count the document threads ask (src/soap/requests-in-progress.ts): from a request's first byte to its answer. */
describe('SOAP requests in progress', () => {
  it('counts a request from its first bytes until its answer, fault or not, and only then lets it go', async () => {
    expect(requestsInProgress.count).toBe(0);
    const answered = `<wsrf-rp:GetResourceProperty xmlns:wsrf-rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">wsag:Template</wsrf-rp:GetResourceProperty>`;
    const faulted = `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}"><wsag:Nothing/></wsag:CreateAgreementInput>`;
    for (const [body, status] of [
      [answered, 200],
      [faulted, 500],
    ] as const) {
      let seen = -1;
      const code = await post(soap11(body), async () => {
        await until(() => requestsInProgress.count === 1);
        seen = requestsInProgress.count;
        expect(requestsInProgress.others()).toBe(false);
      });
      expect(seen).toBe(1);
      expect(code).toBe(status);
      expect(requestsInProgress.count).toBe(0);
    }
  });
});
