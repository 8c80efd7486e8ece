import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, projectRoot, type TestServer } from '../support/server.js';
import { lastJsonLine, pythonModuleProblem, requirePythonModule, runPython } from './python.js';

/**
 * Interoperability of WS-Agreement Negotiation (GFD.193) with a third-party SOAP stack: Python
 * zeep, from the served WSDLs alone, negotiates, holds, accepts and lets a hold expire
 * (test/interop/zeep_negotiation.py), reading /api/plan between the steps.
 *
 * The cluster has exactly the template's 8 nodes, so one booking fills it: a second party can
 * only get the window again if the hold on it was really released. Holds last 4 seconds: long
 * enough for the steps that need a standing hold, short enough to wait for.
 * Fails when /usr/bin/python3 or zeep is missing, unless WSAG_SKIP_INTEROP=1.
 */
const available = requirePythonModule('zeep');
const script = path.join(projectRoot, 'test/interop/zeep_negotiation.py');

if (!available) {
  const reason = `skipped because WSAG_SKIP_INTEROP=1: ${pythonModuleProblem('zeep')}`;
  console.warn(`zeep negotiation: ${reason}`);
  describe('zeep negotiation', () => {
    it.skip(reason, () => {});
  });
}

type Booking = [kind: 'hold' | 'agreement', id: string, nodes: number, start: string, end: string];
interface Money {
  amount: number;
  currency: string;
}
interface CounterOffer {
  offerId: string;
  counterOfferTo: string;
  creator: string;
  state: string;
  expirationTime: string | null;
  note: string | null;
  price: Money | null;
  fee: Money | null;
  templateId: string;
  nodes: number;
  start: string;
  end: string;
}
interface NegotiationSummary {
  id: string;
  state: string;
  agreementCreated?: string;
  offers: Array<{
    offerId: string;
    state: string;
    hold?: { state: string; nodes: number; fee: Money; charged?: Money; endedAt?: string; expiresAt: string };
  }>;
}

const ms = (iso: string) => new Date(iso).getTime();

describe.runIf(available)(
  'a zeep client, from the WSDLs alone, negotiates, holds, accepts and lets a hold expire',
  () => {
    let server: TestServer;
    const holdSeconds = 4;
    beforeAll(async () => {
      server = await startTestServer({ config: { admins: ['anonymous'], holdSeconds, clusterNodes: 8 } });
    });
    afterAll(async () => server?.close());

    it('Advisory slots book nothing; Solicited -> Acceptable holds; CreateAgreement accepts in time; an unaccepted hold expires with its fee', {
      timeout: 120_000,
    }, async () => {
      const run = await runPython([script, server.url], 90_000);
      const r = lastJsonLine(run);
      // On failure, show what zeep saw (the JSON names each mismatch) and its traceback.
      expect({ code: run.code, error: r.error, mismatches: r.mismatches }, run.stderr).toEqual({
        code: 0,
        error: undefined,
        mismatches: [],
      });
      expect(r.checks).toBeGreaterThanOrEqual(10);
      expect(r.templateId).toBe('advance-reservation-v1');
      const requested = r.requested as { nodes: number; start: string; end: string };
      expect(requested.nodes).toBe(8);

      // --- A. Advisory: several start slots, each priced, nothing booked.
      const advisory = r.advisory as CounterOffer[];
      expect(advisory.length).toBeGreaterThanOrEqual(2);
      for (const slot of advisory) {
        expect(slot).toMatchObject({
          state: 'Advisory',
          counterOfferTo: 'zeep-1',
          creator: 'NegotiationResponder',
          templateId: 'advance-reservation-v1',
          nodes: 8,
          expirationTime: null,
        });
        expect(slot.price?.currency).toBe('EUR');
        expect(slot.price?.amount).toBeGreaterThan(0);
        expect(slot.note).toMatch(/start slot \d+ of \d+: 8 nodes/);
        expect(ms(slot.end) - ms(slot.start)).toBe(ms(requested.end) - ms(requested.start));
      }
      expect(advisory[0]?.start).toBe(requested.start); // the requested window is free: it is the first slot
      expect(r.planBeforeAdvisory).toEqual([]);
      expect(r.planAfterAdvisory).toEqual([]);

      // --- Solicited: an Acceptable counter-offer with an ExpirationTime, a quote and a preparatory fee; a hold.
      const [acceptable] = r.acceptable as CounterOffer[];
      expect(acceptable).toMatchObject({
        state: 'Acceptable',
        counterOfferTo: 'zeep-2',
        nodes: 8,
        start: advisory[0]?.start,
        end: advisory[0]?.end,
      });
      expect(acceptable?.fee?.amount).toBeGreaterThan(0);
      expect(acceptable?.fee?.amount).toBeLessThan(acceptable?.price?.amount as number);
      // The hold lasts the configured time from the answer, up to the next whole second (ExpirationTime is exact).
      const expiresIn = ms(acceptable?.expirationTime as string) - ms(r.acceptableReceivedAt as string);
      expect(expiresIn).toBeGreaterThan(0);
      expect(expiresIn).toBeLessThanOrEqual(holdSeconds * 1000 + 1000);
      const window = (b: { start: string; end: string }) => [ms(b.start), ms(b.end)];
      const planWithHold = r.planWithHold as Booking[];
      expect(planWithHold.map(([kind, id, nodes]) => [kind, id, nodes])).toEqual([['hold', acceptable?.offerId, 8]]);
      expect([ms(planWithHold[0]?.[3] as string), ms(planWithHold[0]?.[4] as string)]).toEqual(
        window(acceptable as CounterOffer),
      );

      // --- Accepted in time: Observed, the hold became the agreement (capacity used once).
      const agreementId = r.agreementId as string;
      expect(r.agreementState).toBe('Observed');
      expect((r.planAfterAgreement as Booking[]).map(([kind, id, nodes]) => [kind, id, nodes])).toEqual([
        ['agreement', agreementId, 8],
      ]);
      const first = r.negotiation1Summary as NegotiationSummary;
      expect(first).toMatchObject({ state: 'Concluded', agreementCreated: agreementId });
      expect(first.offers.find((o) => o.offerId === acceptable?.offerId)?.hold).toMatchObject({
        state: 'Confirmed',
        nodes: 8,
      });
      const stored = await server.repository.get(agreementId);
      expect(stored).toMatchObject({ state: 'Observed', origin: { offerId: acceptable?.offerId } });
      const promised = stored?.allocation?.promised;
      expect(promised && [promised.start.getTime(), promised.end.getTime(), stored?.allocation?.nodes]).toEqual([
        ...window(acceptable as CounterOffer),
        8,
      ]);

      // --- B. The agreement's window is taken: the next Advisory slots start where it ends.
      const advisory2 = r.advisory2 as CounterOffer[];
      // Once its nodes are released (15 s) and prepared again (36 s).
      const turnaround = (t: string | undefined) =>
        new Date(ms(t as string) + 51_000).toISOString().replace('.000Z', 'Z');
      expect(advisory2[0]?.start).toBe(turnaround(acceptable?.end));
      const [held] = r.held as CounterOffer[];
      expect(held).toMatchObject({
        state: 'Acceptable',
        counterOfferTo: 'zeep-4',
        start: advisory2[0]?.start,
        end: advisory2[0]?.end,
      });
      expect((r.planWithSecondHold as Booking[]).map(([kind, id]) => [kind, id])).toEqual([
        ['agreement', agreementId],
        ['hold', held?.offerId],
      ]);

      // While held, another negotiation cannot get the window: Rejected, naming why, and an
      // Advisory counter-offer with the same window later.
      expect(r.competitorBeforeExpiry).toBe(true);
      const [competitor, ...counterOffers] = r.competitor as CounterOffer[];
      expect(competitor).toMatchObject({ state: 'Rejected', counterOfferTo: 'zeep-5', expirationTime: null });
      expect(competitor?.note).toMatch(/8 nodes are not free from .* 0 of 8 nodes are free/);
      expect(counterOffers.map((c) => [c.state, c.counterOfferTo, c.start])).toEqual([
        ['Advisory', 'zeep-5', turnaround(held?.end)],
      ]);

      // Unaccepted, the hold leaves the plan (not before its ExpirationTime) ...
      expect(r.holdGoneAfterExpiration).toBe(true);
      expect((r.planAfterExpiry as Booking[]).map(([kind, id]) => [kind, id])).toEqual([['agreement', agreementId]]);
      // ... and the same capacity can be held again: the competitor's new Solicited offer is Acceptable.
      const [again] = r.again as CounterOffer[];
      expect(again).toMatchObject({
        state: 'Acceptable',
        counterOfferTo: 'zeep-6',
        start: held?.start,
        end: held?.end,
        nodes: 8,
      });
      expect((r.planHeldAgain as Booking[]).map(([kind, id]) => [kind, id])).toEqual([
        ['agreement', agreementId],
        ['hold', again?.offerId],
      ]);
      // Terminating that negotiation releases its hold.
      expect((r.planAfterTerminate as Booking[]).map(([kind, id]) => [kind, id])).toEqual([['agreement', agreementId]]);

      // Accepting the expired offer fails with OfferExpired and books nothing.
      const fault = r.expiredAcceptFault as { code: string; message: string };
      expect(fault.code).toBe('OfferExpired');
      expect(fault.message).toContain(held?.offerId);
      expect((r.planAfterExpiredAccept as Booking[]).map(([kind, id]) => [kind, id])).toEqual([
        ['agreement', agreementId],
      ]);

      // The fee is recorded: in the JSON view ...
      const second = r.negotiation2Summary as NegotiationSummary;
      expect(second.state).toBe('Open');
      const expiredHold = second.offers.find((o) => o.offerId === held?.offerId)?.hold;
      expect(expiredHold).toMatchObject({ state: 'Expired', nodes: 8, fee: held?.fee, charged: held?.fee });
      expect(ms(expiredHold?.endedAt as string)).toBeGreaterThanOrEqual(ms(expiredHold?.expiresAt as string));
      // ... and in the negotiation's wsag-neg:NegotiationOffer resource property (srv:Hold).
      expect(r.holdProperty).toEqual({
        state: 'Expired',
        expiresAt: held?.expirationTime,
        fee: held?.fee,
        charged: held?.fee,
      });
      expect(r.offerHistory).toContain(held?.offerId);

      // The server's record agrees.
      const stored2 = await server.negotiationRepository.get(r.negotiation2 as string);
      expect(stored2?.offers.find((o) => o.offerId === held?.offerId)?.hold?.state).toBe('Expired');
      const stored3 = await server.negotiationRepository.get(r.negotiation3 as string);
      expect(stored3?.state).toBe('Terminated');
      expect(stored3?.offers.find((o) => o.offerId === again?.offerId)?.hold?.state).toBe('Released');
    });
  },
);
