import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/domain/identity.js';
import type { OfferState } from '../../src/domain/negotiation.js';
import { AgreementFactory } from '../../src/engine/agreements/agreement-factory.js';
import { AgreementService } from '../../src/engine/agreements/agreement-service.js';
import { auditEntryHash } from '../../src/engine/audit/audit-chain.js';
import { AuditService } from '../../src/engine/audit/audit-service.js';
import { defaultConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { NegotiationService } from '../../src/engine/negotiation/negotiation-service.js';
import { persistPlanChanges } from '../../src/engine/planning/plan-persistence.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import type { AuditEntry, AuditLog, NegotiationRequest, ReceivedNegotiationOffer } from '../../src/engine/ports.js';
import { ReservationUse } from '../../src/engine/agreements/reservation-use.js';
import { MemoryAgreementRepository, MemoryAuditLog, MemoryNegotiationRepository } from '../../src/store/index.js';
import { XmlAgreementWriter } from '../../src/xml/agreement-writer.js';
import { XmlNegotiationWriter } from '../../src/xml/negotiation-writer.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { TemplateLibrary } from '../../src/xml/template-library.js';
import { makeAgreement } from '../store/fixtures/make-agreement.js';
import { receivedOffer } from '../support/offers.js';
import { projectRoot } from '../support/server.js';

const start = new Date('2026-11-21T12:00:00Z');
const templates = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));
const rendered = (id: string) => templates.render(start).find((t) => t.includes(`TemplateId="${id}"`)) as string;
const reservationOffer = (settings: OfferSetting[] = []) =>
  offerFromTemplate(rendered('advance-reservation-v1'), settings);
const alice: Caller = { identity: 'CN=alice', isAdmin: false };
const operator: Caller = { identity: 'CN=ops', isAdmin: true };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const contextXml =
  '<wsag-neg:NegotiationContext xmlns:wsag-neg="http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation">' +
  '<wsag-neg:NegotiationType><wsag-neg:Negotiation/></wsag-neg:NegotiationType>' +
  '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>';

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
): ReceivedNegotiationOffer {
  return {
    counterOfferTo,
    creator: 'NegotiationInitiator',
    state,
    offer: receivedOffer(offerXml),
    document:
      '<wsag-neg:NegotiationOffer xmlns:wsag-neg="http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation"/>',
  };
}

/** The real services over memory repositories that share one audit log. */
function setUp(options: { maxRounds?: number } = {}) {
  let now = start;
  let n = 0;
  const clock = { now: () => now };
  const audit = new MemoryAuditLog();
  const repository = new MemoryAgreementRepository(audit);
  const negotiationRepository = new MemoryNegotiationRepository(audit);
  const plan = new PlanningService(clusterDescription({ ...defaultConfig, clusterNodes: 16 }));
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
  persistPlanChanges(plan, agreements, negotiations);
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
  const service = new AuditService({ audit, agreements: repository });
  const initiate = (request: Partial<NegotiationRequest> = {}) =>
    negotiations.initiate(
      { type: 'Negotiation', agreementResponder: 'NegotiationResponder', document: contextXml, ...request },
      alice,
    );
  const actions = async (kind: 'agreement' | 'negotiation', id: string) =>
    (await audit.entries({ subject: { kind, id } })).map((e) => `${e.actor} ${e.action}`);
  return {
    audit,
    service,
    plan,
    factory,
    agreements,
    negotiations,
    repository,
    negotiationRepository,
    initiate,
    actions,
    advance: (seconds: number) => {
      now = new Date(now.getTime() + seconds * 1000);
    },
  };
}

describe('AuditService: every state change is recorded', () => {
  it("records an agreement's creation and termination with the caller, the states and the document digest", async () => {
    const s = setUp();
    const created = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    s.advance(60);
    const terminated = await s.agreements.terminate(created.id, alice);
    const history = await s.service.history(created.id);
    expect(history.map((e) => [e.actor, e.action])).toEqual([
      ['CN=alice', 'created'],
      ['CN=alice', 'terminated'],
    ]);
    expect(history[0]).toMatchObject({
      at: start,
      subject: { kind: 'agreement', id: created.id },
      details: {
        state: 'Observed',
        templateId: 'advance-reservation-v1',
        documentSha256: sha256(created.document),
        allocation: { nodes: 8 },
      },
    });
    expect(history[0]?.details.previousState).toBeUndefined();
    expect(history[1]).toMatchObject({
      at: new Date(start.getTime() + 60_000),
      details: { state: 'Terminated', previousState: 'Observed', documentSha256: sha256(terminated.document) },
    });
    expect(await s.service.verify()).toEqual({
      chain: { entries: 2, head: history[1]?.hash },
      agreements: 1,
      problems: [],
      unsigned: 0,
      signaturesChecked: false,
    });
  });

  it("records the operator's decisions on pending agreements", async () => {
    const s = setUp();
    const accepted = await s.factory.createPendingAgreement(receivedOffer(reservationOffer()), alice);
    const rejected = await s.factory.createPendingAgreement(receivedOffer(reservationOffer()), alice);
    await s.agreements.decide(accepted.id, 'Accept', operator);
    await s.agreements.decide(rejected.id, 'Reject', operator);
    expect(await s.actions('agreement', accepted.id)).toEqual(['CN=alice created', 'CN=ops accepted']);
    expect(await s.actions('agreement', rejected.id)).toEqual(['CN=alice created', 'CN=ops rejected']);
    expect((await s.service.history(rejected.id)).map((e) => [e.details.previousState, e.details.state])).toEqual([
      [undefined, 'Pending'],
      ['Pending', 'Rejected'],
    ]);
  });

  it("records a reservation's use on the reservation, and the job that used it", async () => {
    const s = setUp();
    const reservation = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const job = offerFromTemplate(rendered('deadline-job-v1')).replace(
      '</sla:ServiceLevel>',
      `<sla:UseReservation>${reservation.id}</sla:UseReservation></sla:ServiceLevel>`,
    );
    s.advance(2 * 3600 + 60);
    const used = await s.factory.createAgreement(receivedOffer(job), alice);
    expect(await s.actions('agreement', reservation.id)).toEqual(['CN=alice created', 'CN=alice reservation-used']);
    expect((await s.service.history(reservation.id))[1]?.details).toMatchObject({ usedBy: used.id, state: 'Observed' });
    expect((await s.service.history(used.id))[0]?.details).toMatchObject({ useReservation: reservation.id });
  });

  it('records a negotiation: offers, the hold placed and confirmed, the agreement it became', async () => {
    const s = setUp();
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    const offerId = answer?.offerId as string;
    const agreement = await s.factory.createAgreement(receivedOffer(accepting(reservationOffer(), offerId)), alice);
    expect(await s.actions('negotiation', n.id)).toEqual([
      'CN=alice created',
      'CN=alice offers-received',
      'CN=alice offers-answered',
      'CN=alice hold-placed',
      'CN=alice hold-confirmed',
      'CN=alice concluded',
    ]);
    const entries = await s.service.negotiationHistory(n.id);
    expect(entries.find((e) => e.action === 'offers-answered')?.details).toEqual({
      round: 1,
      offers: [{ offerId, state: 'Acceptable', counterOfferTo: answer?.counterOfferTo }],
    });
    expect(entries.find((e) => e.action === 'hold-placed')?.details).toMatchObject({
      offerId,
      holdState: 'Held',
      fee: { amount: 3.2, currency: 'EUR' },
    });
    expect(entries.find((e) => e.action === 'concluded')?.details).toEqual({
      state: 'Concluded',
      previousState: 'Open',
      agreementId: agreement.id,
    });
    expect((await s.service.history(agreement.id))[0]?.details).toMatchObject({ negotiationId: n.id, offerId });
  });

  it("records a hold that expires as the system's doing, with the fee charged", async () => {
    const s = setUp();
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    s.advance(301);
    expect(await s.negotiations.expireDue()).toBe(1);
    const expired = (await s.service.negotiationHistory(n.id)).at(-1);
    expect(expired).toMatchObject({
      actor: 'system',
      action: 'hold-expired',
      details: { offerId: answer?.offerId, holdState: 'Expired', charged: { amount: 3.2, currency: 'EUR' } },
    });
  });

  it('records a terminated negotiation and the hold it released', async () => {
    const s = setUp();
    const n = await s.initiate();
    await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    s.advance(30);
    await s.negotiations.terminate(n.id, alice);
    expect((await s.actions('negotiation', n.id)).slice(-2)).toEqual(['CN=alice hold-released', 'CN=alice terminated']);
  });

  it("records a negotiation closed by the site's round limit", async () => {
    const s = setUp({ maxRounds: 1 });
    const n = await s.initiate();
    await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice);
    await expect(s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Advisory')], alice)).rejects.toThrow();
    const closed = (await s.service.negotiationHistory(n.id)).at(-1);
    expect(closed).toMatchObject({ action: 'closed', details: { state: 'Closed', previousState: 'Open' } });
    expect(closed?.details.closedBecause).toContain('maximum of 1 rounds');
  });

  it('records a renegotiation on the agreement it changes', async () => {
    const s = setUp();
    const original = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const n = await s.initiate({ type: 'Renegotiation', agreementId: original.id });
    const bigger = reservationOffer([{ location: 'NodeCount', value: '12' }]);
    const [answer] = await s.negotiations.negotiate(n.id, [incoming(bigger, 'Solicited', original.id)], alice);
    const changed = await s.factory.createAgreement(receivedOffer(accepting(bigger, answer?.offerId as string)), alice);
    const history = await s.service.history(original.id);
    expect(history.map((e) => e.action)).toEqual(['created', 'renegotiated']);
    expect(history[1]?.details).toMatchObject({
      negotiationId: n.id,
      allocation: { nodes: 12 },
      documentSha256: sha256(changed.document),
    });
    expect((await s.service.verify()).problems).toEqual([]);
  });

  it("records what the scheduler moves, agreements and holds, as the system's doing", async () => {
    const s = setUp();
    const reservation = await s.factory.createAgreement(
      receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
      alice,
    );
    const n = await s.initiate();
    const [answer] = await s.negotiations.negotiate(
      n.id,
      [incoming(reservationOffer([{ location: 'NodeCount', value: '4' }]), 'Solicited')],
      alice,
    );
    const failing = reservation.allocation?.segments?.[0]?.nodeIds[0] as string;
    const heldFailing = answer?.hold?.allocation.segments?.[0]?.nodeIds[0] as string;
    s.plan.nodeFailed(failing, start);
    s.plan.nodeFailed(heldFailing, start);
    await s.plan.settle();
    const moved = (await s.service.history(reservation.id)).at(-1);
    expect(moved).toMatchObject({ actor: 'system', action: 'plan-moved', details: { state: 'Observed' } });
    expect((moved?.details.from as { nodeIds: string[] }).nodeIds).toContain(failing);
    expect((moved?.details.to as { nodeIds: string[] }).nodeIds).not.toContain(failing);
    const heldMoved = (await s.service.negotiationHistory(n.id)).at(-1);
    expect(heldMoved).toMatchObject({ actor: 'system', action: 'plan-moved', details: { offerId: answer?.offerId } });
    expect((heldMoved?.details.to as { nodeIds: string[] }).nodeIds).not.toContain(heldFailing);
  });

  it('records holds found expired at start-up', async () => {
    const s = setUp();
    const n = await s.initiate();
    await s.negotiations.negotiate(n.id, [incoming(reservationOffer(), 'Solicited')], alice);
    s.advance(600);
    expect(await s.negotiations.restore()).toMatchObject({ expired: 1 });
    expect((await s.actions('negotiation', n.id)).at(-1)).toBe('system hold-expired');
  });
});

/** An audit log that serves given entries, as a tampered store would. */
function servedLog(entries: AuditEntry[]): AuditLog {
  return {
    append: () => Promise.reject(new Error('read-only')),
    entries: async (filter = {}) =>
      entries.filter((e) => e.seq > (filter.after ?? 0)).slice(0, filter.limit ?? Infinity),
    latest: async (subject) =>
      entries.filter((e) => e.subject.kind === subject.kind && e.subject.id === subject.id).at(-1),
  };
}

/** A few agreements and their changes: six entries. */
async function sixEntries() {
  const s = setUp();
  const a = await s.factory.createAgreement(
    receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
    alice,
  );
  const b = await s.factory.createAgreement(
    receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
    alice,
  );
  await s.agreements.terminate(a.id, alice);
  const c = await s.factory.createPendingAgreement(
    receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
    alice,
  );
  await s.agreements.decide(c.id, 'Accept', operator);
  await s.agreements.terminate(b.id, alice);
  const entries = await s.audit.entries();
  expect(entries).toHaveLength(6);
  const verifyServed = (served: AuditEntry[]) =>
    new AuditService({ audit: servedLog(served), agreements: s.repository }).verifyChain();
  return { s, entries, verifyServed };
}

describe('AuditService: verifyChain finds tampering', () => {
  it('finds nothing wrong with the chain as written', async () => {
    const { entries, verifyServed } = await sixEntries();
    expect(await verifyServed(entries)).toEqual({ entries: 6, head: entries[5]?.hash });
    expect(
      await new AuditService({ audit: servedLog([]), agreements: new MemoryAgreementRepository() }).verifyChain(),
    ).toEqual({ entries: 0 });
  });

  it('reports a changed field as a hash mismatch in that row', async () => {
    const { entries, verifyServed } = await sixEntries();
    for (const tamper of [
      (e: AuditEntry) => {
        e.actor = 'mallory';
      },
      (e: AuditEntry) => {
        e.details = { ...e.details, state: 'Observed' };
      },
      (e: AuditEntry) => {
        e.at = new Date(e.at.getTime() + 1);
      },
      (e: AuditEntry) => {
        e.subject = { ...e.subject, id: 'other' };
      },
    ]) {
      const served = structuredClone(entries);
      tamper(served[2] as AuditEntry);
      expect(await verifyServed(served)).toEqual({
        entries: 6,
        firstBroken: { seq: 3, reason: 'hash mismatch in row 3: its content changed after it was written' },
      });
    }
  });

  it('reports a row rewritten with a fresh hash where the next row no longer links to it', async () => {
    const { entries, verifyServed } = await sixEntries();
    const served = structuredClone(entries);
    const row = served[2] as AuditEntry;
    row.actor = 'mallory';
    row.hash = auditEntryHash(row);
    expect((await verifyServed(served)).firstBroken).toEqual({
      seq: 4,
      reason: 'prevHash of row 4 does not match the hash of row 3',
    });
  });

  it('reports a deleted row as a seq gap', async () => {
    const { entries, verifyServed } = await sixEntries();
    const served = entries.filter((e) => e.seq !== 3);
    expect(await verifyServed(served)).toEqual({
      entries: 5,
      firstBroken: { seq: 3, reason: 'seq gap: row 3 is missing (the next row is 4)' },
    });
    expect((await verifyServed(entries.slice(1))).firstBroken).toEqual({
      seq: 1,
      reason: 'seq gap: row 1 is missing (the next row is 2)',
    });
  });

  it('reports reordered rows', async () => {
    const { entries, verifyServed } = await sixEntries();
    // Rows 2 and 3 swap places, each keeping its seq: they come back out of order.
    const swapped = [entries[0], entries[2], entries[1], ...entries.slice(3)] as AuditEntry[];
    expect((await verifyServed(swapped)).firstBroken).toEqual({
      seq: 2,
      reason: 'seq gap: row 2 is missing (the next row is 3)',
    });
    // Rows 2 and 3 swap contents and are renumbered to fit: row 2 no longer links to row 1.
    const renumbered = structuredClone(swapped).map((e, i) => ({ ...e, seq: i + 1 }));
    expect((await verifyServed(renumbered)).firstBroken).toEqual({
      seq: 2,
      reason: 'prevHash of row 2 does not match the hash of row 1',
    });
    // A row moved back: its seq comes after a larger one.
    const back = [entries[0], entries[1], entries[2], entries[3], entries[2], ...entries.slice(4)] as AuditEntry[];
    expect((await verifyServed(back)).firstBroken).toEqual({
      seq: 5,
      reason: 'rows out of order: row 3 comes where row 5 should',
    });
  });

  it('reports a first row whose prevHash is not 64 zeros', async () => {
    const { entries, verifyServed } = await sixEntries();
    const served = structuredClone(entries);
    (served[0] as AuditEntry).prevHash = 'f'.repeat(64);
    expect((await verifyServed(served)).firstBroken).toEqual({
      seq: 1,
      reason: 'prevHash of row 1 is not 64 zeros: rows before it were removed',
    });
  });
});

describe('AuditService: stored agreements against their audit entries', () => {
  it('reports an agreement changed without an audit entry: document, or state', async () => {
    const s = setUp();
    const a = await s.factory.createAgreement(
      receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
      alice,
    );
    const b = await s.factory.createAgreement(
      receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
      alice,
    );
    await s.repository.update({ ...a, document: a.document.replace('advance-reservation', 'forged') });
    await s.repository.update({ ...b, state: 'Terminated' });
    const report = await s.service.verify();
    expect(report.chain.firstBroken).toBeUndefined();
    expect(report.problems).toEqual([
      {
        agreementId: a.id,
        problem:
          'its document does not match the documentSha256 of its last audit entry (row 1): it was changed outside the server',
      },
      {
        agreementId: b.id,
        problem: 'its state Terminated differs from the state Observed of its last audit entry (row 2)',
      },
    ]);
  });

  it('reports an agreement with no audit entry, and adopts such agreements at start-up', async () => {
    const s = setUp();
    const unaudited = await s.factory.createAgreement(receivedOffer(reservationOffer()), alice);
    const legacy = new MemoryAgreementRepository();
    await legacy.insert(unaudited); // stored without notes, as before the audit trail
    const service = new AuditService({ audit: new MemoryAuditLog(), agreements: legacy });
    expect((await service.checkAgreements()).problems).toEqual([
      { agreementId: unaudited.id, problem: 'no audit entry records it' },
    ]);
    expect(await service.recordUnaudited(start)).toBe(1);
    expect(await service.recordUnaudited(start)).toBe(0);
    expect(await service.history(unaudited.id)).toMatchObject([
      { actor: 'system', action: 'adopted', details: { documentSha256: sha256(unaudited.document) } },
    ]);
    expect((await service.verify()).problems).toEqual([]);
  });

  it('reports what the injected signature check finds', async () => {
    const s = setUp();
    const a = await s.factory.createAgreement(
      receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
      alice,
    );
    const b = await s.factory.createAgreement(
      receivedOffer(reservationOffer([{ location: 'NodeCount', value: '4' }])),
      alice,
    );
    const checked: string[] = [];
    const service = new AuditService({
      audit: s.audit,
      agreements: s.repository,
      checkSignatures: (agreement) => {
        checked.push(agreement.id);
        return agreement.id === b.id ? "the provider's signature does not verify" : undefined;
      },
    });
    const report = await service.verify();
    expect(checked).toEqual([a.id, b.id]);
    expect(report).toMatchObject({
      signaturesChecked: true,
      problems: [{ agreementId: b.id, problem: "signature: the provider's signature does not verify" }],
    });
  });
});

describe('AuditService.checkAgreements with many agreements', () => {
  it('checks every agreement, reading them a page at a time', async () => {
    const audit = new MemoryAuditLog();
    const agreements = new MemoryAgreementRepository(audit);
    for (let i = 0; i < 2100; i++) {
      await agreements.insert(makeAgreement({ id: `agr-${String(i).padStart(4, '0')}`, createdAt: new Date(i) }), [
        { at: new Date(i), actor: 'tester', action: 'created', details: {} },
      ]);
    }
    const limits: Array<number | undefined> = [];
    const list = agreements.list.bind(agreements);
    agreements.list = async (filter = {}) => {
      limits.push(filter.limit);
      return list(filter);
    };
    const { agreements: checked, problems } = await new AuditService({ audit, agreements }).checkAgreements();
    expect(checked).toBe(2100);
    // The entries record no digest or state: each agreement's check finds both differ.
    expect(new Set(problems.map((p) => p.agreementId)).size).toBe(2100);
    expect(limits).toEqual([2000, 2000]);
  });
});
