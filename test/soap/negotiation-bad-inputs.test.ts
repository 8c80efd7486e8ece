import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { ns } from '../../src/xml/namespaces.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { faultOf, post, soap11 } from '../support/soap.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** Bad negotiation input gets a fault naming the problem; the server keeps serving. */
let server: TestServer;
let negotiationId: string;
const neg = `xmlns:wsag-neg="${ns.wsagNeg}"`;
const header = (id: string) => `<srv:NegotiationId xmlns:srv="${ns.srv}">${id}</srv:NegotiationId>`;
const context = (type = '<wsag-neg:Negotiation/>', responder = 'NegotiationResponder') =>
  `<wsag-neg:NegotiationContext><wsag-neg:NegotiationType>${type}</wsag-neg:NegotiationType>` +
  `<wsag-neg:AgreementResponder>${responder}</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>`;
let agreementOffer: string;
/** The shipped reservation template's offer as a NegotiationOffer (everything before NegotiationOfferContext is the offer's Name, Context, Terms). */
const offer = (counterOfferTo: string, state = 'Advisory', creator = 'NegotiationInitiator') =>
  agreementOffer
    .replace(
      /^<wsag:AgreementOffer/,
      `<wsag-neg:NegotiationOffer ${neg} wsag-neg:OfferId="o-${Math.random().toString(36).slice(2)}"`,
    )
    .replace(/<\/wsag:AgreementOffer>$/, '') +
  `<wsag-neg:NegotiationOfferContext><wsag-neg:CounterOfferTo>${counterOfferTo}</wsag-neg:CounterOfferTo>` +
  `<wsag-neg:Creator>${creator}</wsag-neg:Creator><wsag-neg:State><wsag-neg:${state}/></wsag-neg:State></wsag-neg:NegotiationOfferContext>` +
  '<wsag-neg:NegotiationConstraints/></wsag-neg:NegotiationOffer>';

beforeAll(async () => {
  server = await startTestServer();
  const templates = await new WsagClient(server.url).templates();
  agreementOffer = offerFromTemplate(templates.find((t) => t.includes('advance-reservation-v1')) as string);
  const response = await post(
    `${server.url}/wsag/NegotiationFactory`,
    soap11(`<wsag-neg:InitiateNegotiationInput ${neg}>${context()}</wsag-neg:InitiateNegotiationInput>`),
  );
  negotiationId = /<srv:NegotiationId>([^<]+)</.exec(response.text)?.[1] as string;
});
afterAll(async () => server.close());

async function expectFault(path: string, body: string, code: string, mentions: RegExp) {
  const response = await post(server.url + path, body);
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.text).not.toMatch(/at .*\.(ts|js):\d+/);
  const fault = faultOf(response.text);
  expect(fault).toMatchObject({ code, message: expect.stringMatching(mentions) });
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
}

const negotiate = (body: string, id = negotiationId) =>
  soap11(`<wsag-neg:NegotiateInput ${neg}>${body}</wsag-neg:NegotiateInput>`, header(id));

describe('negotiation faults', () => {
  it('a NegotiationContext without AgreementResponder', async () => {
    const body = `<wsag-neg:InitiateNegotiationInput ${neg}><wsag-neg:NegotiationContext><wsag-neg:NegotiationType><wsag-neg:Negotiation/></wsag-neg:NegotiationType></wsag-neg:NegotiationContext></wsag-neg:InitiateNegotiationInput>`;
    await expectFault('/wsag/NegotiationFactory', soap11(body), 'SchemaViolation', /AgreementResponder/);
  });

  it('a server asked to be the agreement initiator', async () => {
    const body = `<wsag-neg:InitiateNegotiationInput ${neg}>${context(undefined, 'NegotiationInitiator')}</wsag-neg:InitiateNegotiationInput>`;
    await expectFault(
      '/wsag/NegotiationFactory',
      soap11(body),
      'InvalidTerms',
      /AgreementResponder must be NegotiationResponder/,
    );
  });

  it('a renegotiation of an agreement that does not exist', async () => {
    const type =
      `<wsag-neg:Renegotiation><wsag-neg:ResponderAgreementEPR><wsa:Address xmlns:wsa="${ns.wsa}">${server.url}/wsag/Agreement</wsa:Address>` +
      `<wsa:ReferenceParameters xmlns:wsa="${ns.wsa}"><srv:AgreementId xmlns:srv="${ns.srv}">nope</srv:AgreementId></wsa:ReferenceParameters></wsag-neg:ResponderAgreementEPR></wsag-neg:Renegotiation>`;
    await expectFault(
      '/wsag/NegotiationFactory',
      soap11(`<wsag-neg:InitiateNegotiationInput ${neg}>${context(type)}</wsag-neg:InitiateNegotiationInput>`),
      'UnknownResource',
      /agreement "nope"/,
    );
  });

  it('Negotiate without the srv:NegotiationId header', async () => {
    await expectFault(
      '/wsag/Negotiation',
      soap11(`<wsag-neg:NegotiateInput ${neg}>${offer('advance-reservation-v1')}</wsag-neg:NegotiateInput>`),
      'UnknownResource',
      /srv:NegotiationId/,
    );
  });

  it('Negotiate on an unknown negotiation', async () => {
    await expectFault(
      '/wsag/Negotiation',
      negotiate(offer('advance-reservation-v1'), 'no-such'),
      'UnknownResource',
      /no negotiation with id "no-such"/,
    );
  });

  it('an empty NegotiateInput', async () => {
    await expectFault('/wsag/Negotiation', negotiate(''), 'SchemaViolation', /NegotiateInput/);
  });

  it('an offer with a bad State', async () => {
    await expectFault(
      '/wsag/Negotiation',
      negotiate(offer('advance-reservation-v1', 'Maybe')),
      'SchemaViolation',
      /Maybe/,
    );
  });

  it('an offer countering nothing known', async () => {
    await expectFault(
      '/wsag/Negotiation',
      negotiate(offer('not-a-template')),
      'UnknownResource',
      /CounterOfferTo "not-a-template"/,
    );
  });

  it('an offer the initiator claims the responder wrote', async () => {
    await expectFault(
      '/wsag/Negotiation',
      negotiate(offer('advance-reservation-v1', 'Advisory', 'NegotiationResponder')),
      'InvalidTerms',
      /Creator .* must be NegotiationInitiator/,
    );
  });

  it('a committing offer from the initiator', async () => {
    await expectFault(
      '/wsag/Negotiation',
      negotiate(offer('advance-reservation-v1', 'Acceptable')),
      'InvalidStateTransition',
      /send a Solicited offer/,
    );
  });

  it('accepting an offer of an unknown negotiation', async () => {
    const extension =
      `<wsag-neg:NegotiationExtension ${neg}><wsag-neg:NegotiationOfferContext><wsag-neg:CounterOfferTo>ghost-1</wsag-neg:CounterOfferTo>` +
      '<wsag-neg:Creator>NegotiationInitiator</wsag-neg:Creator><wsag-neg:State><wsag-neg:Acceptable/></wsag-neg:State></wsag-neg:NegotiationOfferContext></wsag-neg:NegotiationExtension>';
    const body = `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${agreementOffer.replace('</wsag:Context>', `${extension}</wsag:Context>`)}</wsag:CreateAgreementInput>`;
    await expectFault('/wsag/AgreementFactory', soap11(body), 'UnknownResource', /ghost-1/);
  });
});
