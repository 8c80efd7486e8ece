import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressingFaultAction } from '../../src/soap/operation.js';
import { ns } from '../../src/xml/namespaces.js';
import { projectRoot, startTestServer, type TestServer } from '../support/server.js';
import { post, soap11, soap12 } from '../support/soap.js';

/**
 * A fault answers in the request's addressing as a reply does (WS-Addressing 1.0 Core, section 3.4): a client that
 * requires addressing on the EPR it was given gets the typed fault, not "a required header is not present". The
 * action is the one the WSDL declares for the operation's fault; before an operation is known, WS-Addressing's own.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const wsa = `xmlns:wsa="${ns.wsa}"`;
const messageId = 'urn:uuid:6b1f4c1e-2d1e-4d6a-9c53-0f3e2a4b5c6d';
const addressed = (action: string, to: string) =>
  `<wsa:Action ${wsa}>${action}</wsa:Action><wsa:MessageID ${wsa}>${messageId}</wsa:MessageID><wsa:To ${wsa}>${to}</wsa:To>`;

/** The wsam:Action the WSDL of `port` declares for the fault of `operation`. */
function declaredFaultAction(port: string, operation: string): string {
  const wsdl = fs.readFileSync(path.join(projectRoot, 'wsdl', `${port}.wsdl`), 'utf8');
  const portType = wsdl.slice(wsdl.indexOf('<wsdl:portType'), wsdl.indexOf('</wsdl:portType>'));
  const op = portType.slice(portType.indexOf(`<wsdl:operation name="${operation}"`));
  return /<wsdl:fault[^>]*wsam:Action="([^"]+)"/.exec(op.slice(0, op.indexOf('</wsdl:operation>')))?.[1] as string;
}

const header = (xml: string, name: string) =>
  new RegExp(`<wsa:${name}[^>]*>([^<]*)</wsa:${name}>`).exec(xml.slice(0, xml.indexOf('Body>')))?.[1];

describe('faults with WS-Addressing headers', () => {
  it('every fault of every WSDL declares its action', () => {
    const wsdls = fs.readdirSync(path.join(projectRoot, 'wsdl')).filter((f) => f.endsWith('.wsdl'));
    for (const file of wsdls) {
      const text = fs.readFileSync(path.join(projectRoot, 'wsdl', file), 'utf8');
      const portType = text.slice(text.indexOf('<wsdl:portType'), text.indexOf('</wsdl:portType>'));
      const faults = portType.match(/<wsdl:fault[^>]*>/g) ?? [];
      expect(faults.length, file).toBeGreaterThan(0);
      expect(
        faults.filter((f) => !f.includes('wsam:Action=')),
        file,
      ).toEqual([]);
    }
  });

  it('a refused CreateAgreement answers with the fault action its WSDL declares and relates to the request', async () => {
    const url = `${server.url}/wsag/AgreementFactory`;
    const request = 'http://schemas.ggf.org/graap/2007/03/ws-agreement/AgreementFactory/CreateAgreementRequest';
    const body = `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}"><wsag:AgreementOffer/></wsag:CreateAgreementInput>`;
    for (const envelope of [soap11, soap12]) {
      const contentType = envelope === soap11 ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8';
      const answer = await post(url, envelope(body, addressed(request, url)), contentType);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.text).toContain('Fault>');
      expect(header(answer.text, 'Action')).toBe(declaredFaultAction('AgreementFactory', 'CreateAgreement'));
      expect(header(answer.text, 'RelatesTo')).toBe(messageId);
    }
  });

  it("a fault on the Negotiation port carries that port type's fault action", async () => {
    const url = `${server.url}/wsag/Negotiation`;
    const request = 'http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation/Negotiation/NegotiateRequest';
    const body = `<wsag-neg:NegotiateInput xmlns:wsag-neg="${ns.wsagNeg}"/>`;
    const answer = await post(url, soap11(body, addressed(request, url)));
    expect(answer.text).toContain('Fault>');
    expect(header(answer.text, 'Action')).toBe(declaredFaultAction('Negotiation', 'Negotiate'));
    expect(header(answer.text, 'RelatesTo')).toBe(messageId);
  });

  it("before an operation is known, the fault carries WS-Addressing's fault action", async () => {
    const url = `${server.url}/wsag/AgreementFactory`;
    const answer = await post(url, soap11(`<x:Nothing xmlns:x="urn:nothing"/>`, addressed('urn:nothing', url)));
    expect(answer.text).toContain('Fault>');
    expect(header(answer.text, 'Action')).toBe(addressingFaultAction);
    expect(header(answer.text, 'RelatesTo')).toBe(messageId);
  });

  it('a request without addressing gets a fault without it, as before', async () => {
    const answer = await post(`${server.url}/wsag/AgreementFactory`, soap11('<x:Nothing xmlns:x="urn:nothing"/>'));
    expect(answer.text).toContain('Fault>');
    expect(answer.text).not.toContain('<soap:Header>');
  });
});
