import { describe, expect, it } from 'vitest';
import type { Negotiation, NegotiationOfferRecord } from '../../src/domain/negotiation.js';
import type { CounterOfferDetails } from '../../src/engine/ports.js';
import { ns } from '../../src/xml/namespaces.js';
import { withXml } from '../../src/xml/libxml.js';
import { readNegotiationRequest } from '../../src/xml/negotiation-reader.js';
import {
  XmlNegotiationWriter,
  historyEntry,
  negotiableTemplate,
  negotiationPropertiesDocument,
} from '../../src/xml/negotiation-writer.js';
import { requireTool } from '../support/tools.js';
import {
  canonicalOffer,
  canonicalTerms,
  constraintProblem,
  offerXml,
  ourSchemaProblem,
  read,
  referenceProblems,
  renderedTemplate,
} from './fixtures.js';

const haveXmllint = requireTool('xmllint');
const writer = new XmlNegotiationWriter();
const slot = (start: string, end: string, nodes = 8) => ({ start: new Date(start), end: new Date(end), nodes });
const between = (xml: string, element: string): string | undefined =>
  new RegExp(`<${element}>([^<]*)</${element}>`).exec(xml)?.[1];

describe('withSlot: a reservation window moves to the slot', () => {
  it('sets StartTime and EndTime (UTC, whole seconds) and re-reads the request', () => {
    const moved = writer.withSlot(
      read(offerXml('advance-reservation')),
      slot('2026-11-22T08:00:00.000Z', '2026-11-22T10:00:00.400Z'),
    );
    expect(between(canonicalTerms(moved), 'arp:StartTime')).toBe('2026-11-22T08:00:00Z');
    expect(between(canonicalTerms(moved), 'arp:EndTime')).toBe('2026-11-22T10:00:01Z'); // never earlier than the slot
    expect(moved.request.window).toEqual({
      start: new Date('2026-11-22T08:00:00Z'),
      end: new Date('2026-11-22T10:00:01Z'),
    });
    expect(canonicalOffer(moved)).toContain(canonicalTerms(moved).slice(canonicalTerms(moved).indexOf('<wsag:All>')));
    expect(constraintProblem('advance-reservation', moved)).toBeUndefined();
    expect(ourSchemaProblem(canonicalOffer(moved))).toBeUndefined();
  });

  it('keeps a Duration, consistent with the slot; adds no EndTime where the offer gave only a Duration', () => {
    const durationOnly = offerXml('advance-reservation').replace(
      /<arp:EndTime>[^<]*<\/arp:EndTime>/,
      '<arp:Duration>7200</arp:Duration>',
    );
    const moved = writer.withSlot(read(durationOnly), slot('2026-11-22T08:00:00Z', '2026-11-22T11:00:00Z'));
    expect(canonicalTerms(moved)).toMatch(
      /<arp:AllocationTimeConstraint><arp:StartTime>2026-11-22T08:00:00Z<\/arp:StartTime><arp:Duration>10800<\/arp:Duration><\/arp:AllocationTimeConstraint>/,
    );
    expect(moved.request.window?.end).toEqual(new Date('2026-11-22T11:00:00Z'));

    const both = offerXml('advance-reservation').replace(
      '</arp:EndTime>',
      '</arp:EndTime><arp:Duration>7200</arp:Duration>',
    );
    const movedBoth = writer.withSlot(read(both), slot('2026-11-22T08:00:00Z', '2026-11-22T10:00:00Z'));
    expect(canonicalTerms(movedBoth)).toContain(
      '<arp:StartTime>2026-11-22T08:00:00Z</arp:StartTime><arp:EndTime>2026-11-22T10:00:00Z</arp:EndTime><arp:Duration>7200</arp:Duration>',
    );
  });

  it('reads the WSAG4J time constraint the same way', () => {
    const wsag4j = offerXml('advance-reservation')
      .replace(/arp:AllocationTimeConstraint/g, 'w:TimeConstraint')
      .replace(/arp:(Start|End)Time/g, 'w:$1Time')
      .replace('<w:TimeConstraint>', `<w:TimeConstraint xmlns:w="${ns.wsag4jt}">`);
    const moved = writer.withSlot(read(wsag4j), slot('2026-11-23T00:00:00Z', '2026-11-23T02:00:00Z'));
    expect(moved.request.window).toEqual({
      start: new Date('2026-11-23T00:00:00Z'),
      end: new Date('2026-11-23T02:00:00Z'),
    });
  });
});

describe('withSlot: a job starts no earlier than the slot, and its deadline moves only later', () => {
  const job = read(offerXml('deadline-job')); // RuntimeEstimate 3600, Deadline 2026-11-21T18:00:00Z

  it('inserts sla:EarliestStart in schema order; a deadline before the slot end moves to it, as does the CompletedBy promising it', () => {
    const moved = writer.withSlot(job, slot('2026-11-21T19:00:00Z', '2026-11-21T20:00:00Z', 4));
    expect(canonicalTerms(moved)).toContain(
      '<sla:RuntimeEstimate>3600</sla:RuntimeEstimate><sla:EarliestStart>2026-11-21T19:00:00Z</sla:EarliestStart><sla:Deadline>2026-11-21T20:00:00Z</sla:Deadline>',
    );
    expect(between(canonicalTerms(moved), 'sla:CompletedBy')).toBe('2026-11-21T20:00:00Z');
    expect(moved.request).toMatchObject({
      earliestStart: new Date('2026-11-21T19:00:00Z'),
      deadline: new Date('2026-11-21T20:00:00Z'),
      runtimeSeconds: 3600,
    });
    expect(moved.guaranteeTerms[0]?.target).toEqual({ kind: 'CompletedBy', at: new Date('2026-11-21T20:00:00Z') });
    expect(constraintProblem('deadline-job', moved)).toBeUndefined();
    expect(ourSchemaProblem(canonicalOffer(moved))).toBeUndefined();
  });

  it('keeps a deadline the slot meets; replaces an earliest start the offer had', () => {
    const early = offerXml('deadline-job').replace(
      '</sla:RuntimeEstimate>',
      '</sla:RuntimeEstimate><sla:EarliestStart>2026-11-21T12:00:00Z</sla:EarliestStart>',
    );
    const moved = writer.withSlot(read(early), slot('2026-11-21T13:00:00Z', '2026-11-21T14:00:00Z', 4));
    expect(canonicalTerms(moved).match(/EarliestStart>/g)).toHaveLength(2);
    expect(moved.request.earliestStart).toEqual(new Date('2026-11-21T13:00:00Z'));
    expect(moved.request.deadline).toEqual(new Date('2026-11-21T18:00:00Z'));
    expect(between(canonicalTerms(moved), 'sla:CompletedBy')).toBe('2026-11-21T18:00:00Z');
  });

  it('stays the same alternative of the offer', () => {
    const choices = offerXml('deadline-job').replace(
      /<wsag:All>(<wsag:ServiceDescriptionTerm.*?<\/wsag:ServiceDescriptionTerm>)/s,
      (_m, sdt: string) =>
        `<wsag:All><wsag:ExactlyOne>${sdt}${sdt.replace('<jsdl:Exact>4<', '<jsdl:Exact>2<')}</wsag:ExactlyOne>`,
    );
    const second = read(choices).alternatives()[1];
    const moved = writer.withSlot(second!, slot('2026-11-21T13:00:00Z', '2026-11-21T14:00:00Z', 2));
    expect(moved.alternative).toEqual({ index: 2, count: 2, terms: ['Job'] });
    expect(moved.request.nodeCount).toBe(2);
  });
});

describe('withSlot: a deadline moves to the completion the job needs, not just the slot end', () => {
  it('moves a deadline earlier than the given completion to it (room for covered outages)', () => {
    const job = read(offerXml('deadline-job'));
    const moved = writer.withSlot(
      job,
      slot('2026-11-21T17:00:00Z', '2026-11-21T18:00:00Z', 4),
      new Date('2026-11-21T18:25:00.200Z'),
    );
    expect(between(canonicalTerms(moved), 'sla:Deadline')).toBe('2026-11-21T18:25:01Z');
    expect(between(canonicalTerms(moved), 'sla:CompletedBy')).toBe('2026-11-21T18:25:01Z');
    expect(
      writer.withSlot(job, slot('2026-11-21T13:00:00Z', '2026-11-21T14:00:00Z', 4), new Date('2026-11-21T15:30:00Z'))
        .request.deadline,
    ).toEqual(new Date('2026-11-21T18:00:00Z')); // met already: kept
  });
});

describe('withTerms: the terms a counter-offer changes', () => {
  it('fewer nodes: TotalResourceCount becomes that Exact count, and a NodesAvailable objective promising the old count follows', () => {
    const fewer = writer.withTerms(read(offerXml('advance-reservation')), { nodeCount: 3 });
    expect(canonicalTerms(fewer)).toContain(
      '<jsdl:TotalResourceCount><jsdl:Exact>3</jsdl:Exact></jsdl:TotalResourceCount>',
    );
    expect(between(canonicalTerms(fewer), 'sla:NodesAvailable')).toBe('3');
    expect(fewer.request.nodeCount).toBe(3);
    expect(fewer.guaranteeTerms[0]?.target).toEqual({ kind: 'NodesAvailable', nodes: 3 });
    expect(constraintProblem('advance-reservation', fewer)).toBeUndefined();
    expect(ourSchemaProblem(canonicalOffer(fewer))).toBeUndefined();
    const ranged = offerXml('advance-reservation').replace(
      '<jsdl:Exact>8</jsdl:Exact>',
      '<jsdl:LowerBoundedRange>8</jsdl:LowerBoundedRange>',
    );
    expect(canonicalTerms(writer.withTerms(read(ranged), { nodeCount: 5 }))).toContain(
      '<jsdl:TotalResourceCount><jsdl:Exact>5</jsdl:Exact></jsdl:TotalResourceCount>',
    );
  });

  it('fewer nodes for a job: a longer runtime estimate; a later deadline moves the CompletedBy promising it', () => {
    const changed = writer.withTerms(read(offerXml('deadline-job')), {
      nodeCount: 2,
      runtimeSeconds: 7200,
      deadline: new Date('2026-11-21T20:00:00Z'),
    });
    expect(changed.request).toMatchObject({
      nodeCount: 2,
      runtimeSeconds: 7200,
      deadline: new Date('2026-11-21T20:00:00Z'),
    });
    expect(between(canonicalTerms(changed), 'sla:CompletedBy')).toBe('2026-11-21T20:00:00Z');
    expect(constraintProblem('deadline-job', changed)).toBeUndefined();
    expect(ourSchemaProblem(canonicalOffer(changed))).toBeUndefined();
  });

  it('a later window keeps its length', () => {
    const later = writer.withTerms(read(offerXml('advance-reservation')), {
      window: { start: new Date('2026-11-22T08:00:00Z'), end: new Date('2026-11-22T10:00:00Z') },
    });
    expect(later.request.window).toEqual({
      start: new Date('2026-11-22T08:00:00Z'),
      end: new Date('2026-11-22T10:00:00Z'),
    });
  });

  it('refuses a change the offer has no term for', () => {
    const noLevel = offerXml('advance-reservation').replace(/<sla:ServiceLevel>.*?<\/sla:ServiceLevel>/s, '');
    expect(() => writer.withTerms(read(noLevel), { deadline: new Date('2026-11-22T00:00:00Z') })).toThrow(
      /no sla:ServiceLevel whose deadline could be changed/,
    );
    expect(() =>
      writer.withTerms(read(offerXml('deadline-job')), { window: { start: new Date(0), end: new Date(1000) } }),
    ).toThrow(/neither a reservation window/);
  });
});

const details: CounterOfferDetails = {
  offerId: 'offer-2',
  counterOfferTo: 'offer-1',
  state: 'Acceptable',
  expirationTime: new Date('2026-11-21T12:30:00.250Z'),
  initiator: 'alice',
  responder: 'https://site.example/wsag',
  templateId: 'deadline-job-v1',
  templateName: 'deadline-job',
  price: { amount: 12.5, currency: 'EUR' },
  fee: { amount: 0.63, currency: 'EUR' },
  note: 'held until 12:30',
};

describe('counterOffer', () => {
  const offer = writer.withSlot(
    read(offerXml('deadline-job')),
    slot('2026-11-21T13:00:00Z', '2026-11-21T14:00:00Z', 4),
  );
  const acceptable = writer.counterOffer(offer, { ...details, alternative: { index: 1, count: 3, terms: ['Job'] } });
  const rejected = writer.counterOffer(read(offerXml('advance-reservation')), {
    ...details,
    offerId: 'offer-3',
    state: 'Rejected',
    price: undefined,
    fee: undefined,
    expirationTime: undefined,
    note: 'no 8 nodes free',
  });

  it('is a wsag-neg:NegotiationCounterOffer with the completed Context, the Terms and the offer context', () => {
    expect(acceptable).toMatch(
      /^<wsag-neg:NegotiationCounterOffer [^>]*wsag-neg:OfferId="offer-2"><wsag:Name>deadline-job<\/wsag:Name><wsag:Context>/,
    );
    expect(acceptable).toContain(
      '<wsag:Context><wsag:AgreementInitiator>alice</wsag:AgreementInitiator><wsag:AgreementResponder>https://site.example/wsag</wsag:AgreementResponder>' +
        '<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider><wsag:TemplateId>deadline-job-v1</wsag:TemplateId><wsag:TemplateName>deadline-job</wsag:TemplateName></wsag:Context>',
    );
    expect(acceptable).toContain('<sla:EarliestStart>2026-11-21T13:00:00Z</sla:EarliestStart>');
    expect(acceptable).toContain(
      '<wsag-neg:NegotiationOfferContext><wsag-neg:CounterOfferTo>offer-1</wsag-neg:CounterOfferTo><wsag-neg:ExpirationTime>2026-11-21T12:30:00Z</wsag-neg:ExpirationTime>' +
        `<wsag-neg:Creator>NegotiationResponder</wsag-neg:Creator><wsag-neg:State><wsag-neg:Acceptable><srv:Note xmlns:srv="${ns.srv}">held until 12:30</srv:Note></wsag-neg:Acceptable></wsag-neg:State>` +
        `<srv:Quote xmlns:srv="${ns.srv}"><srv:Price Currency="EUR">12.50</srv:Price><srv:PreparatoryFee Currency="EUR">0.63</srv:PreparatoryFee></srv:Quote>` +
        `<srv:ChosenAlternative xmlns:srv="${ns.srv}" Count="3" Index="1"><srv:Term>Job</srv:Term></srv:ChosenAlternative></wsag-neg:NegotiationOfferContext>` +
        '<wsag-neg:NegotiationConstraints></wsag-neg:NegotiationConstraints></wsag-neg:NegotiationCounterOffer>',
    );
  });

  it('a Rejected answer carries the note only', () => {
    expect(rejected).toContain(
      `<wsag-neg:State><wsag-neg:Rejected><srv:Note xmlns:srv="${ns.srv}">no 8 nodes free</srv:Note></wsag-neg:Rejected></wsag-neg:State></wsag-neg:NegotiationOfferContext>`,
    );
    expect(rejected).not.toContain('ExpirationTime');
    expect(rejected).not.toContain('Quote');
  });

  it('validates against our schemas', () => {
    expect(ourSchemaProblem(acceptable)).toBeUndefined();
    expect(ourSchemaProblem(rejected)).toBeUndefined();
  });

  it.runIf(haveXmllint)(
    'validates against the reference negotiation schema (xmllint), which would notice a broken one',
    () => {
      const broken = acceptable.replace('<wsag-neg:NegotiationConstraints></wsag-neg:NegotiationConstraints>', '');
      expect(ourSchemaProblem(broken)).toMatch(/NegotiationConstraints/);
      expect(Object.keys(referenceProblems({ acceptable, rejected, broken }))).toEqual(['broken']);
    },
  );
});

const requestContext = (inner: string): string =>
  `<wsag-neg:NegotiationContext xmlns:wsag-neg="${ns.wsagNeg}">` +
  `<wsag-neg:NegotiationType><wsag-neg:Negotiation></wsag-neg:Negotiation></wsag-neg:NegotiationType>${inner}` +
  '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>';
const requestOf = (xml: string) => withXml(xml, 'context', (doc) => readNegotiationRequest(doc.root));
const parties = {
  initiator: 'alice',
  responder: 'https://site.example/wsag',
  expiresAt: new Date('2026-11-21T13:00:00Z'),
};

describe('completeContext', () => {
  it('fills in ExpirationTime, NegotiationInitiator and NegotiationResponder in schema order', () => {
    const completed = writer.completeContext(requestOf(requestContext('')), parties);
    expect(completed).toBe(
      requestContext(
        '<wsag-neg:ExpirationTime>2026-11-21T13:00:00Z</wsag-neg:ExpirationTime><wsag-neg:NegotiationInitiator>alice</wsag-neg:NegotiationInitiator>' +
          '<wsag-neg:NegotiationResponder>https://site.example/wsag</wsag-neg:NegotiationResponder>',
      ),
    );
    expect(requestOf(completed).expirationTime).toEqual(parties.expiresAt);
  });

  it("replaces the initiator's wishes with the server's view and keeps extensions", () => {
    const received = requestContext(
      '<wsag-neg:ExpirationTime>2026-12-01T00:00:00Z</wsag-neg:ExpirationTime><wsag-neg:NegotiationInitiator><x:Me xmlns:x="urn:x">bob</x:Me></wsag-neg:NegotiationInitiator>',
    ).replace('</wsag-neg:NegotiationContext>', '<x:Extra xmlns:x="urn:x">1</x:Extra></wsag-neg:NegotiationContext>');
    const completed = writer.completeContext(requestOf(received), parties);
    expect(completed).toContain(
      '<wsag-neg:ExpirationTime>2026-11-21T13:00:00Z</wsag-neg:ExpirationTime><wsag-neg:NegotiationInitiator>alice</wsag-neg:NegotiationInitiator><wsag-neg:NegotiationResponder>',
    );
    expect(completed).toContain('<x:Extra xmlns:x="urn:x">1</x:Extra></wsag-neg:NegotiationContext>');
    expect(ourSchemaProblem(completed)).toBeUndefined();
    if (haveXmllint) expect(referenceProblems({ completed })).toEqual({});
  });
});

describe('negotiation resource properties', () => {
  const counterOffer = writer.counterOffer(read(offerXml('deadline-job')), details);
  const record = (overrides: Partial<NegotiationOfferRecord>): NegotiationOfferRecord => ({
    offerId: 'offer-2',
    counterOfferTo: 'offer-1',
    creator: 'NegotiationResponder',
    state: 'Acceptable',
    createdAt: new Date('2026-11-21T12:00:00Z'),
    document: counterOffer,
    request: read(offerXml('deadline-job')).request,
    ...overrides,
  });
  const hold = {
    allocation: { start: new Date('2026-11-21T13:00:00Z'), end: new Date('2026-11-21T14:00:00Z'), nodes: 4 },
    expiresAt: new Date('2026-11-21T12:30:00Z'),
    state: 'Held' as const,
    fee: { amount: 0.63, currency: 'EUR' },
  };
  const template = negotiableTemplate(renderedTemplate('deadline-job'));

  it('negotiableTemplate: the wsag:Template as wsag-neg:NegotiableTemplate, same content and TemplateId', () => {
    expect(template).toMatch(
      /^<wsag-neg:NegotiableTemplate [^>]*wsag:TemplateId="deadline-job-v1"><wsag:Name>deadline-job<\/wsag:Name>/,
    );
    expect(template).toContain('<wsag:CreationConstraints>');
    expect(template).toMatch(/<\/wsag:CreationConstraints><\/wsag-neg:NegotiableTemplate>$/);
    expect(negotiableTemplate(template)).toBe(template);
    expect(() => negotiableTemplate(offerXml('deadline-job'))).toThrow(/made from a wsag:Template/);
  });

  it('historyEntry: the offer as wsag-neg:NegotiationOffer with its hold at the end of the offer context', () => {
    const entry = historyEntry(record({ hold }));
    expect(entry).toMatch(/^<wsag-neg:NegotiationOffer [^>]*wsag-neg:OfferId="offer-2">/);
    expect(entry).toMatch(/<\/wsag-neg:NegotiationOffer>$/);
    expect(entry).toContain(
      `<srv:Hold xmlns:srv="${ns.srv}"><srv:State>Held</srv:State><srv:ExpiresAt>2026-11-21T12:30:00Z</srv:ExpiresAt>` +
        '<srv:Fee Currency="EUR">0.63</srv:Fee></srv:Hold></wsag-neg:NegotiationOfferContext><wsag-neg:NegotiationConstraints>',
    );
  });

  it('historyEntry: an offer sent without an OfferId shows the one the server filed it under', () => {
    const sent = counterOffer.replace(/ wsag-neg:OfferId="offer-2"/, '');
    expect(sent).not.toContain('OfferId');
    const entry = historyEntry(record({ document: sent, offerId: 'offer-7', creator: 'NegotiationInitiator' }));
    expect(entry).toMatch(/^<wsag-neg:NegotiationOffer [^>]*wsag-neg:OfferId="offer-7">/);
    // One sent with its own keeps it, once.
    const kept = historyEntry(record({ offerId: 'offer-2' }));
    expect(kept.match(/OfferId=/g)).toEqual(['OfferId=']);
    expect(ourSchemaProblem(entry)).toBeUndefined();
    if (haveXmllint) expect(referenceProblems({ entry })).toEqual({});
  });

  it('historyEntry: a later state of the hold replaces the earlier one; no hold, no srv:Hold', () => {
    const earlier = historyEntry(record({ hold }));
    const expired = historyEntry(
      record({
        document: earlier,
        hold: {
          ...hold,
          state: 'Expired',
          charged: { amount: 0.63, currency: 'EUR' },
          endedAt: new Date('2026-11-21T12:30:00Z'),
        },
      }),
    );
    expect(expired.match(/<srv:Hold /g)).toHaveLength(1);
    expect(expired).toContain(
      '<srv:State>Expired</srv:State><srv:ExpiresAt>2026-11-21T12:30:00Z</srv:ExpiresAt><srv:Fee Currency="EUR">0.63</srv:Fee><srv:Charged Currency="EUR">0.63</srv:Charged><srv:EndedAt>2026-11-21T12:30:00Z</srv:EndedAt>',
    );
    expect(historyEntry(record({ document: earlier }))).not.toContain('srv:Hold');
  });

  it('negotiationPropertiesDocument and its parts validate against our schemas and the reference (xmllint)', () => {
    const negotiation: Negotiation = {
      id: 'neg-1',
      initiator: 'alice',
      type: 'Negotiation',
      state: 'Open',
      rounds: 1,
      context: writer.completeContext(requestOf(requestContext('')), parties),
      offers: [
        record({ offerId: 'offer-1', creator: 'NegotiationInitiator', state: 'Solicited', document: counterOffer }),
        record({ hold }),
      ],
      createdAt: new Date('2026-11-21T12:00:00Z'),
      updatedAt: new Date('2026-11-21T12:00:00Z'),
      expiresAt: parties.expiresAt,
    };
    const properties = negotiationPropertiesDocument(negotiation, [
      renderedTemplate('deadline-job'),
      renderedTemplate('advance-reservation'),
    ]);
    expect(properties).toMatch(/^<wsag-neg:NegotiationProperties [^>]*><wsag-neg:NegotiationContext [^>]*>/);
    expect(properties.match(/<wsag-neg:NegotiableTemplate /g)).toHaveLength(2);
    expect(properties.match(/<wsag-neg:NegotiationOffer /g)).toHaveLength(2);
    const documents = { properties, template, entry: historyEntry(record({ hold })) };
    for (const xml of Object.values(documents)) expect(ourSchemaProblem(xml)).toBeUndefined();
    if (haveXmllint) expect(referenceProblems(documents)).toEqual({});
  });
});
