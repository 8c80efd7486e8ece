import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/domain/identity.js';
import {
  CannotSatisfy,
  InvalidStateTransition,
  InvalidTerms,
  NegotiationClosed,
  NotAuthorized,
  OfferExpired,
  TooManyRounds,
} from '../../src/domain/errors.js';
import type { OfferState } from '../../src/domain/negotiation.js';
import { AgreementFactory } from '../../src/engine/agreements/agreement-factory.js';
import { AgreementService } from '../../src/engine/agreements/agreement-service.js';
import { defaultConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import { NegotiationService } from '../../src/engine/negotiation/negotiation-service.js';
import type { AgreementRepository, NegotiationRepository, ReceivedNegotiationOffer } from '../../src/engine/ports.js';
import { ReservationUse } from '../../src/engine/agreements/reservation-use.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { XmlAgreementWriter } from '../../src/xml/agreement-writer.js';
import { XmlNegotiationWriter } from '../../src/xml/negotiation-writer.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { TemplateLibrary } from '../../src/xml/template-library.js';
import { receivedOffer } from '../support/offers.js';
import { projectRoot } from '../support/server.js';

const start = new Date('2026-11-21T12:00:00Z');
const templates = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));
const rendered = (id: string) => templates.render(start).find((t) => t.includes(`TemplateId="${id}"`)) as string;
const reservationOffer = (settings: OfferSetting[] = []) =>
  offerFromTemplate(rendered('advance-reservation-v1'), settings);
const alice: Caller = { identity: 'CN=alice', isAdmin: false };
const bob: Caller = { identity: 'CN=bob', isAdmin: false };
const operator: Caller = { identity: 'CN=ops', isAdmin: true };

/** The Context of an offer that accepts `offerId` (GFD.193 NegotiationExtension). */
function accepting(offerXml: string, offerId: string): string {
  const extension =
    '<wsag-neg:NegotiationExtension xmlns:wsag-neg="http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation">' +
    `<wsag-neg:NegotiationOfferContext><wsag-neg:CounterOfferTo>${offerId}</wsag-neg:CounterOfferTo>` +
    '<wsag-neg:Creator>NegotiationInitiator</wsag-neg:Creator><wsag-neg:State><wsag-neg:Acceptable/></wsag-neg:State>' +
    '</wsag-neg:NegotiationOfferContext></wsag-neg:NegotiationExtension>';
  return offerXml.replace('</wsag:Context>', `${extension}</wsag:Context>`);
}

function incoming(
  offerXml: string,
  state: OfferState,
  counterOfferTo = 'advance-reservation-v1',
  offerId?: string,
): ReceivedNegotiationOffer {
  return {
    ...(offerId ? { offerId } : {}),
    counterOfferTo,
    creator: 'NegotiationInitiator',
    state,
    offer: receivedOffer(offerXml),
    document:
      '<wsag-neg:NegotiationOffer xmlns:wsag-neg="http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation"/>',
  };
}

function setUp(
  options: {
    clusterNodes?: number;
    maxRounds?: number;
    repository?: AgreementRepository;
    negotiationRepository?: NegotiationRepository;
  } = {},
) {
  let now = start;
  let n = 0;
  const clock = { now: () => now };
  const repository = options.repository ?? new MemoryAgreementRepository();
  const negotiationRepository = options.negotiationRepository ?? new MemoryNegotiationRepository();
  const plan = new PlanningService(clusterDescription({ ...defaultConfig, clusterNodes: options.clusterNodes ?? 16 }));
  const ids = { next: () => `id${++n}` };
  const prices = { currency: 'EUR', nodeHour: 2, preparatoryFeeRate: 0.1 };
  const agreements = new AgreementService(repository, plan, clock);
  const negotiations = new NegotiationService({
    negotiations: negotiationRepository,
    agreements: repository,
    templates,
    documents: new XmlNegotiationWriter(),
    plan,
    clock,
    ids,
    settings: {
      holdSeconds: 300,
      maxRounds: options.maxRounds ?? 20,
      maxSeconds: 3600,
      advisorySlots: 3,
      prices,
      providerName: 'test-provider',
    },
  });
  const reservations = new ReservationUse(repository, agreements);
  const factory = new AgreementFactory({
    templates,
    repository,
    documents: new XmlAgreementWriter(),
    plan,
    clock,
    ids,
    providerName: 'test-provider',
    prices,
    negotiations,
    agreements,
    reservations,
  });
  const initiate = (caller: Caller = alice) =>
    negotiations.initiate(
      { type: 'Negotiation', agreementResponder: 'NegotiationResponder', document: contextXml },
      caller,
    );
  return {
    plan,
    factory,
    negotiations,
    agreements,
    reservations,
    repository,
    negotiationRepository,
    initiate,
    advance: (seconds: number) => {
      now = new Date(now.getTime() + seconds * 1000);
    },
  };
}

const contextXml =
  '<wsag-neg:NegotiationContext xmlns:wsag-neg="http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation">' +
  '<wsag-neg:NegotiationType><wsag-neg:Negotiation/></wsag-neg:NegotiationType>' +
  '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>';

describe("NegotiationService: the broker's three phases", () => {
  it('answers an Advisory offer with start slots and prices, and holds nothing', async () => {
    const s = setUp();
    const n = await s.initiate();
    const answers = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice);
    expect(answers.map((a) => a.state)).toEqual(['Advisory', 'Advisory', 'Advisory']);
    expect(answers[0]?.note).toContain('start slot 1 of 3: 8 nodes from 2026-11-21T14:00:00Z to 2026-11-21T16:00:00Z');
    expect(answers[0]?.price).toEqual({ amount: 32, currency: 'EUR' }); // 8 nodes x 2 h x 2 EUR x Legacy 1
    expect(answers.every((a) => a.hold === undefined)).toBe(true);
    expect(s.plan.booked().size).toBe(0);
  });

  it('later slots move the window when the requested one is full', async () => {
    const s = setUp({ clusterNodes: 8 });
    await s.factory.createAgreement(receivedOffer(reservationOffer()), alice); // takes the whole 14:00-16:00 window
    const n = await s.initiate();
    const [first] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice);
    // The nodes are released at 16:00:15 and prepared again in 36 s.
    expect(first?.note).toContain('from 2026-11-21T16:00:51Z to 2026-11-21T18:00:51Z');
    expect(first?.request.window?.start).toEqual(new Date('2026-11-21T16:00:51Z'));
  });

  it('holds capacity for an Acceptable counter-offer until it expires, and turns the hold into the agreement', async () => {
    const s = setUp();
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    expect(answer).toMatchObject({
      state: 'Acceptable',
      creator: 'NegotiationResponder',
      expirationTime: new Date('2026-11-21T12:05:00Z'),
      hold: { state: 'Held', fee: { amount: 3.2, currency: 'EUR' }, allocation: { nodes: 8 } },
    });
    expect([...s.plan.booked().keys()]).toEqual([`hold:${answer?.offerId}`]);

    s.advance(60);
    const agreement = await s.factory.createAgreement(
      receivedOffer(accepting(reservationOffer(), answer?.offerId as string)),
      alice,
    );
    expect(agreement).toMatchObject({
      state: 'Observed',
      origin: { negotiationId: n.id, offerId: answer?.offerId },
      allocation: { nodes: 8 },
    });
    expect([...s.plan.booked().keys()]).toEqual([agreement.id]); // the hold became the booking: capacity used once
    const after = await s.negotiations.get(n.id, alice);
    expect(after.state).toBe('Concluded');
    expect(after.offers.find((o) => o.offerId === answer?.offerId)?.hold).toMatchObject({ state: 'Confirmed' });
  });

  it('reads only the negotiations with a hold due when it looks for holds to expire', async () => {
    const negotiationRepository = new MemoryNegotiationRepository();
    let read = 0;
    const list = negotiationRepository.list.bind(negotiationRepository);
    negotiationRepository.list = async (filter) => {
      const listed = await list(filter);
      read += listed.length;
      return listed;
    };
    const s = setUp({ negotiationRepository });
    const first = await s.initiate();
    await s.negotiations.negotiate(first.id, [incoming(reservationOffer(), 'Solicited')], alice);
    s.advance(200);
    const second = await s.initiate();
    await s.negotiations.negotiate(second.id, [incoming(reservationOffer(), 'Solicited')], alice);
    read = 0;
    expect(await s.negotiations.expireDue()).toBe(0);
    expect(read).toBe(0);
    s.advance(101); // the first hold's 300 s are up, not the second's
    expect(await s.negotiations.expireDue()).toBe(1);
    expect(read).toBe(1);
  });

  it('releases an expired hold, charges the fee, and refuses to accept it', async () => {
    const s = setUp();
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    s.advance(301);
    expect(await s.negotiations.expireDue()).toBe(1);
    expect(s.plan.booked().size).toBe(0);
    const offer = (await s.negotiations.get(n.id, alice)).offers.find((o) => o.offerId === answer?.offerId);
    expect(offer?.hold).toMatchObject({ state: 'Expired', charged: { amount: 3.2, currency: 'EUR' } });
    const accept = s.factory.createAgreement(
      receivedOffer(accepting(reservationOffer(), answer?.offerId as string)),
      alice,
    );
    await expect(accept).rejects.toThrow(OfferExpired);
    await expect(accept).rejects.toThrow(/preparatory fee of 3.20 EUR was charged/);
    // The same capacity can be reserved again.
    const [again] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    expect(again?.state).toBe('Acceptable');
  });

  it('releases a rejected hold pro rata, continues, and refuses counter-offers to the rejected offer', async () => {
    const s = setUp();
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    s.advance(150);
    await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Rejected', answer?.offerId)], alice);
    expect(s.plan.booked().size).toBe(0);
    const offer = (await s.negotiations.get(n.id, alice)).offers.find((o) => o.offerId === answer?.offerId);
    expect(offer?.hold).toMatchObject({ state: 'Released', charged: { amount: 1.6, currency: 'EUR' } });
    await expect(
      s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited', answer?.offerId)], alice),
    ).rejects.toThrow(InvalidStateTransition);
    const [next] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    expect(next?.state).toBe('Acceptable');
  });

  it('answers a Solicited offer it cannot serve with a Rejected counter-offer naming the reason and the earliest slot', async () => {
    const s = setUp({ clusterNodes: 8 });
    await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    expect(answer?.state).toBe('Rejected');
    expect(answer?.note).toMatch(
      /8 nodes are not free from 2026-11-21T14:00:00Z.*earliest feasible start for 8 nodes: 2026-11-21T16:00:51Z/,
    );
  });

  it('gives the last free nodes to exactly one of two racing negotiations', async () => {
    const s = setUp({ clusterNodes: 8 });
    const [a, b] = await Promise.all([s.initiate(), s.initiate(bob)]);
    const answers = await Promise.all([
      s.negotiations.negotiate(a.id, [incoming(reservationOffer(), 'Solicited')], alice),
      s.negotiations.negotiate(b.id, [incoming(reservationOffer(), 'Solicited')], bob),
    ]);
    expect(answers.map(([x]) => x?.state).sort()).toEqual(['Acceptable', 'Rejected']);
  });

  it('terminating releases every hold; the negotiation then refuses offers', async () => {
    const s = setUp();
    const n = await s.initiate();
    await s.negotiations.negotiate(
      n.id,
      [incoming(reservationOffer(), 'Solicited'), incoming(reservationOffer(), 'Solicited')],
      alice,
    );
    expect(s.plan.booked().size).toBe(2);
    expect((await s.negotiations.terminate(n.id, alice)).state).toBe('Terminated');
    expect(s.plan.booked().size).toBe(0);
    await expect(s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice)).rejects.toThrow(
      NegotiationClosed,
    );
  });

  it("closes a negotiation at the site's round limit with TooManyRounds, then NegotiationClosed", async () => {
    const s = setUp({ maxRounds: 2 });
    const n = await s.initiate();
    await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice);
    await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice);
    await expect(s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice)).rejects.toThrow(
      TooManyRounds,
    );
    await expect(s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice)).rejects.toThrow(
      /closed: it used the site's maximum of 2 rounds/,
    );
  });

  it('closes a negotiation past its maximum duration', async () => {
    const s = setUp();
    const n = await s.initiate();
    s.advance(3601);
    await expect(s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice)).rejects.toThrow(
      NegotiationClosed,
    );
  });

  it('lets only the initiator act on a negotiation', async () => {
    const s = setUp();
    const n = await s.initiate();
    await expect(s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], bob)).rejects.toThrow(
      NotAuthorized,
    );
    await expect(s.negotiations.terminate(n.id, bob)).rejects.toThrow(NotAuthorized);
  });

  it('refuses an accepting offer whose terms differ from the Acceptable offer', async () => {
    const s = setUp();
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    const changed = accepting(reservationOffer([{ location: 'NodeCount', value: '4' }]), answer?.offerId as string);
    await expect(s.factory.createAgreement(receivedOffer(changed), alice)).rejects.toThrow(
      /nodeCount: offered 8, sent 4/,
    );
    expect([...s.plan.booked().keys()]).toEqual([`hold:${answer?.offerId}`]);
  });
});

describe('NegotiationService across a restart', () => {
  it('expires holds whose time passed while down (fee charged) and books the others again', async () => {
    const first = setUp();
    const n = await first.initiate();
    const [expiring] = await first.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    first.advance(200);
    const [kept] = await first.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);

    const second = setUp({ repository: first.repository, negotiationRepository: first.negotiationRepository });
    second.advance(400); // the first hold expired at +300, the second lives until +500
    expect(await second.negotiations.restore()).toEqual({ held: 1, expired: 1, confirmed: 0 });
    expect([...second.plan.booked().keys()]).toEqual([`hold:${kept?.offerId}`]);
    const stored = await first.negotiationRepository.get(n.id);
    expect(stored?.offers.find((o) => o.offerId === expiring?.offerId)?.hold).toMatchObject({
      state: 'Expired',
      charged: { amount: 3.2 },
    });
  });

  it('confirms a hold whose agreement was stored just before a crash', async () => {
    const first = setUp();
    const n = await first.initiate();
    const [answer] = await first.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    const lost = first.negotiationRepository.update.bind(first.negotiationRepository);
    first.negotiationRepository.update = async () => {
      throw new Error('crash');
    };
    await expect(
      first.factory.createAgreement(receivedOffer(accepting(reservationOffer(), answer?.offerId as string)), alice),
    ).rejects.toThrow('crash');
    first.negotiationRepository.update = lost;

    const second = setUp({ repository: first.repository, negotiationRepository: first.negotiationRepository });
    expect(await second.agreements.restorePlan()).toBe(1);
    expect(await second.negotiations.restore()).toEqual({ held: 0, expired: 0, confirmed: 1 });
    expect(second.plan.booked().size).toBe(1);
  });
});

describe('renegotiation, pending agreements, reservations, alternatives', () => {
  it('changes an Observed agreement only when the renegotiated offer is accepted', async () => {
    const s = setUp({ clusterNodes: 12 });
    const original = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const n = await s.negotiations.initiate(
      {
        type: 'Renegotiation',
        agreementId: original.id,
        agreementResponder: 'NegotiationResponder',
        document: contextXml,
      },
      alice,
    );
    const bigger = reservationOffer([{ location: 'NodeCount', value: '12' }]);
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(bigger, 'Solicited', original.id)], alice);
    expect(answer?.state).toBe('Acceptable'); // 12 fit because the agreement's own 8 are not counted against it
    expect((await s.repository.get(original.id))?.allocation?.nodes).toBe(8);

    const changed = await s.factory.createAgreement(receivedOffer(accepting(bigger, answer?.offerId as string)), alice);
    expect(changed.id).toBe(original.id);
    expect(changed.allocation?.nodes).toBe(12);
    expect(changed.createdAt).toEqual(original.createdAt);
    expect([...s.plan.booked()]).toEqual([[original.id, changed.allocation]]);
  });

  it("keeps a pending agreement's capacity until an operator decides", async () => {
    const s = setUp();
    const pending = await s.factory.createPendingAgreement(receivedOffer(reservationOffer()), alice);
    expect(pending.state).toBe('Pending');
    expect(s.plan.booked().has(pending.id)).toBe(true);
    await expect(s.agreements.decide(pending.id, 'Accept', alice)).rejects.toThrow(NotAuthorized);
    expect((await s.agreements.decide(pending.id, 'Accept', operator)).state).toBe('Observed');
    const other = await s.factory.createPendingAgreement(receivedOffer(reservationOffer()), alice);
    expect((await s.agreements.decide(other.id, 'Reject', operator)).state).toBe('Rejected');
    expect(s.plan.booked().has(other.id)).toBe(false);
    await expect(s.agreements.decide(other.id, 'Accept', operator)).rejects.toThrow(InvalidStateTransition);
  });

  it('accepts a use of a reservation once, inside its window only', async () => {
    const s = setUp();
    const reservation = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const job = offerFromTemplate(rendered('deadline-job-v1')).replace(
      '</sla:ServiceLevel>',
      `<sla:UseReservation>${reservation.id}</sla:UseReservation></sla:ServiceLevel>`,
    );
    await expect(s.factory.createAgreement(receivedOffer(job), alice)).rejects.toThrow(/only inside its window/);
    s.advance(2 * 3600 + 60); // inside 14:00-16:00
    await expect(s.factory.createAgreement(receivedOffer(job), bob)).rejects.toThrow(NotAuthorized);
    const used = await s.factory.createAgreement(receivedOffer(job), alice);
    expect(used.allocation).toMatchObject({ nodes: 4, end: reservation.allocation?.promised?.end });
    expect(s.plan.booked().size).toBe(1); // the job runs on the reservation's capacity
    expect((await s.repository.get(reservation.id))?.usedBy).toBe(used.id);
    await expect(s.factory.createAgreement(receivedOffer(job), alice)).rejects.toThrow(
      /already been used by agreement/,
    );
  });

  it('picks the first alternative it can serve and says which', async () => {
    const s = setUp({ clusterNodes: 8 });
    await s.factory.createAgreement(receivedOffer(reservationOffer([{ location: 'NodeCount', value: '6' }])), alice);
    // Either alternative promises the 2 nodes the smaller one books.
    const offer = reservationOffer([{ location: '//sla:NodesAvailable', value: '2' }]).replace(
      /(<wsag:ServiceDescriptionTerm wsag:Name="Nodes"[\s\S]*?<\/wsag:ServiceDescriptionTerm>)/,
      (sdt) =>
        `<wsag:ExactlyOne>${sdt}${sdt.replace('wsag:Name="Nodes"', 'wsag:Name="FewerNodes"').replace('<jsdl:Exact>8<', '<jsdl:Exact>2<')}</wsag:ExactlyOne>`,
    );
    const agreement = await s.factory.createAgreement(receivedOffer(offer), alice);
    expect(agreement.alternative).toEqual({ index: 2, count: 2, terms: ['FewerNodes', 'Window'] });
    expect(agreement.allocation?.nodes).toBe(2);
    await expect(s.factory.createAgreement(receivedOffer(offer), alice)).rejects.toThrow(CannotSatisfy);
  });

  it("refuses a Renegotiation of an agreement that is not Observed, or someone else's", async () => {
    const s = setUp();
    const a = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const request = {
      type: 'Renegotiation' as const,
      agreementId: a.id,
      agreementResponder: 'NegotiationResponder' as const,
      document: contextXml,
    };
    await expect(s.negotiations.initiate(request, bob)).rejects.toThrow(NotAuthorized);
    await s.agreements.terminate(a.id, alice);
    await expect(s.negotiations.initiate(request, alice)).rejects.toThrow(InvalidStateTransition);
    await expect(
      s.negotiations.initiate({ ...request, type: 'Negotiation', agreementResponder: 'NegotiationInitiator' }, alice),
    ).rejects.toThrow(InvalidTerms);
  });
});

describe('concluding a negotiation', () => {
  /** An agreement repository whose inserts are readable at once but durable only when the test says so. */
  function syncedByHand() {
    const inner = new MemoryAgreementRepository();
    const syncs: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
    const repository: AgreementRepository = Object.assign(Object.create(inner) as MemoryAgreementRepository, {
      insert: async (
        agreement: Parameters<AgreementRepository['insert']>[0],
        audit?: Parameters<AgreementRepository['insert']>[1],
        committed?: () => void,
      ) => {
        await inner.insert(agreement, audit, committed);
        await new Promise<void>((resolve, reject) => syncs.push({ resolve, reject }));
      },
    });
    return { repository, syncs };
  }

  it("stores the negotiation without waiting for the agreement's sync, and answers only once the agreement is durable", async () => {
    const { repository, syncs } = syncedByHand();
    const s = setUp({ repository });
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    let answered = false;
    const accept = s.factory
      .createAgreement(receivedOffer(accepting(reservationOffer(), answer?.offerId as string)), alice)
      .then((a) => {
        answered = true;
        return a;
      });
    // The negotiation is stored concluded while the agreement's sync is still to come.
    await expect.poll(async () => (await s.negotiationRepository.get(n.id))?.state).toBe('Concluded');
    expect(syncs).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    syncs[0]?.resolve();
    const agreement = await accept;
    expect((await s.negotiationRepository.get(n.id))?.agreementCreated).toBe(agreement.id);
  });

  it("answers the fault when the agreement's sync fails after the negotiation was stored", async () => {
    const { repository, syncs } = syncedByHand();
    const s = setUp({ repository });
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    const accept = s.factory.createAgreement(
      receivedOffer(accepting(reservationOffer(), answer?.offerId as string)),
      alice,
    );
    await expect.poll(async () => (await s.negotiationRepository.get(n.id))?.state).toBe('Concluded');
    syncs[0]?.reject(new Error('the log could not be synced'));
    await expect(accept).rejects.toThrow('the log could not be synced');
  });

  it('releases the other holds of the negotiation when one offer becomes the agreement', async () => {
    const s = setUp();
    const n = await s.initiate();
    const later = reservationOffer([
      { location: '//arp:StartTime', value: '2026-11-21T18:00:00Z' },
      { location: '//arp:EndTime', value: '2026-11-21T20:00:00Z' },
    ]);
    const answers = await s.negotiations.negotiate(
      n.id,
      [incoming(reservationOffer(), 'Solicited'), incoming(later, 'Solicited')],
      alice,
    );
    expect(s.plan.booked().size).toBe(2);
    s.advance(60);
    const agreement = await s.factory.createAgreement(
      receivedOffer(accepting(reservationOffer(), answers[0]?.offerId as string)),
      alice,
    );
    expect([...s.plan.booked().keys()]).toEqual([agreement.id]);
    const other = (await s.negotiations.get(n.id, alice)).offers.find((o) => o.offerId === answers[1]?.offerId);
    expect(other?.hold).toMatchObject({ state: 'Released', charged: { amount: 0.64 } }); // 60 of 300 s of a 3.20 EUR fee
  });
});
