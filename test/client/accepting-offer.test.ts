import path from 'node:path';
import type { XmlElement } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { acceptingOffer, negotiationOffer } from '../../src/xml/accepting-offer.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns, prefixes } from '../../src/xml/namespaces.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { XmlNegotiationWriter } from '../../src/xml/negotiation-writer.js';
import { canonical } from '../../src/xml/xml-edit.js';
import { SchemaSet } from '../../src/xml/schema-set.js';
import { TemplateLibrary } from '../../src/xml/template-library.js';
import { receivedOffer } from '../support/offers.js';
import { projectRoot } from '../support/server.js';

const templates = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));
const template = templates
  .render(new Date('2026-11-21T12:00:00Z'))
  .find((t) => t.includes('TemplateId="deadline-job-v1"')) as string;
const offer = offerFromTemplate(template, [{ location: 'NodeCount', value: '16' }]);

const valid = (xml: string, what: string) => withXml(xml, what, (doc) => SchemaSet.get().validate(doc, what));
const text = (xml: string, xpath: string) =>
  withXml(xml, 'doc', (doc) => (doc.eval(`string(${xpath})`, prefixes) as string).trim());
const count = (xml: string, xpath: string) =>
  withXml(xml, 'doc', (doc) => doc.eval(`count(${xpath})`, prefixes) as number);

/** A committing counter-offer as the server writes it (srv:* extensions in its Context and offer context). */
const counterOffer = new XmlNegotiationWriter().counterOffer(receivedOffer(offer), {
  offerId: 'n1-3',
  counterOfferTo: 'i-1',
  state: 'Acceptable',
  expirationTime: new Date('2026-11-21T12:05:00Z'),
  initiator: 'anonymous',
  responder: 'test-provider',
  templateId: 'deadline-job-v1',
  templateName: 'deadline-job',
  price: { amount: 8, currency: 'EUR' },
  fee: { amount: 0.4, currency: 'EUR' },
  note: 'held',
  alternative: { index: 1, count: 1, terms: ['Job'] },
});

describe('negotiationOffer', () => {
  it('wraps an agreement offer as a valid wsag-neg:NegotiationOffer with a qualified OfferId', () => {
    const xml = negotiationOffer(offer, { offerId: 'i-1', counterOfferTo: 'deadline-job-v1', state: 'Solicited' });
    valid(xml, 'wsag-neg:NegotiationOffer');
    expect(text(xml, '/wsag-neg:NegotiationOffer/@wsag-neg:OfferId')).toBe('i-1');
    expect(text(xml, '//wsag-neg:NegotiationOfferContext/wsag-neg:CounterOfferTo')).toBe('deadline-job-v1');
    expect(text(xml, '//wsag-neg:NegotiationOfferContext/wsag-neg:Creator')).toBe('NegotiationInitiator');
    expect(count(xml, '//wsag-neg:NegotiationOfferContext/wsag-neg:State/wsag-neg:Solicited')).toBe(1);
    expect(count(xml, '/wsag-neg:NegotiationOffer/wsag-neg:NegotiationConstraints[not(*)]')).toBe(1);
    // The terms travel unchanged, with the namespaces they use.
    expect(text(xml, "//wsag:ServiceDescriptionTerm[@wsag:Name='Job']//jsdl:TotalResourceCount/jsdl:Exact")).toBe('16');
    expect(text(xml, '/wsag-neg:NegotiationOffer/wsag:Context/wsag:TemplateId')).toBe('deadline-job-v1');
  });

  it("leaves the OfferId out when none is given, and can counter with another offer's terms", () => {
    const xml = negotiationOffer(counterOffer, { counterOfferTo: 'n1-3', state: 'Rejected' });
    valid(xml, 'wsag-neg:NegotiationOffer');
    expect(count(xml, '/*/@wsag-neg:OfferId')).toBe(0);
    expect(text(xml, '/*/wsag:Context/wsag:TemplateId')).toBe('deadline-job-v1');
  });
});

describe('acceptingOffer', () => {
  it("is the counter-offer's Name, Context and Terms, with a NegotiationExtension naming it", () => {
    const xml = acceptingOffer(counterOffer);
    valid(xml, 'wsag:AgreementOffer');
    expect(text(xml, '/wsag:AgreementOffer/wsag:Name')).toBe(text(offer, '/wsag:AgreementOffer/wsag:Name'));
    expect(text(xml, '/wsag:AgreementOffer/wsag:Context/wsag:TemplateId')).toBe('deadline-job-v1');
    expect(text(xml, '/wsag:AgreementOffer/wsag:Context/wsag:AgreementInitiator')).toBe('anonymous'); // server-written parts may stay
    const ext = '/wsag:AgreementOffer/wsag:Context/wsag-neg:NegotiationExtension/wsag-neg:NegotiationOfferContext';
    expect(text(xml, `${ext}/wsag-neg:CounterOfferTo`)).toBe('n1-3');
    expect(text(xml, `${ext}/wsag-neg:Creator`)).toBe('NegotiationInitiator');
    expect(count(xml, `${ext}/wsag-neg:State/wsag-neg:Acceptable`)).toBe(1);
    expect(text(xml, "//wsag:ServiceDescriptionTerm[@wsag:Name='Job']//jsdl:TotalResourceCount/jsdl:Exact")).toBe('16');
    expect(count(xml, '//wsag-neg:NegotiationOfferContext')).toBe(1); // the counter-offer's own context is not copied
  });

  it('adds the ResponderNegotiationEPR when the negotiation is given, and replaces an older extension', () => {
    const once = acceptingOffer(counterOffer, {
      negotiation: { address: 'http://p/wsag/Negotiation', negotiationId: 'n1' },
    });
    valid(once, 'wsag:AgreementOffer');
    expect(text(once, '//wsag-neg:ResponderNegotiationEPR/wsa:ReferenceParameters/srv:NegotiationId')).toBe('n1');
    const counterWithExtension = counterOffer.replace(
      '</wsag:Context>',
      `${once.slice(once.indexOf('<wsag-neg:NegotiationExtension'), once.indexOf('</wsag:Context>'))}</wsag:Context>`,
    );
    expect(count(acceptingOffer(counterWithExtension), '//wsag-neg:NegotiationExtension')).toBe(1);
  });

  it('takes the counter-offer as an element of an answer already parsed, with the same result', () => {
    const answer = `<wsag-neg:NegotiateOutput xmlns:wsag-neg="${ns.wsagNeg}">${counterOffer}</wsag-neg:NegotiateOutput>`;
    const fromElement = withXml(answer, 'answer', (doc) =>
      acceptingOffer(doc.root.firstChild as XmlElement, {
        negotiation: { address: 'http://p/wsag/Negotiation', negotiationId: 'n1' },
      }),
    );
    const fromText = acceptingOffer(counterOffer, {
      negotiation: { address: 'http://p/wsag/Negotiation', negotiationId: 'n1' },
    });
    valid(fromElement, 'wsag:AgreementOffer');
    expect(canonical(fromElement, 'from the element')).toBe(canonical(fromText, 'from the text'));
    expect(
      text(fromElement, '//wsag-neg:NegotiationExtension/wsag-neg:NegotiationOfferContext/wsag-neg:CounterOfferTo'),
    ).toBe('n1-3');
  });

  it('puts the extension into a Context that was empty', () => {
    const xml = acceptingOffer(counterOffer.replace(/<wsag:Context>.*<\/wsag:Context>/s, '<wsag:Context/>'));
    expect(
      count(xml, '/wsag:AgreementOffer/wsag:Context/wsag-neg:NegotiationExtension/wsag-neg:NegotiationOfferContext'),
    ).toBe(1);
    expect(text(xml, '//wsag-neg:CounterOfferTo')).toBe('n1-3');
  });

  it('refuses documents that are no offers, and offers without an OfferId', () => {
    expect(() => acceptingOffer('<x/>')).toThrow(
      'expected wsag:AgreementOffer, wsag-neg:NegotiationOffer or wsag-neg:NegotiationCounterOffer, found x',
    );
    expect(() => acceptingOffer(offer)).toThrow(/no wsag-neg:OfferId/);
  });
});
