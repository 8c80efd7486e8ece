import type { XmlElement } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { c14n, elementChildren } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { ns } from '../../src/xml/namespaces.js';
import { agreementHeader, createAgreementBody, post, soap11 } from '../support/soap.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireTool } from '../support/tools.js';
import { referenceValidationErrors } from '../support/xmllint.js';

/**
 * Every document the server emits for the foundation's operations validates against the
 * official WS-Agreement schemas (../shared/reference/ws-agreement) with Debian's xmllint.
 * WS-ResourceProperties wrappers are not in the reference set, so their content is checked.
 */
const available = requireTool('xmllint');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/** The Body's child, and for WS-RP responses each property element inside it. */
function bodyDocuments(envelope: string, label: string): Record<string, string> {
  return withXml(envelope, label, (doc) => {
    const body = doc.get('/s:Envelope/s:Body/*', { s: ns.soap11 }) as XmlElement | null;
    if (!body) throw new Error(`${label}: no body in ${envelope}`);
    if (body.namespaceUri === ns.wsrfRp) {
      return Object.fromEntries(elementChildren(body).map((c, i) => [`${label}-${c.name}-${i}`, c14n(c)]));
    }
    return { [label]: c14n(body) };
  });
}

describe.runIf(available)('documents the server emits validate against the reference schemas (xmllint)', () => {
  it('templates, agreements, properties, state documents and faults', async () => {
    const client = new WsagClient(server.url);
    const docs: Record<string, string> = {};
    const templates = await client.templates();
    templates.forEach((t, i) => (docs[`template-${i}`] = t));

    const rpDoc = (rp: string) => `<rp:${rp} xmlns:rp="${ns.wsrfRp}"/>`;
    const prop = (name: string) => `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">wsag:${name}</rp:GetResourceProperty>`;
    Object.assign(docs, bodyDocuments((await post(`${server.url}/wsag/AgreementFactory`, soap11(rpDoc('GetResourcePropertyDocument')))).text, 'factory-doc'));

    for (const [i, template] of templates.entries()) {
      const created = (await post(`${server.url}/wsag/AgreementFactory`, soap11(createAgreementBody(offerFromTemplate(template))))).text;
      Object.assign(docs, bodyDocuments(created, `create-${i}`));
      const id = /<srv:AgreementId>([^<]+)</.exec(created)?.[1] as string;
      const agreement = `${server.url}/wsag/Agreement`;
      const state = `${server.url}/wsag/AgreementState`;
      for (const name of ['Name', 'AgreementId', 'Context', 'Terms']) {
        Object.assign(docs, bodyDocuments((await post(agreement, soap11(prop(name), agreementHeader(id)))).text, `agreement-${i}-${name}`));
      }
      for (const name of ['AgreementState', 'ServiceTermState', 'GuaranteeTermState']) {
        Object.assign(docs, bodyDocuments((await post(state, soap11(prop(name), agreementHeader(id)))).text, `state-${i}-${name}`));
      }
      Object.assign(docs, bodyDocuments((await post(agreement, soap11(rpDoc('GetResourcePropertyDocument'), agreementHeader(id)))).text, `agreement-doc-${i}`));
      Object.assign(docs, bodyDocuments((await post(state, soap11(rpDoc('GetResourcePropertyDocument'), agreementHeader(id)))).text, `state-doc-${i}`));
      const terminate = `<wsag:TerminateInput xmlns:wsag="${ns.wsag}"><wsag:Name>reason</wsag:Name></wsag:TerminateInput>`;
      Object.assign(docs, bodyDocuments((await post(agreement, soap11(terminate, agreementHeader(id)))).text, `terminate-${i}`));
      Object.assign(docs, bodyDocuments((await post(state, soap11(rpDoc('GetResourcePropertyDocument'), agreementHeader(id)))).text, `terminated-state-doc-${i}`));
      docs[`stored-agreement-${i}`] = (await server.repository.get(id))?.document as string;
    }
    const fault = (await post(`${server.url}/wsag/AgreementFactory`, soap11('<x:Nope xmlns:x="urn:x"/>'))).text;
    docs.fault = withXml(fault, 'fault', (doc) => c14n(doc.get('//bf:BaseFault', { bf: ns.wsrfBf }) as XmlElement));

    expect(Object.keys(docs).length).toBeGreaterThan(30);
    expect(referenceValidationErrors(docs)).toEqual({});
  });
});
