import type { XmlElement } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { acceptingOffer, negotiationOffer } from '../../src/xml/accepting-offer.js';
import { c14n, elementChildren } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { ns, prefixes } from '../../src/xml/namespaces.js';
import { agreementHeader, createAgreementBody, faultOf, post, soap11 } from '../support/soap.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireTool } from '../support/tools.js';
import { referenceValidationErrors } from '../support/xmllint.js';

/**
 * Every document the server emits for the foundation's operations validates against the
 * official WS-Agreement schemas (test/reference/ws-agreement) with Debian's xmllint.
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
    const prop = (name: string) =>
      `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">wsag:${name}</rp:GetResourceProperty>`;
    Object.assign(
      docs,
      bodyDocuments(
        (await post(`${server.url}/wsag/AgreementFactory`, soap11(rpDoc('GetResourcePropertyDocument')))).text,
        'factory-doc',
      ),
    );

    for (const [i, template] of templates.entries()) {
      const created = (
        await post(`${server.url}/wsag/AgreementFactory`, soap11(createAgreementBody(offerFromTemplate(template))))
      ).text;
      Object.assign(docs, bodyDocuments(created, `create-${i}`));
      const id = /<srv:AgreementId>([^<]+)</.exec(created)?.[1] as string;
      const agreement = `${server.url}/wsag/Agreement`;
      const state = `${server.url}/wsag/AgreementState`;
      for (const name of ['Name', 'AgreementId', 'Context', 'Terms']) {
        Object.assign(
          docs,
          bodyDocuments(
            (await post(agreement, soap11(prop(name), agreementHeader(id)))).text,
            `agreement-${i}-${name}`,
          ),
        );
      }
      for (const name of ['AgreementState', 'ServiceTermState', 'GuaranteeTermState']) {
        Object.assign(
          docs,
          bodyDocuments((await post(state, soap11(prop(name), agreementHeader(id)))).text, `state-${i}-${name}`),
        );
      }
      Object.assign(
        docs,
        bodyDocuments(
          (await post(agreement, soap11(rpDoc('GetResourcePropertyDocument'), agreementHeader(id)))).text,
          `agreement-doc-${i}`,
        ),
      );
      Object.assign(
        docs,
        bodyDocuments(
          (await post(state, soap11(rpDoc('GetResourcePropertyDocument'), agreementHeader(id)))).text,
          `state-doc-${i}`,
        ),
      );
      const terminate = `<wsag:TerminateInput xmlns:wsag="${ns.wsag}"><wsag:Name>reason</wsag:Name></wsag:TerminateInput>`;
      Object.assign(
        docs,
        bodyDocuments((await post(agreement, soap11(terminate, agreementHeader(id)))).text, `terminate-${i}`),
      );
      Object.assign(
        docs,
        bodyDocuments(
          (await post(state, soap11(rpDoc('GetResourcePropertyDocument'), agreementHeader(id)))).text,
          `terminated-state-doc-${i}`,
        ),
      );
      docs[`stored-agreement-${i}`] = (await server.repository.get(id))?.document as string;
    }
    const fault = (await post(`${server.url}/wsag/AgreementFactory`, soap11('<x:Nope xmlns:x="urn:x"/>'))).text;
    docs.fault = withXml(fault, 'fault', (doc) => c14n(doc.get('//bf:BaseFault', { bf: ns.wsrfBf }) as XmlElement));

    expect(Object.keys(docs).length).toBeGreaterThan(30);
    expect(await referenceValidationErrors(docs)).toEqual({});
  });

  it('negotiation documents: InitiateNegotiationOutput, NegotiateOutput (Advisory, Acceptable, Rejected), NegotiationProperties and each property, AdvertiseOutput, TerminateResponse, CreatePendingAgreementResponse', async () => {
    const docs: Record<string, string> = {};
    const template = (await new WsagClient(server.url).templates()).find((t) =>
      t.includes('wsag:TemplateId="advance-reservation-v1"'),
    ) as string;
    expect(template).toBeDefined();
    const factory = `${server.url}/wsag/NegotiationFactory`;
    const negotiationPort = `${server.url}/wsag/Negotiation`;
    const negotiationHeader = (id: string) => `<srv:NegotiationId xmlns:srv="${ns.srv}">${id}</srv:NegotiationId>`;
    const neg = (name: string, content: string) =>
      `<wsag-neg:${name} xmlns:wsag-neg="${ns.wsagNeg}">${content}</wsag-neg:${name}>`;

    /** Posts a SOAP 1.1 request, keeps the Body's documents under `label`, returns the envelope. */
    const exchange = async (url: string, body: string, label: string, header = '', status = 200): Promise<string> => {
      const response = await post(url, soap11(body, header));
      expect(response.status, `${label}: ${response.text}`).toBe(status);
      if (status === 200) Object.assign(docs, bodyDocuments(response.text, label));
      return response.text;
    };
    const counterOffers = (envelope: string) =>
      withXml(envelope, 'NegotiateOutput', (doc) =>
        (doc.find('//wsag-neg:NegotiationCounterOffer', prefixes) as XmlElement[]).map((e) => ({
          offerId: e.eval('string(@wsag-neg:OfferId)', prefixes) as string,
          state: e.eval('local-name(wsag-neg:NegotiationOfferContext/wsag-neg:State/*)', prefixes) as string,
          xml: c14n(e),
        })),
      );
    const initiate = async (label: string, type = '<wsag-neg:Negotiation/>') => {
      const context = neg(
        'NegotiationContext',
        `<wsag-neg:NegotiationType>${type}</wsag-neg:NegotiationType><wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder>`,
      );
      const text = await exchange(factory, neg('InitiateNegotiationInput', context), label);
      return /<srv:NegotiationId>([^<]+)</.exec(text)?.[1] as string;
    };
    const negotiate = async (id: string, offers: string[], label: string) =>
      counterOffers(
        await exchange(negotiationPort, neg('NegotiateInput', offers.join('')), label, negotiationHeader(id)),
      );
    const properties = async (id: string, label: string) => {
      await exchange(
        negotiationPort,
        `<rp:GetResourcePropertyDocument xmlns:rp="${ns.wsrfRp}"/>`,
        `${label}-doc`,
        negotiationHeader(id),
      );
      for (const name of ['NegotiationContext', 'NegotiableTemplate', 'NegotiationOffer']) {
        const get = `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag-neg="${ns.wsagNeg}">wsag-neg:${name}</rp:GetResourceProperty>`;
        await exchange(negotiationPort, get, `${label}-${name}`, negotiationHeader(id));
      }
    };

    // A window of its own (the test above booked the templates' default windows), for the whole cluster.
    const start = new Date(Math.ceil((Date.now() + 20 * 24 * 3600_000) / 60_000) * 60_000);
    const window = (from: Date, hours: number) => {
      const at = (end: string) =>
        `/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:${end}`;
      return [
        { location: at('StartTime'), value: from.toISOString() },
        { location: at('EndTime'), value: new Date(from.getTime() + hours * 3600_000).toISOString() },
      ];
    };
    const most = offerFromTemplate(template, [{ location: 'NodeCount', value: '58' }, ...window(start, 2)]);
    const whole = offerFromTemplate(template, [{ location: 'NodeCount', value: '60' }, ...window(start, 2)]);
    // The 60 nodes SLA jobs may use (4 of the 64 are kept warm for interactive sessions).
    // Two alternatives (ExactlyOne): all 60 nodes, or the 2 that negotiation 1 leaves free; either keeps a promise of 2.
    const either = whole
      .replace('<sla:NodesAvailable>60</sla:NodesAvailable>', '<sla:NodesAvailable>2</sla:NodesAvailable>')
      .replace(
        /(<wsag:ServiceDescriptionTerm wsag:Name="Nodes"[\s\S]*?<\/wsag:ServiceDescriptionTerm>)/,
        (sdt) =>
          `<wsag:ExactlyOne>${sdt}${sdt.replace('wsag:Name="Nodes"', 'wsag:Name="FewerNodes"').replace('<jsdl:Exact>60<', '<jsdl:Exact>2<')}</wsag:ExactlyOne>`,
      );
    expect(either).toContain('wsag:ExactlyOne');
    const fromTemplate = (offer: string, offerId: string, state: 'Advisory' | 'Solicited') =>
      negotiationOffer(offer, { offerId, counterOfferTo: 'advance-reservation-v1', state });

    // Negotiation 1: Advisory slots, then a Solicited offer countering the first -> Acceptable (a hold of 58 nodes).
    const first = await initiate('initiate-1');
    const slots = await negotiate(first, [fromTemplate(most, 'a-1', 'Advisory')], 'negotiate-advisory');
    expect(slots.length).toBeGreaterThan(1);
    expect(new Set(slots.map((s) => s.state))).toEqual(new Set(['Advisory']));
    const [acceptable] = await negotiate(
      first,
      [
        negotiationOffer(slots[0]?.xml as string, {
          offerId: 'a-2',
          counterOfferTo: slots[0]?.offerId as string,
          state: 'Solicited',
        }),
      ],
      'negotiate-acceptable',
    );
    expect(acceptable?.state).toBe('Acceptable');
    await exchange(
      negotiationPort,
      neg('AdvertiseInput', fromTemplate(most, 'a-3', 'Advisory')),
      'advertise',
      negotiationHeader(first),
    );
    await properties(first, 'negotiation-1');

    // Negotiation 2: all 60 nodes of the held window -> Rejected; with alternatives -> the second is Acceptable
    // (srv:ChosenAlternative); Advisory alternatives; rejecting that offer (an empty NegotiateOutput); Terminate.
    const second = await initiate('initiate-2');
    const [rejected] = await negotiate(second, [fromTemplate(whole, 'b-1', 'Solicited')], 'negotiate-rejected');
    expect(rejected?.state).toBe('Rejected');
    const [chosen] = await negotiate(second, [fromTemplate(either, 'b-2', 'Solicited')], 'negotiate-alternative');
    expect(chosen?.state).toBe('Acceptable');
    expect(chosen?.xml).toContain('srv:ChosenAlternative');
    expect(
      (await negotiate(second, [fromTemplate(either, 'b-3', 'Advisory')], 'negotiate-advisory-alternatives')).length,
    ).toBeGreaterThan(1);
    const released = await negotiate(
      second,
      [
        negotiationOffer(chosen?.xml as string, {
          offerId: 'b-4',
          counterOfferTo: chosen?.offerId as string,
          state: 'Rejected',
        }),
      ],
      'negotiate-reject',
    );
    expect(released).toEqual([]);
    await negotiate(second, [fromTemplate(either, 'b-5', 'Solicited')], 'negotiate-alternative-again');
    await exchange(negotiationPort, neg('TerminateInput', ''), 'terminate-negotiation', negotiationHeader(second));
    await properties(second, 'negotiation-2-terminated'); // holds Released, with srv:Charged
    expect(docs['negotiation-2-terminated-doc-NegotiationProperties-0']).toContain('<srv:State>Released</srv:State>');

    // Accepting negotiation 1's Acceptable offer; the concluded negotiation; a negotiation fault.
    const created = await exchange(
      `${server.url}/wsag/AgreementFactory`,
      createAgreementBody(acceptingOffer(acceptable?.xml as string)),
      'create-accepting',
    );
    const agreementId = /<srv:AgreementId>([^<]+)</.exec(created)?.[1] as string;
    await properties(first, 'negotiation-1-concluded');
    expect(docs['negotiation-1-concluded-doc-NegotiationProperties-0']).toContain('<srv:State>Confirmed</srv:State>');
    const closed = await exchange(
      negotiationPort,
      neg('NegotiateInput', fromTemplate(whole, 'a-4', 'Advisory')),
      'closed',
      negotiationHeader(first),
      500,
    );
    expect(faultOf(closed).code).toBe('NegotiationClosed');
    docs['negotiation-fault'] = withXml(closed, 'fault', (doc) =>
      c14n(doc.get('//bf:BaseFault', { bf: ns.wsrfBf }) as XmlElement),
    );

    // A renegotiation of that agreement: its context, template and an Advisory answer.
    const renegotiation = await initiate(
      'initiate-renegotiation',
      `<wsag-neg:Renegotiation><wsag-neg:ResponderAgreementEPR xmlns:wsa="${ns.wsa}"><wsa:Address>${server.url}/wsag/Agreement</wsa:Address>` +
        `<wsa:ReferenceParameters>${agreementHeader(agreementId)}</wsa:ReferenceParameters></wsag-neg:ResponderAgreementEPR></wsag-neg:Renegotiation>`,
    );
    const smaller = offerFromTemplate(template, [{ location: 'NodeCount', value: '32' }, ...window(start, 2)]);
    await negotiate(
      renegotiation,
      [negotiationOffer(smaller, { offerId: 'r-1', counterOfferTo: agreementId, state: 'Advisory' })],
      'negotiate-renegotiation',
    );
    await properties(renegotiation, 'renegotiation');
    expect(docs['renegotiation-doc-NegotiationProperties-0']).toContain('wsag-neg:Renegotiation');

    // A pending agreement.
    const later = offerFromTemplate(template, [
      { location: 'NodeCount', value: '8' },
      ...window(new Date(start.getTime() + 24 * 3600_000), 1),
    ]);
    await exchange(
      `${server.url}/wsag/PendingAgreementFactory`,
      `<wsag:CreatePendingAgreementInput xmlns:wsag="${ns.wsag}">${later}</wsag:CreatePendingAgreementInput>`,
      'create-pending',
    );

    // Every kind is there (the RP responses are kept per property element).
    const kinds = Object.values(docs).map((d) => /^<([\w-]+:\w+)/.exec(d)?.[1]);
    for (const kind of [
      'wsag-neg:InitiateNegotiationOutput',
      'wsag-neg:NegotiateOutput',
      'wsag-neg:NegotiationProperties',
      'wsag-neg:NegotiationContext',
      'wsag-neg:NegotiableTemplate',
      'wsag-neg:NegotiationOffer',
      'wsag-neg:AdvertiseOutput',
      'wsag-neg:TerminateResponse',
      'wsag:CreateAgreementResponse',
      'wsag:CreatePendingAgreementResponse',
      'bf:BaseFault',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    for (const state of ['Advisory', 'Acceptable', 'Rejected']) {
      expect(
        Object.entries(docs).some(([label, d]) => label.startsWith('negotiate-') && d.includes(`<wsag-neg:${state}>`)),
        state,
      ).toBe(true);
    }
    expect(Object.keys(docs).length).toBeGreaterThan(50);
    expect(await referenceValidationErrors(docs)).toEqual({});
  });
});
