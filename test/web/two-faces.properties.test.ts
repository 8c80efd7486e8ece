import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import type { RunningServer } from '../../src/server.js';
import { acceptingOffer, negotiationOffer } from '../../src/xml/accepting-offer.js';
import { leaseOffer } from '../../src/xml/lease-offer.js';
import { reservationOffer } from '../engine/run-time-support.js';
import { startSqliteServer } from '../support/server.js';

/**
 * One state machine, two faces: random sequences of lifecycle calls (create, terminate,
 * negotiate and accept, renegotiate), each step sent over JSON or SOAP at random, even
 * within one negotiation. After every step both faces see the same state of every
 * agreement, the same offers of every negotiation, an audit history that depends on what
 * was done and not on the face it was done through, and a plan that books exactly the
 * agreements that are Observed.
 */
type Face = 'json' | 'soap';
const face = fc.constantFrom<Face>('json', 'soap');
const step = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), via: face, nodes: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('terminate' as const), via: face, pick: fc.nat() }),
  fc.record({
    kind: fc.constant('negotiate' as const),
    via: fc.tuple(face, face, face),
    nodes: fc.integer({ min: 1, max: 2 }),
  }),
  fc.record({ kind: fc.constant('extend' as const), via: fc.tuple(face, face, face), pick: fc.nat() }),
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

interface Known {
  id: string;
  state: 'Observed' | 'Terminated';
  history: string[];
  end: Date;
}

let server: RunningServer;
let dataDir: string;
let soap: WsagClient;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-two-faces-'));
  server = await startSqliteServer(dataDir);
  soap = new WsagClient(server.url);
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: the answers' JSON, read field by field
type Body = any;
const json = async (method: string, route: string, body?: unknown): Promise<Body> => {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: body === undefined ? { 'x-requested-with': 'property' } : { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const answer = (await response.json()) as Body;
  if (!response.ok) throw new Error(`${method} ${route}: ${answer.title}: ${answer.detail}`);
  return answer;
};
const iso = (d: Date) => d.toISOString().replace(/\.000Z$/, 'Z');
const hour = 3600_000;
/** Each reservation an hour of its own, far enough ahead: the cluster never fills. */
let slot = 0;
const nextWindow = () => {
  const start = new Date(Math.ceil(Date.now() / hour) * hour + (3 + 3 * slot++) * hour);
  return { start, end: new Date(start.getTime() + hour) };
};

async function create(via: Face, nodes: number): Promise<Known> {
  const { start, end } = nextWindow();
  const id =
    via === 'json'
      ? (
          await json('POST', '/api/agreements', {
            template: 'advance-reservation',
            items: { NodeCount: nodes, StartTime: iso(start), EndTime: iso(end) },
          })
        ).id
      : (await soap.createAgreement(await reservationOffer(soap, nodes, start, end))).agreementId;
  return { id, state: 'Observed', history: ['created'], end };
}

/** Initiate, solicit and accept, each through its own face; `renegotiate`: that agreement, extended by an hour. */
async function negotiate(via: [Face, Face, Face], nodes: number, renegotiate?: Known): Promise<string> {
  const [initiate, offer, accept] = via;
  const negotiationId =
    initiate === 'json'
      ? (await json('POST', '/api/negotiations', renegotiate ? { agreement: renegotiate.id } : {})).id
      : (await soap.initiateNegotiation(renegotiate ? { renegotiate: renegotiate.id } : {})).negotiationId;
  const window = renegotiate ? undefined : nextWindow();
  const until = renegotiate && new Date(renegotiate.end.getTime() + hour);
  let offerId: string;
  if (offer === 'json') {
    const sent = until
      ? { change: { until: iso(until) }, state: 'Solicited' }
      : {
          template: 'advance-reservation',
          items: { NodeCount: nodes, StartTime: iso(window!.start), EndTime: iso(window!.end) },
          state: 'Solicited',
        };
    const answers = await json('POST', `/api/negotiations/${negotiationId}/offers`, { offers: [sent] });
    offerId = answers.counterOffers.find((o: Body) => o.state === 'Acceptable').offerId;
  } else {
    const document = until
      ? leaseOffer(await soap.agreementDocument(renegotiate!.id), { until })
      : await reservationOffer(soap, nodes, window!.start, window!.end);
    const answers = await soap.negotiate(negotiationId, [
      negotiationOffer(document, {
        counterOfferTo: renegotiate ? renegotiate.id : 'advance-reservation-v1',
        state: 'Solicited',
      }),
    ]);
    offerId = answers.find((o) => o.state === 'Acceptable')?.offerId as string;
  }
  expect(offerId, 'an Acceptable counter-offer').toBeDefined();
  // Both faces see the negotiation's offers alike, each under the id the server filed it under (an initiator's offer
  // sent without an OfferId too).
  const seen = (o: { creator: string; state: string; offerId: string }) => `${o.creator} ${o.state} ${o.offerId}`;
  const jsonOffers = (await json('GET', `/api/negotiations/${negotiationId}`)).offers.map(seen);
  expect((await soap.negotiationOffers(negotiationId)).map(seen)).toEqual(jsonOffers);
  if (accept === 'json') return (await json('POST', `/api/negotiations/${negotiationId}/offers/${offerId}/accept`)).id;
  const counterOffer = (await soap.negotiationOffers(negotiationId)).find((o) => o.offerId === offerId);
  const address = `${server.url}/wsag/Negotiation`;
  return (await soap.createAgreement(acceptingOffer(counterOffer!.xml, { negotiation: { address, negotiationId } })))
    .agreementId;
}

async function run(s: Step, known: Known[]): Promise<void> {
  const live = known.filter((k) => k.state === 'Observed');
  switch (s.kind) {
    case 'create':
      known.push(await create(s.via, s.nodes));
      return;
    case 'terminate': {
      const target = live[s.pick % Math.max(1, live.length)];
      if (!target) return;
      if (s.via === 'json') await json('POST', `/api/agreements/${target.id}/terminate`);
      else await soap.terminate(target.id);
      target.state = 'Terminated';
      target.history.push('terminated');
      return;
    }
    case 'negotiate': {
      const id = await negotiate(s.via, s.nodes);
      known.push({ id, state: 'Observed', history: ['created'], end: new Date(0) });
      const agreement = await json('GET', `/api/agreements/${id}`);
      (known.at(-1) as Known).end = new Date(agreement.allocation.segments.at(-1).end);
      return;
    }
    case 'extend': {
      const target = live[s.pick % Math.max(1, live.length)];
      if (!target) return;
      expect(await negotiate(s.via, 0, target)).toBe(target.id);
      target.history.push('renegotiated');
      target.end = new Date(target.end.getTime() + hour);
      return;
    }
  }
}

async function check(known: Known[]): Promise<void> {
  const plan = await json('GET', '/api/plan');
  const booked = new Set(plan.bookings.map((b: Body) => b.id));
  for (const k of known) {
    const detail = await json('GET', `/api/agreements/${k.id}`);
    expect(detail.state, k.id).toBe(k.state);
    expect((await soap.state(k.id)).state, k.id).toBe(k.state);
    expect(
      detail.history.map((e: Body) => e.action).filter((a: string) => a !== 'plan-moved'),
      k.id,
    ).toEqual(k.history);
    expect(booked.has(k.id), `${k.id} booked`).toBe(k.state === 'Observed');
  }
}

describe('the JSON and SOAP faces', () => {
  it('see one state machine whatever face each step goes through', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        const known: Known[] = [];
        for (const s of steps) {
          await run(s, known);
          await check(known);
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 12) },
    );
  }, 120_000);
});
