import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { defaultPriceCurve, demandFactor, parsePriceCurve } from '../../src/domain/pricing.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { wsag } from '../cli/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Demand pricing (Tycoon): a slot's price is the list price times the price
 * curve's factor at the plan's load over the slot (docs/pricing.md). An 8-node cluster at
 * 12:00; the priced window is 14:00 to 15:00; reservations fill it step by step.
 */
const now = new Date('2026-11-21T12:00:00Z');
const window = [
  { location: '//arp:StartTime', value: '2026-11-21T14:00:00Z' },
  { location: '//arp:EndTime', value: '2026-11-21T15:00:00Z' },
];
let server: TestServer;
let client: WsagClient;
let template: string;
const reservation = (nodes: number) =>
  offerFromTemplate(template, [{ location: 'NodeCount', value: String(nodes) }, ...window]);

beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 8, admins: ['anonymous'] }, clock: { now: () => now } });
  client = new WsagClient(server.url);
  template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
});
afterAll(async () => server?.close());

/** The Advisory quotes for 2 nodes from 14:00: each start slot's price. */
async function quotesForTwo(): Promise<Record<string, number>> {
  const { negotiationId } = await client.initiateNegotiation();
  const answers = await client.negotiate(negotiationId, [
    negotiationOffer(reservation(2), { counterOfferTo: 'advance-reservation-v1', state: 'Advisory' }),
  ]);
  return Object.fromEntries(answers.filter((a) => a.state === 'Advisory').map((a) => [a.slot?.start, a.price?.amount]));
}
const quoteForTwo = async () => (await quotesForTwo())['2026-11-21T14:00:00Z'] as number;

describe('prices rise with the load along the published curve', () => {
  it('2 nodes for an hour: list price up to half the cluster booked, then dearer step by step; the agreement keeps its quote', async () => {
    const quotes: Array<[number, number]> = [];
    for (const booked of [0, 4, 5, 6]) {
      const already = quotes.length === 0 ? 0 : (quotes.at(-1) as [number, number])[0];
      if (booked > already) await client.createAgreement(reservation(booked - already));
      quotes.push([booked, await quoteForTwo()]);
    }
    // 2 node-hours x 1 EUR x the curve's factor at booked/8: 1, 1, 1.2083, 1.4167.
    expect(quotes).toEqual([
      [0, 2],
      [4, 2],
      [5, 2.42],
      [6, 2.83],
    ]);
    for (const [booked, price] of quotes) expect(price).toBeCloseTo(2 * demandFactor(defaultPriceCurve, booked / 8), 2);
    // The next slot, once the others' nodes are released (15:00:15) and prepared again (36 s), is empty: a customer who can wait pays the list price.
    expect((await quotesForTwo())['2026-11-21T15:00:51Z']).toBe(2);

    // Created now, at 6 of 8 booked, the agreement is priced as quoted and records its factor.
    const created = await client.createAgreement(reservation(2));
    const stored = await server.repository.get(created.agreementId);
    expect(stored?.price).toEqual({ amount: 2.83, currency: 'EUR' });
    expect(stored?.priceFactor).toBeCloseTo(1 + (0.5 * (0.75 - 0.5)) / 0.3, 6);
  });

  it('GET /api/prices and wsag prices publish the curve and the hours ahead with their load and price', async () => {
    const doc = await client.request<{
      curve: unknown;
      outlook: Array<{ start: string; load: number; factor: number; nodeHour: number }>;
    }>('/api/prices?hours=4', 'prices');
    expect(doc.curve).toEqual(defaultPriceCurve);
    // 12:00 is empty; 14:00 is full (8 of 8 booked by the test above): twice the list price. The nodes' preparation
    // (36 s before 14:00) and release (15 s after 15:00) are booked too: 8 x 36 / (8 x 3600) and 8 x 15 / (8 x 3600).
    expect(doc.outlook.map((o) => [o.start, o.load, o.factor, o.nodeHour])).toEqual([
      ['2026-11-21T12:00:00.000Z', 0, 1, 1],
      ['2026-11-21T13:00:00.000Z', 0.01, 1, 1],
      ['2026-11-21T14:00:00.000Z', 1, 2, 2],
      ['2026-11-21T15:00:00.000Z', 0.0042, 1, 1],
    ]);
    const printed = await wsag(['prices', '--hours', '3'], { url: server.url });
    expect(printed.code).toBe(0);
    expect(printed.out[1]).toBe('price curve (load -> factor): 0:1, 0.5:1, 0.8:1.5, 1:2');
    expect(printed.out.at(-1)).toMatch(/^2026-11-21T14:00:00.000Z\s+100.0 %\s+x2.000\s+2.00 EUR$/);
    const bad = await wsag(['prices', '--hours', 'many'], { url: server.url });
    expect(bad.code).toBe(2);
  });
});

describe('the price curve', () => {
  it('interpolates linearly between its points and holds its ends', () => {
    const curve = [
      { load: 0, factor: 0.8 },
      { load: 0.5, factor: 1 },
      { load: 1, factor: 3 },
    ];
    expect([0, 0.25, 0.5, 0.75, 1, 1.5, -1].map((load) => demandFactor(curve, load))).toEqual([
      0.8, 0.9, 1, 2, 3, 3, 0.8,
    ]);
    expect(demandFactor(undefined, 0.9)).toBe(1);
  });

  it('WSAG_PRICE_CURVE is read and checked, naming what is wrong', () => {
    expect(parsePriceCurve('0:1, 0.6:1.2, 1:4')).toEqual([
      { load: 0, factor: 1 },
      { load: 0.6, factor: 1.2 },
      { load: 1, factor: 4 },
    ]);
    expect(parsePriceCurve('0:1')).toEqual({ error: 'give at least two points LOAD:FACTOR, such as 0:1,0.5:1,1:2' });
    expect(parsePriceCurve('0:1,0.5,1:2')).toEqual({ error: '"0.5" is not LOAD:FACTOR with two numbers' });
    expect(parsePriceCurve('0:1,0.7:1,0.6:2,1:2')).toEqual({ error: 'loads must rise: 0.6 in "0.6:2" follows 0.7' });
    expect(parsePriceCurve('0:1,1:0')).toEqual({ error: 'factor 0 in "1:0" must be above 0 and at most 1000' });
    expect(parsePriceCurve('0.1:1,1:2')).toEqual({ error: 'the curve must start at load 0 and end at load 1' });
    expect(loadConfig({ WSAG_PRICE_CURVE: '0:1,1:1' }).priceCurve).toEqual([
      { load: 0, factor: 1 },
      { load: 1, factor: 1 },
    ]);
    expect(() => loadConfig({ WSAG_PRICE_CURVE: '0:1,2:2' })).toThrow(
      'WSAG_PRICE_CURVE: load 2 in "2:2" is outside 0 to 1',
    );
  });
});
