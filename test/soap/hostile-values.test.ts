import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, type WsagFault } from '../../src/client/wsag-client.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Typed values are checked when they are
 * read, times beyond the planning horizon are refused naming the element, and no request
 * can leave the plan unusable for the next one. A 64-node cluster (none kept warm for sessions) with its clock at 12:00.
 */
const now = new Date('2026-11-21T12:00:00Z');
let server: TestServer;
let client: WsagClient;
let templates: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 64, warmNodes: 0 }, clock: { now: () => now } });
  client = new WsagClient(server.url);
  templates = Object.fromEntries(
    (await client.templates()).map((t) => [/<wsag:Name>([^<]+)</.exec(t)?.[1] as string, t]),
  );
});
afterAll(async () => server?.close());

const offer = (template: string, settings: OfferSetting[] = []) =>
  offerFromTemplate(templates[template] as string, settings);
const refusal = (offerXml: string) =>
  client.createAgreement(offerXml).then(
    () => undefined,
    (error: unknown) => error as WsagFault,
  );
const reservation = (start: string, end: string, nodes = 1) =>
  offer('advance-reservation', [{ location: 'NodeCount', value: String(nodes) }])
    .replace(/<arp:StartTime>[^<]*<\/arp:StartTime>/, `<arp:StartTime>${start}</arp:StartTime>`)
    .replace(/<arp:EndTime>[^<]*<\/arp:EndTime>/, `<arp:EndTime>${end}</arp:EndTime>`);

/** A valid reservation is still accepted (and released): the plan was not poisoned. */
async function stillAdmits(): Promise<void> {
  const { agreementId } = await client.createAgreement(reservation('2026-11-21T14:00:00Z', '2026-11-21T15:00:00Z', 64));
  await client.terminate(agreementId);
}

describe('one request cannot stop admission (class 1)', () => {
  it.each([
    ['arp:StartTime', '99999-01-01T00:00:00Z', '2026-11-21T15:00:00Z'],
    ['arp:EndTime', '2026-11-21T14:00:00Z', '99999-01-01T00:00:00Z'],
  ])(
    '%s in year 99999 is InvalidTerms naming it, and the next CreateAgreement succeeds',
    async (element, start, end) => {
      const fault = await refusal(reservation(start, end));
      expect(fault?.code).toBe('InvalidTerms');
      expect(fault?.description).toMatch(
        new RegExp(`^${element} "99999-01-01T00:00:00Z" is not an xs:dateTime this server can represent`),
      );
      await stillAdmits();
    },
  );
});

describe('dates the server cannot represent are refused by name (class 3)', () => {
  it.each([
    ['sla:Deadline', '10000-01-01T00:00:00Z'],
    ['sla:Deadline', '-2026-11-21T12:00:00Z'],
    ['sla:Deadline', '2026-02-30T12:00:00Z'],
    ['sla:EarliestStart', '1969-12-31T23:59:59Z'],
  ])('%s %s', async (element, value) => {
    const xml = offer('deadline-job').replace(
      /<sla:Deadline>[^<]*<\/sla:Deadline>/,
      element === 'sla:Deadline'
        ? `<sla:Deadline>${value}</sla:Deadline>`
        : `<sla:EarliestStart>${value}</sla:EarliestStart><sla:Deadline>2026-11-21T20:00:00Z</sla:Deadline>`,
    );
    const fault = await refusal(xml);
    expect(fault?.code).toMatch(/^(InvalidTerms|SchemaViolation)$/);
    expect(fault?.description).toContain(element.split(':')[1] as string); // the schema names it {namespace}Deadline
    await stillAdmits();
  });

  it('in a Negotiate offer too: a fault naming the element, never InternalError', async () => {
    const { negotiationId } = await client.initiateNegotiation();
    const bad = offer('deadline-job').replace(
      /<sla:Deadline>[^<]*<\/sla:Deadline>/,
      '<sla:Deadline>10000-01-01T00:00:00Z</sla:Deadline>',
    );
    const advisory = negotiationOffer(bad, { counterOfferTo: 'deadline-job-v1', state: 'Advisory' });
    const fault = await client.negotiate(negotiationId, [advisory]).then(
      () => undefined,
      (e: unknown) => e as WsagFault,
    );
    expect(fault?.code).toBe('InvalidTerms');
    expect(fault?.description).toContain('sla:Deadline "10000-01-01T00:00:00Z"');
  });
});

describe('promises beyond the planning horizon, in any form, are refused (class 6)', () => {
  it('a one-node reservation of 100 years written with arp:EndTime: CannotSatisfy naming the window end', async () => {
    const fault = await refusal(reservation('2026-11-21T14:00:00Z', '2126-11-21T14:00:00Z'));
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toBe(
      "the reservation window's end (arp:EndTime, or arp:StartTime plus arp:Duration) 2126-11-21T14:00:00Z is beyond the planning horizon: the plan reaches 2027-11-21T12:00:00Z (365 days ahead); ask again nearer the time",
    );
    await stillAdmits();
  });

  it('a deadline beyond the horizon: CannotSatisfy naming sla:Deadline', async () => {
    // sla:CompletedBy moves with it: the earlier of the two is the deadline the plan serves.
    const xml = offer('deadline-job').replace(
      /<sla:(Deadline|CompletedBy)>[^<]*<\/sla:(Deadline|CompletedBy)>/g,
      (_, name: string) => `<sla:${name}>2030-01-01T00:00:00Z</sla:${name}>`,
    );
    const fault = await refusal(xml);
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toMatch(/^sla:Deadline 2030-01-01T00:00:00Z is beyond the planning horizon/);
  });

  it('sla:NodesAvailable 64 with one node booked is refused (the admission rule)', async () => {
    const xml = reservation('2026-11-21T14:00:00Z', '2026-11-21T15:00:00Z').replace(
      /<sla:NodesAvailable>\d+<\/sla:NodesAvailable>/,
      '<sla:NodesAvailable>64</sla:NodesAvailable>',
    );
    expect(xml).toContain('<sla:NodesAvailable>64</sla:NodesAvailable>');
    const fault = await refusal(xml);
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toContain('sla:NodesAvailable 64, but 1 node(s) are booked');
  });
});

describe('numbers and times that make no sense are named (class 8)', () => {
  it('jsdl:LowerBound 1e309: not a finite number, not "Infinity nodes requested"', async () => {
    const xml = offer('deadline-job').replace(
      /<jsdl:TotalResourceCount>.*?<\/jsdl:TotalResourceCount>/,
      '<jsdl:TotalResourceCount><jsdl:Range><jsdl:LowerBound>1e309</jsdl:LowerBound><jsdl:UpperBound>1e310</jsdl:UpperBound></jsdl:Range></jsdl:TotalResourceCount>',
    );
    const fault = await refusal(xml);
    expect(fault?.code).toBe('InvalidTerms');
    expect(fault?.description).toBe('jsdl:TotalResourceCount "1e309" is not a finite number');
  });

  it('a fractional node count is not a whole number', async () => {
    const fault = await refusal(
      offer('deadline-job').replace(
        /<jsdl:TotalResourceCount>.*?<\/jsdl:TotalResourceCount>/,
        '<jsdl:TotalResourceCount><jsdl:Exact>2.5</jsdl:Exact></jsdl:TotalResourceCount>',
      ),
    );
    expect(fault?.description).toBe('jsdl:TotalResourceCount "2.5" is not a whole number');
  });

  it('a Deadline before EarliestStart names EarliestStart', async () => {
    const xml = offer('deadline-job').replace(
      /<sla:Deadline>[^<]*<\/sla:Deadline>/,
      '<sla:EarliestStart>2026-11-22T12:00:00Z</sla:EarliestStart><sla:Deadline>2026-11-21T18:00:00Z</sla:Deadline>',
    );
    const fault = await refusal(xml);
    expect(fault?.code).toBe('InvalidTerms');
    expect(fault?.description).toBe(
      'sla:Deadline 2026-11-21T18:00:00Z is not after sla:EarliestStart 2026-11-22T12:00:00Z',
    );
  });

  it('a node count in a foreign namespace is refused, not replaced by a default', async () => {
    const xml = offer('deadline-job').replace(
      /<jsdl:TotalResourceCount>.*?<\/jsdl:TotalResourceCount>/,
      '<x:TotalResourceCount xmlns:x="urn:example:other"><x:Exact>4</x:Exact></x:TotalResourceCount>',
    );
    const fault = await refusal(xml);
    expect(fault?.code).toBe('UnsupportedTerm');
    expect(fault?.description).toMatch(/^x:TotalResourceCount in jsdl:Resources is not supported by this server/);
  });
});

describe('the work one message may ask for is bounded (class 7)', () => {
  it('a Negotiate with 17 offers is refused naming the limit, before any is weighed', async () => {
    const { negotiationId } = await client.initiateNegotiation();
    const one = negotiationOffer(offer('deadline-job'), { counterOfferTo: 'deadline-job-v1', state: 'Advisory' });
    const fault = await client
      .negotiate(
        negotiationId,
        Array.from({ length: 17 }, () => one),
      )
      .then(
        () => undefined,
        (e: unknown) => e as WsagFault,
      );
    expect(fault?.code).toBe('InvalidTerms');
    expect(fault?.description).toBe(
      'wsag-neg:NegotiateInput holds 17 wsag-neg:NegotiationOffer elements; at most 16 are considered per message: send the rest in another round',
    );
    expect((await client.negotiate(negotiationId, [one])).length).toBeGreaterThan(0); // one offer is weighed: counter-offers come back
  });
});
