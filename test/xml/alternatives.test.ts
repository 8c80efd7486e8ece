import { describe, expect, it } from 'vitest';
import { InvalidTerms } from '../../src/domain/errors.js';
import { maxAlternatives } from '../../src/xml/alternatives.js';
import { XmlAgreementWriter } from '../../src/xml/agreement-writer.js';
import { ns } from '../../src/xml/namespaces.js';
import { requireTool } from '../support/tools.js';
import {
  canonicalOffer,
  canonicalTerms,
  constraintProblem,
  offerXml,
  ourSchemaProblem,
  read,
  referenceProblems,
  thrown,
} from './fixtures.js';

/** Offers with term compositors (WS-Agreement 4.2): each alternative is an offer of its own. */

const haveXmllint = requireTool('xmllint');

const job = (name: string, nodes: number): string =>
  `<wsag:ServiceDescriptionTerm wsag:Name="${name}" wsag:ServiceName="Compute"><jsdl:JobDefinition><jsdl:JobDescription>` +
  `<jsdl:Resources><jsdl:TotalResourceCount><jsdl:Exact>${nodes}</jsdl:Exact></jsdl:TotalResourceCount></jsdl:Resources>` +
  '</jsdl:JobDescription></jsdl:JobDefinition></wsag:ServiceDescriptionTerm>';

const guarantee = (name: string): string =>
  `<wsag:GuaranteeTerm wsag:Name="${name}" wsag:Obligated="ServiceProvider"><wsag:ServiceScope wsag:ServiceName="Compute"/>` +
  `<wsag:ServiceLevelObjective><wsag:KPITarget><wsag:KPIName>${name}</wsag:KPIName><wsag:CustomServiceLevel><sla:NodesAvailable xmlns:sla="${ns.sla}">1</sla:NodesAvailable></wsag:CustomServiceLevel></wsag:KPITarget></wsag:ServiceLevelObjective>` +
  '<wsag:BusinessValueList/></wsag:GuaranteeTerm>';

const offer = (terms: string, context = ''): string =>
  `<wsag:AgreementOffer xmlns:wsag="${ns.wsag}" xmlns:jsdl="${ns.jsdl}"><wsag:Name>choices</wsag:Name>` +
  `<wsag:Context><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>${context}</wsag:Context>` +
  `<wsag:Terms>${terms}</wsag:Terms></wsag:AgreementOffer>`;

const exactlyOne = (count: number, prefix: string): string =>
  `<wsag:ExactlyOne>${Array.from({ length: count }, (_, i) => job(`${prefix}${i + 1}`, i + 1)).join('')}</wsag:ExactlyOne>`;

/** The term names of an alternative's Terms, in order, and whether they are in normal form. */
function termsOf(termsXml: string): string[] {
  expect(termsXml).toMatch(/^<wsag:Terms[^>]*><wsag:All><wsag:(ServiceDescriptionTerm|GuaranteeTerm) /);
  expect(termsXml).not.toMatch(/ExactlyOne|OneOrMore|<wsag:All>.*<wsag:All>/s);
  return [...termsXml.matchAll(/<wsag:(?:ServiceDescriptionTerm|GuaranteeTerm) wsag:Name="([^"]+)"/g)].map(
    (m) => m[1] as string,
  );
}

describe('an offer without choices', () => {
  it('is its own only alternative, not marked as one', () => {
    const plain = read(offerXml('deadline-job'));
    expect(plain.alternatives()).toEqual([plain]);
    expect(plain.alternatives()[0]).toBe(plain);
    expect(plain.alternative).toBeUndefined();
  });

  it('nested wsag:All without ExactlyOne / OneOrMore is no choice either', () => {
    const nested = read(offer(`<wsag:All>${job('A', 1)}<wsag:All>${job('B', 2)}</wsag:All></wsag:All>`));
    expect(nested.alternatives()).toEqual([nested]);
  });
});

describe('alternatives of nested All / ExactlyOne / OneOrMore', () => {
  const nested = read(
    offer(
      `<wsag:All>${job('A', 1)}` +
        `<wsag:ExactlyOne>${job('B1', 2)}<wsag:All>${job('B2a', 3)}${job('B2b', 4)}</wsag:All></wsag:ExactlyOne>` +
        `<wsag:OneOrMore>${guarantee('G1')}${guarantee('G2')}</wsag:OneOrMore></wsag:All>`,
    ),
  );
  const alternatives = nested.alternatives();

  it('All takes every child (a product), ExactlyOne and OneOrMore one child at a time, in document order', () => {
    expect(alternatives.map((a) => termsOf(canonicalTerms(a)))).toEqual([
      ['A', 'B1', 'G1'],
      ['A', 'B1', 'G2'],
      ['A', 'B2a', 'B2b', 'G1'],
      ['A', 'B2a', 'B2b', 'G2'],
    ]);
  });

  it('says which alternative each is: 1-based index, count, service description terms', () => {
    expect(alternatives.map((a) => a.alternative)).toEqual([
      { index: 1, count: 4, terms: ['A', 'B1'] },
      { index: 2, count: 4, terms: ['A', 'B1'] },
      { index: 3, count: 4, terms: ['A', 'B2a', 'B2b'] },
      { index: 4, count: 4, terms: ['A', 'B2a', 'B2b'] },
    ]);
  });

  it('reads each alternative on its own: service terms, guarantee terms', () => {
    expect(alternatives.map((a) => a.serviceTermNames)).toEqual([
      ['A', 'B1'],
      ['A', 'B1'],
      ['A', 'B2a', 'B2b'],
      ['A', 'B2a', 'B2b'],
    ]);
    expect(alternatives.map((a) => a.guaranteeTerms.map((g) => g.name))).toEqual([['G1'], ['G2'], ['G1'], ['G2']]);
    for (const a of alternatives) expect(a.alternatives()).toEqual([a]);
  });

  it('keeps the rest of the offer: each offerXml is the whole, schema-valid wsag:AgreementOffer', () => {
    for (const a of alternatives) {
      expect(canonicalOffer(a)).toMatch(/^<wsag:AgreementOffer [^>]*><wsag:Name>choices<\/wsag:Name><wsag:Context>/);
      expect(ourSchemaProblem(canonicalOffer(a))).toBeUndefined();
      expect(a.name).toBe('choices');
    }
  });

  it('is computed once', () => {
    expect(nested.alternatives()).toBe(alternatives);
  });

  it('works whatever prefix (or none) the offer uses for wsag', () => {
    const unprefixed = offer(`<wsag:All>${exactlyOne(2, 'J')}</wsag:All>`)
      .replace(/wsag:(?=[A-Z])/g, '')
      .replace(`xmlns:wsag="${ns.wsag}"`, `xmlns="${ns.wsag}" xmlns:wsag="${ns.wsag}"`)
      .replace(/ Name=/g, ' wsag:Name=')
      .replace(/ ServiceName=/g, ' wsag:ServiceName=');
    const read2 = read(unprefixed).alternatives();
    expect(read2.map((a) => a.request.nodeCount)).toEqual([1, 2]);
    expect(canonicalTerms(read2[1]!)).toMatch(/^<Terms [^>]*><All><ServiceDescriptionTerm wsag:Name="J2"/);
  });
});

describe('the number of alternatives, known without building them', () => {
  it('is what alternatives() gives, for offers with and without choices', () => {
    const shapes = [
      offerXml('deadline-job'),
      offer(`<wsag:All>${job('A', 1)}<wsag:All>${job('B', 2)}</wsag:All></wsag:All>`),
      offer(`<wsag:All>${exactlyOne(1, 'A')}</wsag:All>`),
      offer(
        `<wsag:All>${job('A', 1)}<wsag:ExactlyOne>${job('B1', 2)}<wsag:All>${job('B2a', 3)}${job('B2b', 4)}</wsag:All></wsag:ExactlyOne><wsag:OneOrMore>${guarantee('G1')}${guarantee('G2')}</wsag:OneOrMore></wsag:All>`,
      ),
      offer(`<wsag:All>${exactlyOne(8, 'A')}${exactlyOne(8, 'B')}</wsag:All>`),
    ];
    const counts = shapes.map((xml) => read(xml)).map((o) => [o.alternativeCount, o.alternatives().length]);
    expect(counts).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
      [4, 4],
      [64, 64],
    ]);
  });
});

describe('the number of alternatives is capped', () => {
  it(`allows ${maxAlternatives}`, () => {
    const alternatives = read(offer(`<wsag:All>${exactlyOne(8, 'A')}${exactlyOne(8, 'B')}</wsag:All>`)).alternatives();
    expect(alternatives).toHaveLength(64);
    expect(alternatives[63]?.alternative).toEqual({ index: 64, count: 64, terms: ['A8', 'B8'] });
  });

  it('refuses more with InvalidTerms naming the count (a sum of ExactlyOne children)', () => {
    const error = thrown(() => read(offer(`<wsag:All>${exactlyOne(65, 'A')}</wsag:All>`)));
    expect(error).toBeInstanceOf(InvalidTerms);
    expect(error.message).toBe(
      'wsag:Terms: its ExactlyOne / OneOrMore compositors combine into 65 alternatives; at most 64 are considered',
    );
  });

  it('refuses more with InvalidTerms naming the count (a product under All)', () => {
    const error = thrown(() => read(offer(`<wsag:All>${exactlyOne(8, 'A')}${exactlyOne(9, 'B')}</wsag:All>`)));
    expect(error).toBeInstanceOf(InvalidTerms);
    expect(error.message).toMatch(/combine into 72 alternatives; at most 64/);
  });
});

describe('creation constraints apply per alternative', () => {
  const twoJobs = offerXml('deadline-job').replace(
    /<wsag:All>(<wsag:ServiceDescriptionTerm.*?<\/wsag:ServiceDescriptionTerm>)/s,
    (_m, sdt: string) =>
      `<wsag:All><wsag:ExactlyOne>${sdt.replace('<jsdl:Exact>4<', '<jsdl:Exact>512<')}${sdt}</wsag:ExactlyOne>`,
  );
  const whole = read(twoJobs);
  const [big, small] = whole.alternatives();

  it('the offer with its choices fails (two deadlines), each alternative is judged alone', () => {
    expect(constraintProblem('deadline-job', whole)).toMatch(/^Constraint #1 is not met/);
    expect(big?.request.nodeCount).toBe(512);
    expect(constraintProblem('deadline-job', big!)).toMatch(
      /^Item 'NodeCount' at \/wsag:AgreementOffer\/wsag:Terms\/wsag:All\/wsag:ServiceDescriptionTerm.*value "512" violates facet maxInclusive/,
    );
    expect(small?.request.nodeCount).toBe(4);
    expect(constraintProblem('deadline-job', small!)).toBeUndefined();
  });

  it("the agreement carries the chosen alternative's Terms and says which it was", () => {
    const agreement = new XmlAgreementWriter().write(small!, {
      agreementId: 'a-1',
      initiator: 'alice',
      responder: 'site',
      templateId: 'deadline-job-v1',
      templateName: 'deadline-job',
    });
    expect(agreement).toContain('<jsdl:Exact>4</jsdl:Exact>');
    expect(agreement).not.toContain('512');
    expect(agreement).not.toContain('ExactlyOne');
    expect(agreement).toContain(
      `<srv:ChosenAlternative xmlns:srv="${ns.srv}" Count="2" Index="2"><srv:Term>Job</srv:Term></srv:ChosenAlternative></wsag:Context>`,
    );
    expect(ourSchemaProblem(agreement)).toBeUndefined();
    if (haveXmllint) expect(referenceProblems({ agreement })).toEqual({});
  });
});

describe('the Context of an offer that accepts a negotiation offer', () => {
  const epr = (id?: string): string =>
    `<wsa:Address>https://site.example/wsag/Negotiation</wsa:Address>${id ? `<wsa:ReferenceParameters><srv:NegotiationId>${id}</srv:NegotiationId></wsa:ReferenceParameters>` : ''}`;
  const negotiationExtension = (counterOfferTo: string, id?: string): string =>
    `<wsag-neg:NegotiationExtension xmlns:wsag-neg="${ns.wsagNeg}" xmlns:wsa="${ns.wsa}" xmlns:srv="${ns.srv}">` +
    `<wsag-neg:ResponderNegotiationEPR>${epr(id)}</wsag-neg:ResponderNegotiationEPR>` +
    `<wsag-neg:NegotiationOfferContext><wsag-neg:CounterOfferTo>${counterOfferTo}</wsag-neg:CounterOfferTo>` +
    '<wsag-neg:Creator>NegotiationInitiator</wsag-neg:Creator><wsag-neg:State><wsag-neg:Acceptable/></wsag-neg:State></wsag-neg:NegotiationOfferContext>' +
    '</wsag-neg:NegotiationExtension>';
  const withContext = (extra: string): string =>
    offerXml('deadline-job').replace('</wsag:Context>', `${extra}</wsag:Context>`);

  it('names the accepted offer and the negotiation (its EPR reference parameter)', () => {
    const accepting = read(
      withContext(`<x:Tag xmlns:x="urn:x">kept</x:Tag>${negotiationExtension('offer-7', 'neg-1')}`),
    );
    expect(accepting.accepts).toEqual({ offerId: 'offer-7', negotiationId: 'neg-1' });
    expect(accepting.context.extensions).toHaveLength(1);
    expect(accepting.context.extensions[0]).toMatch(/^<x:Tag [^>]*xmlns:x="urn:x">kept<\/x:Tag>$/);
  });

  it('the negotiation id is optional; RenegotiationExtension is read the same way', () => {
    expect(read(withContext(negotiationExtension('offer-7'))).accepts).toEqual({ offerId: 'offer-7' });
    const renegotiation = negotiationExtension('offer-9', 'neg-2')
      .replaceAll('NegotiationExtension', 'RenegotiationExtension')
      .replace(
        '<wsag-neg:NegotiationOfferContext>',
        `<wsag-neg:ResponderAgreementEPR>${epr()}</wsag-neg:ResponderAgreementEPR><wsag-neg:NegotiationOfferContext>`,
      );
    expect(read(withContext(renegotiation)).accepts).toEqual({ offerId: 'offer-9', negotiationId: 'neg-2' });
  });

  it('an empty CounterOfferTo is InvalidTerms naming the element', () => {
    const error = thrown(() => read(withContext(negotiationExtension(' '))));
    expect(error).toBeInstanceOf(InvalidTerms);
    expect(error.message).toMatch(
      /wsag-neg:NegotiationExtension needs wsag-neg:NegotiationOfferContext\/wsag-neg:CounterOfferTo/,
    );
  });

  it('the agreement records the accepted offer once; srv elements a client wrote are not copied', () => {
    const forged = `<srv:AcceptedOffer xmlns:srv="${ns.srv}"><srv:OfferId>forged</srv:OfferId></srv:AcceptedOffer>`;
    const accepting = read(withContext(`${forged}${negotiationExtension('offer-7', 'neg-1')}`));
    const agreement = new XmlAgreementWriter().write(accepting, {
      agreementId: 'a-2',
      initiator: 'alice',
      responder: 'site',
      templateId: 'deadline-job-v1',
      templateName: 'deadline-job',
    });
    expect(agreement.match(/AcceptedOffer /g)).toHaveLength(1);
    expect(agreement).toContain(
      `<srv:AcceptedOffer xmlns:srv="${ns.srv}"><srv:NegotiationId>neg-1</srv:NegotiationId><srv:OfferId>offer-7</srv:OfferId></srv:AcceptedOffer>`,
    );
    expect(agreement).not.toContain('NegotiationExtension');
    expect(agreement).not.toContain('ChosenAlternative');
    expect(ourSchemaProblem(agreement)).toBeUndefined();
    if (haveXmllint) expect(referenceProblems({ agreement })).toEqual({});
  });
});

describe('sla:UseReservation', () => {
  it('names the reservation a job uses', () => {
    const xml = offerXml('deadline-job').replace(
      /<sla:MigrationPolicy[^>]*?(\/>|><\/sla:MigrationPolicy>)/,
      (policy) => `${policy}<sla:UseReservation>ar-42</sla:UseReservation>`,
    );
    expect(ourSchemaProblem(xml)).toBeUndefined();
    expect(read(xml).request.useReservation).toBe('ar-42');
    expect(read(offerXml('deadline-job')).request).not.toHaveProperty('useReservation');
  });
});
