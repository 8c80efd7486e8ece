import type { XmlElement } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { c14n } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns, prefixes } from '../../src/xml/namespaces.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { createAgreementBody, faultOf, post, soap11 } from '../support/soap.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Two negotiations race (concurrent Negotiate requests over HTTP SOAP) for the last free
 * nodes of a window: exactly one gets an Acceptable counter-offer holding them, the other a
 * Rejected counter-offer naming why (followed by the scheduler's Advisory counter-offer: the
 * same window later). Repeated, each round on the capacity the previous winner's Terminate
 * gave back.
 */
const clusterNodes = 8;
const booked = 5; // by a plain agreement; 3 nodes stay free in the window
const wanted = clusterNodes - booked;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes, admins: ['anonymous'], holdSeconds: 600 } });
});
afterAll(async () => server?.close());

const windowLocation = (end: 'StartTime' | 'EndTime') =>
  `/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:${end}`;

async function soap(path: string, body: string, header = ''): Promise<string> {
  const response = await post(server.url + path, soap11(body, header));
  if (response.status !== 200) {
    const { code, message } = faultOf(response.text);
    throw new Error(`${path}: HTTP ${response.status} ${code}: ${message}`);
  }
  return response.text;
}

async function advanceReservationTemplate(): Promise<string> {
  const text = await soap(
    '/wsag/AgreementFactory',
    `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">wsag:Template</rp:GetResourceProperty>`,
  );
  return withXml(text, 'templates', (doc) => {
    const template = doc.get(
      "//wsag:Template[@wsag:TemplateId='advance-reservation-v1']",
      prefixes,
    ) as XmlElement | null;
    if (!template) throw new Error('the server serves no advance-reservation-v1 template');
    return c14n(template);
  });
}

function reservation(template: string, nodes: number, start: Date, end: Date): string {
  return offerFromTemplate(template, [
    { location: 'NodeCount', value: String(nodes) },
    { location: windowLocation('StartTime'), value: start.toISOString() },
    { location: windowLocation('EndTime'), value: end.toISOString() },
  ]);
}

async function initiate(): Promise<string> {
  return (await new WsagClient(server.url).initiateNegotiation()).negotiationId;
}

const negotiationHeader = (id: string) => `<srv:NegotiationId xmlns:srv="${ns.srv}">${id}</srv:NegotiationId>`;

interface Answer {
  offerId: string;
  counterOfferTo: string;
  state: string;
  note: string;
}

async function negotiate(id: string, offer: string): Promise<Answer[]> {
  const text = await soap(
    '/wsag/Negotiation',
    `<wsag-neg:NegotiateInput xmlns:wsag-neg="${ns.wsagNeg}">${offer}</wsag-neg:NegotiateInput>`,
    negotiationHeader(id),
  );
  return withXml(text, 'NegotiateOutput', (doc) =>
    (doc.find('//wsag-neg:NegotiationCounterOffer', prefixes) as XmlElement[]).map((e) => ({
      offerId: e.eval('string(@wsag-neg:OfferId)', prefixes) as string,
      counterOfferTo: e.eval('string(wsag-neg:NegotiationOfferContext/wsag-neg:CounterOfferTo)', prefixes) as string,
      state: e.eval('local-name(wsag-neg:NegotiationOfferContext/wsag-neg:State/*)', prefixes) as string,
      note: e.eval('string(wsag-neg:NegotiationOfferContext/wsag-neg:State/*/srv:Note)', prefixes) as string,
    })),
  );
}

async function plan(): Promise<
  Array<{
    kind: string;
    id: string;
    nodes: number;
    start: string;
    end: string;
    promised?: { start: string; end: string };
  }>
> {
  const response = await fetch(`${server.url}/api/plan`);
  expect(response.status).toBe(200);
  return (
    (await response.json()) as {
      bookings: Array<{ kind: string; id: string; nodes: number; start: string; end: string }>;
    }
  ).bookings;
}

describe('two negotiations racing for the last free nodes', () => {
  it('exactly one gets an Acceptable counter-offer (a hold), the other a Rejected one saying why; five times', {
    timeout: 60_000,
  }, async () => {
    const template = await advanceReservationTemplate();
    const start = new Date(Math.ceil((Date.now() + 3 * 3600_000) / 60_000) * 60_000);
    const end = new Date(start.getTime() + 2 * 3600_000);
    const created = await soap(
      '/wsag/AgreementFactory',
      createAgreementBody(reservation(template, booked, start, end)),
    );
    const agreementId = /<srv:AgreementId>([^<]+)</.exec(created)?.[1] as string;
    expect((await plan()).map((b) => [b.kind, b.id, b.nodes])).toEqual([['agreement', agreementId, booked]]);

    const rounds = 5;
    const winners: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const ids = await Promise.all([initiate(), initiate()]);
      const offers = ids.map((_, i) =>
        negotiationOffer(reservation(template, wanted, start, end), {
          offerId: `racer-${round}-${i}`,
          counterOfferTo: 'advance-reservation-v1',
          state: 'Solicited',
        }),
      );
      // Both requests are on the wire before either is answered.
      const answers = await Promise.all(ids.map((id, i) => negotiate(id, offers[i] as string)));

      for (const [i, answer] of answers.entries()) {
        for (const a of answer) expect(a.counterOfferTo, `round ${round}, racer ${i}`).toBe(`racer-${round}-${i}`);
      }
      const states = answers.map((a) => a[0]?.state);
      expect([...states].sort(), `round ${round}: ${JSON.stringify(answers)}`).toEqual(['Acceptable', 'Rejected']);
      const winner = states.indexOf('Acceptable');
      const won = answers[winner]?.[0] as Answer;
      const [lost, ...counterOffers] = answers[1 - winner] as Answer[];
      expect(answers[winner]).toHaveLength(1);
      const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');
      const seconds = (d: Date, s: number) => new Date(d.getTime() + s * 1000);
      // Once the nodes are released (15 s after the window) and prepared again (36 s).
      const next = seconds(end, 51);
      const later = new Date(next.getTime() + 2 * 3600_000);
      expect(lost?.note).toBe(
        `${wanted} nodes are not free from ${iso(start)} to ${iso(end)}: 0 of ${clusterNodes} nodes are free throughout that window ` +
          `with its preparation and release (${iso(seconds(start, -36))} to ${iso(seconds(end, 15))}); earliest feasible start for ${wanted} nodes: ${iso(next)} (ends ${iso(later)})`,
      );
      // No fewer nodes are free either: the one counter-offer is the same window, later.
      expect(counterOffers.map((c) => [c.state, c.note])).toEqual([
        [
          'Advisory',
          `counter-offer (later start): the same window moved to start at ${iso(next)}; ${wanted} nodes from ${iso(next)} to ${iso(later)}; solicit it to hold the capacity`,
        ],
      ]);
      // The plan holds exactly the winner's nodes beside the agreement.
      expect((await plan()).map((b) => [b.kind, b.id, b.nodes]).sort()).toEqual([
        ['agreement', agreementId, booked],
        ['hold', won.offerId, wanted],
      ]);
      const loser = await server.negotiationRepository.get(ids[1 - winner] as string);
      expect(loser?.offers.some((o) => o.hold)).toBe(false);
      winners.push(ids[winner] as string);

      // The winner walks away: its hold is released and the next round races for the same nodes.
      await soap(
        '/wsag/Negotiation',
        `<wsag-neg:TerminateInput xmlns:wsag-neg="${ns.wsagNeg}"/>`,
        negotiationHeader(ids[winner] as string),
      );
      expect((await plan()).map((b) => [b.kind, b.id])).toEqual([['agreement', agreementId]]);
    }
    expect(new Set(winners).size).toBe(rounds);
  });

  it('many negotiations racing for room for two: exactly two are Acceptable', { timeout: 60_000 }, async () => {
    const template = await advanceReservationTemplate();
    // A window of its own, where the whole cluster is free: room for two holds of 4 nodes.
    const start = new Date(Math.ceil((Date.now() + 30 * 3600_000) / 60_000) * 60_000);
    const end = new Date(start.getTime() + 3600_000);
    const ids = await Promise.all(Array.from({ length: 8 }, () => initiate()));
    const answers = await Promise.all(
      ids.map((id, i) =>
        negotiate(
          id,
          negotiationOffer(reservation(template, 4, start, end), {
            offerId: `many-${i}`,
            counterOfferTo: 'advance-reservation-v1',
            state: 'Solicited',
          }),
        ),
      ),
    );
    const states = answers.map((a) => a[0]?.state);
    expect(states.filter((s) => s === 'Acceptable')).toHaveLength(2);
    expect(states.filter((s) => s === 'Rejected')).toHaveLength(6);
    for (const answer of answers.filter((a) => a[0]?.state === 'Rejected')) {
      expect(answer[0]?.note).toMatch(/^4 nodes are not free from .*: 0 of 8 nodes are free throughout that window/);
    }
    const holds = (await plan()).filter(
      (b) => b.kind === 'hold' && new Date(b.promised?.start as string).getTime() === start.getTime(),
    );
    expect(holds.map((h) => h.nodes)).toEqual([4, 4]);
  });
});
