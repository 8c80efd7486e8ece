import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { ns } from '../../src/xml/namespaces.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** A pending agreement's initiator hears the operator's decision at its AgreementAcceptance EPR. */
let server: TestServer;
let initiator: http.Server;
const received: Array<{ action: string; body: string }> = [];
let initiatorUrl: string;

beforeAll(async () => {
  server = await startTestServer({ config: { admins: ['anonymous'] } });
  initiator = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ action: String(req.headers.soapaction), body });
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(`<soap:Envelope xmlns:soap="${ns.soap11}"><soap:Body/></soap:Envelope>`);
    });
  });
  await new Promise<void>((resolve) => initiator.listen(0, '127.0.0.1', resolve));
  initiatorUrl = `http://127.0.0.1:${(initiator.address() as AddressInfo).port}/acceptance`;
});
afterAll(async () => {
  await server.close();
  await new Promise((resolve) => initiator.close(resolve));
});

describe('SoapAcceptanceNotifier', () => {
  it("calls Accept on the initiator's EPR with its reference parameters as headers", async () => {
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const epr = { address: initiatorUrl, referenceParameters: ['<my:Ticket xmlns:my="urn:broker">T-42</my:Ticket>'] };
    const pending = await client.createPendingAgreement(offerFromTemplate(template), epr);
    expect((await client.state(pending.agreementId)).state).toBe('Pending');
    await client.decide(pending.agreementId, 'Accept');
    const deadline = Date.now() + 5000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(received[0]?.action).toBe(`"${ns.wsag}/AgreementAcceptance/AcceptRequest"`);
    expect(received[0]?.body).toMatch(/<my:Ticket [^>]*wsa:IsReferenceParameter="true"[^>]*>T-42<\/my:Ticket>/);
    expect(received[0]?.body).toContain(`<srv:AgreementId>${pending.agreementId}</srv:AgreementId>`);
    expect((await client.state(pending.agreementId)).state).toBe('Observed');
  });
});
