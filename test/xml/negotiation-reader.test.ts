import { describe, expect, it } from 'vitest';
import { InvalidTerms, SchemaViolation } from '../../src/domain/errors.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { readNegotiationOffer, readNegotiationRequest } from '../../src/xml/negotiation-reader.js';
import { canonical } from '../../src/xml/xml-edit.js';
import { XmlNegotiationWriter } from '../../src/xml/negotiation-writer.js';
import { requireTool } from '../support/tools.js';
import { constraintProblem, negotiationOffer, offerXml, read, referenceProblems, thrown } from './fixtures.js';

const haveXmllint = requireTool('xmllint');
const readOfferElement = (xml: string) => withXml(xml, 'offer', (doc) => readNegotiationOffer(doc.root));
const readContext = (xml: string) => withXml(xml, 'context', (doc) => readNegotiationRequest(doc.root));

describe('readNegotiationOffer', () => {
  const solicited = negotiationOffer(offerXml('deadline-job'), {
    offerId: 'i-1',
    counterOfferTo: 'deadline-job-v1',
    expirationTime: '2026-11-21T12:30:00',
  });

  it('reads an initiator offer: OfferId (qualified attribute), CounterOfferTo, Creator, State, ExpirationTime without zone as UTC', () => {
    const offer = readOfferElement(solicited);
    expect(offer).toMatchObject({
      offerId: 'i-1',
      counterOfferTo: 'deadline-job-v1',
      creator: 'NegotiationInitiator',
      state: 'Solicited',
      expirationTime: new Date('2026-11-21T12:30:00Z'),
    });
    // As exchanged: the element written out on its own, the same XML (not made canonical).
    expect(canonical(offer.document, 'kept')).toBe(canonical(solicited, 'offer'));
    if (haveXmllint) expect(referenceProblems({ solicited })).toEqual({});
  });

  it('reads Name, Context and Terms as an agreement offer, so template Locations rooted at /wsag:AgreementOffer apply', () => {
    const offer = readOfferElement(solicited).offer;
    expect(offer.request).toEqual(read(offerXml('deadline-job')).request);
    expect(offer.name).toBe('deadline-job');
    expect(offer.templateId).toBe('deadline-job-v1');
    expect(constraintProblem('deadline-job', offer)).toBeUndefined();
    const tooBig = readOfferElement(
      negotiationOffer(offerXml('deadline-job', [{ location: 'NodeCount', value: '512' }]), { counterOfferTo: 't' }),
    ).offer;
    expect(constraintProblem('deadline-job', tooBig)).toMatch(
      /^Item 'NodeCount' at \/wsag:AgreementOffer\/wsag:Terms\/wsag:All\/.*"512" violates facet maxInclusive/,
    );
  });

  it('offers the alternatives of an offer with choices', () => {
    const choices = offerXml('deadline-job').replace(
      /<wsag:All>(<wsag:ServiceDescriptionTerm.*?<\/wsag:ServiceDescriptionTerm>)/s,
      (_m, sdt: string) =>
        `<wsag:All><wsag:OneOrMore>${sdt}${sdt.replace('<jsdl:Exact>4<', '<jsdl:Exact>2<')}</wsag:OneOrMore>`,
    );
    const alternatives = readOfferElement(
      negotiationOffer(choices, { counterOfferTo: 't', state: 'Advisory' }),
    ).offer.alternatives();
    expect(alternatives.map((a) => [a.alternative?.index, a.request.nodeCount])).toEqual([
      [1, 4],
      [2, 2],
    ]);
  });

  it('round-trips a counter-offer the writer wrote; the OfferId is optional', () => {
    const writer = new XmlNegotiationWriter();
    const moved = writer.withSlot(read(offerXml('advance-reservation')), {
      start: new Date('2026-11-22T08:00:00Z'),
      end: new Date('2026-11-22T10:00:00Z'),
      nodes: 8,
    });
    const counterOffer = writer.counterOffer(moved, {
      offerId: 'r-2',
      counterOfferTo: 'i-1',
      state: 'Advisory',
      initiator: 'alice',
      responder: 'site',
      templateId: 'advance-reservation-v1',
      templateName: 'advance-reservation',
      note: 'a slot tomorrow morning',
    });
    const back = readOfferElement(counterOffer);
    expect(back).toMatchObject({
      offerId: 'r-2',
      counterOfferTo: 'i-1',
      creator: 'NegotiationResponder',
      state: 'Advisory',
    });
    // The element as exchanged: the same XML, written out on its own (not made canonical).
    expect(canonical(back.document, 'kept')).toBe(canonical(counterOffer, 'written'));
    expect(back).not.toHaveProperty('expirationTime');
    expect(back.offer.request).toEqual(moved.request);
    expect(back.offer.serviceTermNames).toEqual(moved.serviceTermNames);
    expect(readOfferElement(negotiationOffer(offerXml('deadline-job'), { counterOfferTo: 't' }))).not.toHaveProperty(
      'offerId',
    );
  });

  it('any prefixes: the wsag-neg namespace under another prefix', () => {
    const renamed = solicited.replaceAll('wsag-neg:', 'n:').replace('xmlns:wsag-neg=', 'xmlns:n=');
    expect(readOfferElement(renamed)).toMatchObject({
      offerId: 'i-1',
      counterOfferTo: 'deadline-job-v1',
      state: 'Solicited',
    });
  });

  describe('bad inputs give a WsagError naming the element', () => {
    const cases: Array<[string, string, typeof SchemaViolation | typeof InvalidTerms, RegExp]> = [
      [
        'missing CounterOfferTo',
        negotiationOffer(offerXml('deadline-job')),
        SchemaViolation,
        /^wsag-neg:NegotiationOffer\/wsag-neg:NegotiationOfferContext needs wsag-neg:CounterOfferTo$/,
      ],
      [
        'empty CounterOfferTo',
        negotiationOffer(offerXml('deadline-job'), { counterOfferTo: ' ' }),
        InvalidTerms,
        /wsag-neg:NegotiationOfferContext\/wsag-neg:CounterOfferTo is empty/,
      ],
      [
        'an empty State',
        negotiationOffer(offerXml('deadline-job'), { counterOfferTo: 't', state: '' }),
        SchemaViolation,
        /wsag-neg:State needs one of wsag-neg:Advisory, wsag-neg:Solicited, wsag-neg:Acceptable, wsag-neg:Rejected/,
      ],
      [
        'an unknown State',
        negotiationOffer(offerXml('deadline-job'), { counterOfferTo: 't', state: 'Maybe' }),
        SchemaViolation,
        /wsag-neg:State needs one of/,
      ],
      [
        'a Creator that is no role',
        negotiationOffer(offerXml('deadline-job'), { counterOfferTo: 't', creator: 'Me' }),
        SchemaViolation,
        /wsag-neg:Creator must be NegotiationInitiator or NegotiationResponder, not "Me"/,
      ],
      [
        'no Terms',
        negotiationOffer(offerXml('deadline-job').replace(/<wsag:Terms>.*<\/wsag:Terms>/s, ''), {
          counterOfferTo: 't',
        }),
        SchemaViolation,
        /^wsag-neg:NegotiationOffer needs wsag:Terms$/,
      ],
      [
        'no offer context',
        negotiationOffer(offerXml('deadline-job'), { counterOfferTo: 't' }).replace(
          /<wsag-neg:NegotiationOfferContext>.*<\/wsag-neg:NegotiationOfferContext>/s,
          '',
        ),
        SchemaViolation,
        /needs wsag-neg:NegotiationOfferContext$/,
      ],
      [
        'another element',
        offerXml('deadline-job'),
        SchemaViolation,
        /^expected wsag-neg:NegotiationOffer or wsag-neg:NegotiationCounterOffer, found wsag:AgreementOffer/,
      ],
    ];
    it.each(cases)('%s', (_name, xml, errorClass, message) => {
      const error = thrown(() => readOfferElement(xml));
      expect(error).toBeInstanceOf(errorClass);
      expect(error.message).toMatch(message);
    });
  });
});

describe('readNegotiationRequest', () => {
  const context = (type: string, extra = ''): string =>
    `<wsag-neg:NegotiationContext xmlns:wsag-neg="${ns.wsagNeg}" xmlns:wsa="${ns.wsa}" xmlns:srv="${ns.srv}">` +
    `<wsag-neg:NegotiationType>${type}</wsag-neg:NegotiationType>${extra}` +
    '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>';
  const renegotiation = (referenceParameters: string): string =>
    '<wsag-neg:Renegotiation><wsag-neg:ResponderAgreementEPR><wsa:Address>https://site.example/wsag/Agreement</wsa:Address>' +
    `${referenceParameters}</wsag-neg:ResponderAgreementEPR></wsag-neg:Renegotiation>`;

  it('a negotiation of a new agreement, with the initiator wish for its lifetime (no zone: UTC)', () => {
    const xml = context(
      '<wsag-neg:Negotiation></wsag-neg:Negotiation>',
      '<wsag-neg:ExpirationTime>2026-11-21T14:00:00</wsag-neg:ExpirationTime>',
    );
    const request = readContext(xml);
    expect(request).toEqual({
      type: 'Negotiation',
      expirationTime: new Date('2026-11-21T14:00:00Z'),
      agreementResponder: 'NegotiationResponder',
      document: expect.any(String),
    });
    // As received: the element written out on its own, the same XML.
    expect(canonical(request.document, 'kept')).toBe(canonical(xml, 'context'));
    if (haveXmllint) expect(referenceProblems({ xml })).toEqual({});
  });

  it('a renegotiation names the agreement by the srv:AgreementId reference parameter of ResponderAgreementEPR', () => {
    const xml = context(
      renegotiation('<wsa:ReferenceParameters><srv:AgreementId>a-17</srv:AgreementId></wsa:ReferenceParameters>'),
    );
    expect(readContext(xml)).toMatchObject({ type: 'Renegotiation', agreementId: 'a-17' });
    expect(readContext(xml)).not.toHaveProperty('expirationTime');
    if (haveXmllint) expect(referenceProblems({ xml })).toEqual({});
  });

  it('round-trips through completeContext', () => {
    const request = readContext(
      context(
        renegotiation('<wsa:ReferenceParameters><srv:AgreementId>a-17</srv:AgreementId></wsa:ReferenceParameters>'),
      ),
    );
    const completed = new XmlNegotiationWriter().completeContext(request, {
      initiator: 'alice',
      responder: 'site',
      expiresAt: new Date('2026-11-21T13:00:00Z'),
    });
    expect(readContext(completed)).toEqual({
      ...request,
      expirationTime: new Date('2026-11-21T13:00:00Z'),
      document: completed,
    });
  });

  it('a renegotiation without the agreement id is InvalidTerms naming srv:AgreementId', () => {
    const error = thrown(() => readContext(context(renegotiation(''))));
    expect(error).toBeInstanceOf(InvalidTerms);
    expect(error.message).toBe(
      'wsag-neg:NegotiationContext/wsag-neg:NegotiationType/wsag-neg:Renegotiation/wsag-neg:ResponderAgreementEPR/wsa:ReferenceParameters/srv:AgreementId is missing: name the agreement to renegotiate by its EPR',
    );
  });

  it('a missing AgreementResponder or NegotiationType is a SchemaViolation naming it', () => {
    const noResponder = context('<wsag-neg:Negotiation></wsag-neg:Negotiation>').replace(
      /<wsag-neg:AgreementResponder>.*<\/wsag-neg:AgreementResponder>/,
      '',
    );
    expect(thrown(() => readContext(noResponder))).toEqual(
      new SchemaViolation('wsag-neg:NegotiationContext needs wsag-neg:AgreementResponder'),
    );
    const emptyType = context('');
    expect(thrown(() => readContext(emptyType))).toEqual(
      new SchemaViolation(
        'wsag-neg:NegotiationContext/wsag-neg:NegotiationType needs wsag-neg:Negotiation or wsag-neg:Renegotiation',
      ),
    );
  });
});
