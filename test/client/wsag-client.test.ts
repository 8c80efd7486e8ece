import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { acceptingOffer, negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { deadUrl } from '../cli/support.js';

let server: TestServer;
let client: WsagClient;
let reservationOffer: string;
beforeAll(async () => {
  server = await startTestServer({ config: { admins: ['anonymous'] } });
  client = new WsagClient(server.url);
  const template = (await client.templates()).find((t) =>
    t.includes('wsag:TemplateId="advance-reservation-v1"'),
  ) as string;
  reservationOffer = offerFromTemplate(template);
});
afterAll(async () => {
  await server.close();
});

const solicited = (counterOfferTo = 'advance-reservation-v1', offerId?: string) =>
  negotiationOffer(reservationOffer, { ...(offerId ? { offerId } : {}), counterOfferTo, state: 'Solicited' });

describe('WsagClient: negotiation', () => {
  it('initiates, gets advisory slots, solicits, and accepts the committing offer', async () => {
    const ref = await client.initiateNegotiation();
    expect(ref.address).toBe(`${server.url}/wsag/Negotiation`);
    expect(ref.negotiationId).not.toBe('');

    const slots = await client.negotiate(ref.negotiationId, [
      negotiationOffer(reservationOffer, {
        offerId: 'a1',
        counterOfferTo: 'advance-reservation-v1',
        state: 'Advisory',
      }),
    ]);
    expect(slots.length).toBeGreaterThan(0);
    for (const slot of slots) {
      expect(slot).toMatchObject({ state: 'Advisory', creator: 'NegotiationResponder', counterOfferTo: 'a1' });
      expect(slot.price?.currency).toBe('EUR');
      expect(slot.note).toMatch(/start slot \d of \d/);
    }
    expect((await client.plan()).bookings).toEqual([]); // advice holds nothing

    const [committing] = await client.negotiate(ref.negotiationId, [solicited('advance-reservation-v1', 's1')]);
    expect(committing).toMatchObject({ state: 'Acceptable', counterOfferTo: 's1' });
    expect(committing?.expirationTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(committing?.fee?.amount).toBeGreaterThan(0);
    expect(committing?.xml).toMatch(/^<wsag-neg:NegotiationCounterOffer /);
    expect((await client.plan()).bookings).toEqual([
      expect.objectContaining({ kind: 'hold', id: committing?.offerId }),
    ]);

    // The history holds both parties' offers, the committing one with its hold.
    const history = await client.negotiationOffers(ref.negotiationId);
    expect(history.map((o) => o.offerId)).toContain(committing?.offerId);
    expect(history.find((o) => o.offerId === committing?.offerId)?.hold?.state).toBe('Held');
    expect(await client.negotiationProperty(ref.negotiationId, 'NegotiationContext')).toHaveLength(1);
    expect((await client.negotiationProperty(ref.negotiationId, 'NegotiableTemplate')).length).toBeGreaterThan(0);

    const created = await client.createAgreement(acceptingOffer(committing?.xml as string, { negotiation: ref }));
    expect((await client.state(created.agreementId)).state).toBe('Observed');
    expect((await client.plan()).bookings).toEqual([
      expect.objectContaining({ kind: 'agreement', id: created.agreementId }),
    ]);
    const listed = (await client.negotiations()).find((n) => n.id === ref.negotiationId);
    expect(listed).toMatchObject({ state: 'Concluded', agreementCreated: created.agreementId });
    expect((await client.negotiation(ref.negotiationId)).state).toBe('Concluded');
    await client.terminate(created.agreementId);
  });

  it('terminating a negotiation releases its hold; advertise records offers without answering', async () => {
    const ref = await client.initiateNegotiation();
    await client.advertise(ref.negotiationId, [
      negotiationOffer(reservationOffer, {
        offerId: 'ad1',
        counterOfferTo: 'advance-reservation-v1',
        state: 'Advisory',
      }),
    ]);
    const [committing] = await client.negotiate(ref.negotiationId, [solicited()]);
    expect(committing?.state).toBe('Acceptable');
    expect((await client.plan()).bookings.some((b) => b.kind === 'hold')).toBe(true);
    await client.terminateNegotiation(ref.negotiationId);
    expect((await client.plan()).bookings.filter((b) => b.kind === 'hold')).toEqual([]);
    expect((await client.negotiation(ref.negotiationId)).state).toBe('Terminated');
    expect((await client.negotiationOffers(ref.negotiationId)).some((o) => o.offerId === 'ad1')).toBe(true);
  });

  it('a server fault arrives as WsagFault with the protocol code', async () => {
    const error = await client.negotiate('no-such-negotiation', [solicited()]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WsagFault);
    expect((error as WsagFault).code).toBe('UnknownResource');
  });
});

describe('WsagClient: pending agreements and decisions', () => {
  it('creates a pending agreement and lets an operator accept or reject it', async () => {
    const accepted = await client.createPendingAgreement(reservationOffer);
    expect((await client.state(accepted.agreementId)).state).toBe('Pending');
    expect((await client.decide(accepted.agreementId, 'Accept')).state).toBe('Observed');
    const rejected = await client.createPendingAgreement(reservationOffer, {
      address: 'http://127.0.0.1:9/acceptance',
    });
    expect((await client.decide(rejected.agreementId, 'Reject')).state).toBe('Rejected');
    await client.terminate(accepted.agreementId);
  });

  it('a refused decision is a WsagFault carrying the JSON error code', async () => {
    const error = await client.decide('no-such-agreement', 'Accept').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WsagFault);
    expect((error as WsagFault).code).toBe('UnknownResource');
    expect((error as WsagFault).httpStatus).toBe(404);
  });
});

describe('WsagClient: unreachable servers', () => {
  it('names the URL it could not reach, for SOAP and JSON calls alike', async () => {
    const url = await deadUrl();
    const dead = new WsagClient(url);
    await expect(dead.initiateNegotiation()).rejects.toThrow(`cannot reach ${url}/wsag/NegotiationFactory`);
    await expect(dead.plan()).rejects.toThrow(`cannot reach ${url}/api/plan`);
  });
});
