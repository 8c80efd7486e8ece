import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/domain/identity.js';
import { AgreementFactory } from '../../src/engine/agreements/agreement-factory.js';
import { AgreementService } from '../../src/engine/agreements/agreement-service.js';
import { liveAgreementPages } from '../../src/engine/agreements/live-pages.js';
import { defaultConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { NegotiationService } from '../../src/engine/negotiation/negotiation-service.js';
import { persistPlanChanges } from '../../src/engine/planning/plan-persistence.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import type { Agreement } from '../../src/domain/agreement.js';
import type { AgreementRepository, AuditNote, NegotiationRepository, ReceivedOffer } from '../../src/engine/ports.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { XmlAgreementWriter } from '../../src/xml/agreement-writer.js';
import { XmlNegotiationWriter } from '../../src/xml/negotiation-writer.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { TemplateLibrary } from '../../src/xml/template-library.js';
import { receivedOffer } from '../support/offers.js';
import { projectRoot } from '../support/server.js';

/**
 * The engine over the planning scheduler: allocations carry the plan (nodes, checkpoints),
 * a restart restores it exactly (or places rows without a plan at their times), and
 * bookings the scheduler moves are stored again.
 */
const start = new Date('2026-11-21T12:00:00Z');
const alice: Caller = { identity: 'CN=alice', isAdmin: false };

// The shipped templates, plus a batch job without a deadline or a completion promise (a best-effort job).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-templates-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
for (const file of fs.readdirSync(path.join(projectRoot, 'templates')))
  fs.copyFileSync(path.join(projectRoot, 'templates', file), path.join(dir, file));
fs.writeFileSync(
  path.join(dir, 'batch-job.xml'),
  fs
    .readFileSync(path.join(projectRoot, 'templates/deadline-job.xml'), 'utf8')
    .replaceAll('deadline-job-v1', 'batch-job-v1')
    .replaceAll('<wsag:Name>deadline-job</wsag:Name>', '<wsag:Name>batch-job</wsag:Name>')
    .replaceAll(
      '<wsag:TemplateName>deadline-job</wsag:TemplateName>',
      '<wsag:TemplateName>batch-job</wsag:TemplateName>',
    )
    .replace(/<wsag:Constraint>count\(\/\/sla:ServiceLevel\/sla:Deadline\)[^<]*<\/wsag:Constraint>/, '')
    .replace(/<wsag:GuaranteeTerm [\s\S]*<\/wsag:GuaranteeTerm>/, ''),
);
const templates = TemplateLibrary.fromDirectory(dir);
const rendered = (id: string) => templates.render(start).find((t) => t.includes(`TemplateId="${id}"`)) as string;
const offer = (id: string, settings: OfferSetting[] = []) => receivedOffer(offerFromTemplate(rendered(id), settings));
/** A batch job (no deadline: best effort) of `nodes` nodes for an hour, starting no earlier than `earliest`. */
const batch = (nodes: number, earliest: string) => {
  const xml = offerFromTemplate(rendered('batch-job-v1'), [{ location: 'NodeCount', value: String(nodes) }]).replace(
    /<sla:Deadline>[^<]*<\/sla:Deadline>/,
    `<sla:EarliestStart>${earliest}</sla:EarliestStart>`,
  );
  return receivedOffer(xml);
};

function setUp(
  options: {
    clusterNodes?: number;
    repository?: AgreementRepository;
    negotiationRepository?: NegotiationRepository;
  } = {},
) {
  let now = start;
  let n = 0;
  const clock = { now: () => now };
  const repository = options.repository ?? new MemoryAgreementRepository();
  const negotiationRepository = options.negotiationRepository ?? new MemoryNegotiationRepository();
  const prices = { currency: 'EUR', nodeHour: 1, preparatoryFeeRate: 0.05 };
  const plan = new PlanningService(
    clusterDescription({ ...defaultConfig, clusterNodes: options.clusterNodes ?? 8 }),
    prices,
  );
  const ids = { next: () => `id${++n}` };
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
      maxRounds: 20,
      maxSeconds: 3600,
      advisorySlots: 3,
      prices,
      providerName: 'test-provider',
    },
  });
  persistPlanChanges(plan, agreements, negotiations);
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
  });
  return {
    plan,
    factory,
    agreements,
    negotiations,
    repository,
    negotiationRepository,
    advance: (s: number) => {
      now = new Date(now.getTime() + s * 1000);
    },
  };
}

describe('admission through the planning scheduler', () => {
  it('books a reservation on concrete nodes for its window with their preparation and release; a Legacy reservation has no checkpoints', async () => {
    const s = setUp();
    const agreement = await s.factory.createAgreement(offer('advance-reservation-v1'), alice);
    // t_initnew 35 s and t_handover 1 s before the window, t_deinit 15 s after it.
    expect(agreement.allocation).toMatchObject({
      start: new Date('2026-11-21T13:59:24Z'),
      end: new Date('2026-11-21T16:00:15Z'),
      nodes: 8,
      promised: { start: new Date('2026-11-21T14:00:00Z'), end: new Date('2026-11-21T16:00:00Z') },
      segments: [
        {
          start: new Date('2026-11-21T13:59:24Z'),
          end: new Date('2026-11-21T16:00:15Z'),
          nodeIds: ['n001', 'n002', 'n003', 'n004', 'n005', 'n006', 'n007', 'n008'],
          spareNodeIds: [],
        },
      ],
      checkpoints: { count: 0 },
      arrival: start,
    });
  });

  it('plans a Standard deadline job with initialisation, slowdown and the checkpoints its deadline needs, and prices what it books', async () => {
    const s = setUp();
    const agreement = await s.factory.createAgreement(offer('deadline-job-v1'), alice);
    const allocation = agreement.allocation;
    expect(allocation?.start).toEqual(start);
    expect(allocation?.nodes).toBe(4);
    expect(allocation?.segments?.[0]?.nodeIds).toHaveLength(4);
    // Checkpoints by need: the template's deadline leaves room for a restart from the start, so none.
    expect(allocation?.checkpoints?.count).toBe(0);
    expect(allocation?.checkpoints?.worstCaseSeconds).toBeGreaterThan(2 * 3600);
    // Longer than the hour of computation: initialisation, 1 % slowdown, deinitialisation.
    const seconds = ((allocation?.end.getTime() ?? 0) - start.getTime()) / 1000;
    expect(seconds).toBeGreaterThan(3600 * 1.01);
    expect(agreement.price?.amount).toBeCloseTo(((4 * seconds) / 3600) * 1.25, 2);
  });

  it('stores the new allocation of a best-effort job that an SLA job moves', async () => {
    const s = setUp({ clusterNodes: 4 });
    const waiting = await s.factory.createAgreement(batch(4, '2026-11-21T14:00:00Z'), alice);
    expect(waiting.allocation?.start).toEqual(new Date('2026-11-21T14:00:00Z'));
    const reservation = await s.factory.createAgreement(
      offer('advance-reservation-v1', [{ location: 'NodeCount', value: '4' }]),
      alice,
    );
    expect(reservation.allocation?.start).toEqual(new Date('2026-11-21T13:59:24Z')); // its nodes prepared from 36 s before the window
    const moved = await s.repository.get(waiting.id);
    expect(moved?.allocation?.start).toEqual(new Date('2026-11-21T16:00:15Z')); // after the reservation and its release, first come first served
    expect(moved?.allocation).toEqual(s.plan.allocationOf(waiting.id));
    expect(s.plan.pendingChanges()).toEqual([]);
  });

  it('stores the new allocation of a held best-effort job that an SLA job moves, in its negotiation', async () => {
    const s = setUp({ clusterNodes: 4 });
    const negotiation = await s.negotiations.initiate(
      { type: 'Negotiation', agreementResponder: 'NegotiationResponder', document: contextXml },
      alice,
    );
    const [held] = await s.negotiations.negotiate(
      negotiation.id,
      [
        {
          counterOfferTo: 'batch-job-v1',
          creator: 'NegotiationInitiator',
          state: 'Solicited',
          offer: batch(4, '2026-11-21T14:00:00Z'),
          document: '<x/>',
        },
      ],
      alice,
    );
    expect(held?.hold?.allocation.start).toEqual(new Date('2026-11-21T14:00:00Z'));
    await s.factory.createAgreement(offer('advance-reservation-v1', [{ location: 'NodeCount', value: '4' }]), alice);
    const stored = (await s.negotiationRepository.get(negotiation.id))?.offers.find(
      (o) => o.offerId === held?.offerId,
    )?.hold;
    expect(stored).toMatchObject({ state: 'Held', allocation: { start: new Date('2026-11-21T16:00:15Z'), nodes: 4 } });
    expect(stored?.allocation).toEqual(s.plan.allocationOf(`hold:${held?.offerId}`));
  });
});

describe('a restart restores the plan', () => {
  it('exactly: the same nodes, pieces and checkpoint plans', async () => {
    const first = setUp();
    await first.factory.createAgreement(
      offer('advance-reservation-v1', [{ location: 'NodeCount', value: '4' }]),
      alice,
    );
    await first.factory.createAgreement(offer('deadline-job-v1'), alice);
    await first.factory.createAgreement(
      offer('deadline-job-v1', [{ location: 'GuaranteeLevel', value: 'Enhanced' }]),
      alice,
    );
    const before = [...first.plan.booked()];
    expect(before).toHaveLength(3);

    const second = setUp({ repository: first.repository });
    expect(await second.agreements.restorePlan()).toBe(3);
    expect([...second.plan.booked()]).toEqual(before);
    expect(second.plan.pendingChanges()).toEqual([]);
  });

  it('allocations stored before the planning scheduler are placed at their times, and stored with their plan', async () => {
    const first = setUp();
    const a = await first.factory.createAgreement(
      offer('advance-reservation-v1', [{ location: 'NodeCount', value: '4' }]),
      alice,
    );
    const b = await first.factory.createAgreement(offer('deadline-job-v1'), alice);
    for (const agreement of [a, b]) {
      const { start: from, end: to, nodes } = agreement.allocation as NonNullable<typeof agreement.allocation>;
      await first.repository.update({ ...agreement, allocation: { start: from, end: to, nodes } });
    }
    const second = setUp({ repository: first.repository });
    expect(await second.agreements.restorePlan()).toBe(2);
    expect(second.plan.pendingChanges().sort()).toEqual([a.id, b.id].sort());
    await second.plan.settle();
    for (const agreement of [a, b]) {
      const stored = await second.repository.get(agreement.id);
      expect(stored?.allocation).toMatchObject({
        start: agreement.allocation?.start,
        end: agreement.allocation?.end,
        nodes: agreement.allocation?.nodes,
      });
      expect(stored?.allocation?.segments?.[0]?.nodeIds).toHaveLength(agreement.allocation?.nodes as number);
      expect(stored?.allocation).toEqual(second.plan.allocationOf(agreement.id));
    }
  });

  it('a stored plan whose nodes are gone (a smaller cluster) is placed at the same times on the nodes there are', async () => {
    const first = setUp({ clusterNodes: 16 });
    await first.factory.createAgreement(
      offer('advance-reservation-v1', [{ location: 'NodeCount', value: '8' }]),
      alice,
    );
    const late = await first.factory.createAgreement(
      offer('advance-reservation-v1', [{ location: 'NodeCount', value: '8' }]),
      alice,
    );
    expect(late.allocation?.segments?.[0]?.nodeIds).toContain('n016');
    await first.agreements.terminate((await first.repository.list())[0]?.id as string, alice);

    const second = setUp({ clusterNodes: 8, repository: first.repository });
    expect(await second.agreements.restorePlan()).toBe(1);
    const placed = second.plan.allocationOf(late.id);
    expect(placed).toMatchObject({ start: late.allocation?.start, end: late.allocation?.end });
    expect(placed?.segments?.[0]?.nodeIds).toEqual(['n001', 'n002', 'n003', 'n004', 'n005', 'n006', 'n007', 'n008']);
  });

  it('page by page, as start-up reads them: one placed anew waits until every stored plan has come back exactly', async () => {
    const first = setUp({ clusterNodes: 12 });
    const reserve = () =>
      first.factory.createAgreement(offer('advance-reservation-v1', [{ location: 'NodeCount', value: '4' }]), alice);
    const gone = await reserve(); // n001-n004, freed below for the last one
    const anew = await reserve(); // n005-n008
    const b = await reserve(); // n009-n012
    await first.agreements.terminate(gone.id, alice);
    const c = await reserve(); // n001-n004 again, created last
    expect(c.allocation?.segments?.[0]?.nodeIds).toEqual(['n001', 'n002', 'n003', 'n004']);
    const { start: from, end: to, nodes } = anew.allocation as NonNullable<typeof anew.allocation>;
    await first.repository.update({ ...anew, allocation: { start: from, end: to, nodes } }); // no stored plan: placed anew

    const second = setUp({ clusterNodes: 12, repository: first.repository });
    const pages: string[][] = [];
    async function* recorded() {
      for await (const page of liveAgreementPages(first.repository, 1)) {
        pages.push(page.map((a) => a.id));
        yield page;
      }
    }
    expect(await second.agreements.restorePlanReport(recorded())).toEqual({ restored: 3, lost: [] });
    expect(pages).toEqual([[anew.id], [b.id], [c.id]]);
    // Placed first on an empty plan, the one without a plan would have taken c's nodes.
    expect(second.plan.pendingChanges()).toEqual([anew.id]);
    expect(second.plan.allocationOf(c.id)).toEqual(c.allocation);
    expect(second.plan.allocationOf(b.id)).toEqual(b.allocation);
    expect(second.plan.allocationOf(anew.id)?.segments?.[0]?.nodeIds).toEqual(['n005', 'n006', 'n007', 'n008']);
  });

  it('holds come back exactly, and an accepted hold becomes the agreement with the same plan', async () => {
    const first = setUp();
    const negotiation = await first.negotiations.initiate(
      { type: 'Negotiation', agreementResponder: 'NegotiationResponder', document: contextXml },
      alice,
    );
    const [answer] = await first.negotiations.negotiate(
      negotiation.id,
      [
        {
          counterOfferTo: 'deadline-job-v1',
          creator: 'NegotiationInitiator',
          state: 'Solicited',
          offer: offer('deadline-job-v1'),
          document: '<x/>',
        },
      ],
      alice,
    );
    expect(answer?.state).toBe('Acceptable');
    const held = first.plan.allocationOf(`hold:${answer?.offerId}`);
    expect(answer?.hold?.allocation).toEqual(held);

    const second = setUp({ repository: first.repository, negotiationRepository: first.negotiationRepository });
    await second.agreements.restorePlan();
    expect(await second.negotiations.restore()).toEqual({ held: 1, expired: 0, confirmed: 0 });
    expect(second.plan.allocationOf(`hold:${answer?.offerId}`)).toEqual(held);
  });
});

/** A store whose commits are readable at once but durable only when `sync` is called, as SQLite's grouped log syncs. */
class GroupSyncedRepository extends MemoryAgreementRepository {
  private waiting: Array<() => void> = [];
  override async update(agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void): Promise<void> {
    await super.update(agreement, audit, committed);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  sync(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

describe('an agreement that reads as ended has its capacity free', () => {
  const nodes: OfferSetting[] = [{ location: 'NodeCount', value: '8' }];
  const whole = () => offer('advance-reservation-v1', nodes);
  async function endedBeforeDurable(
    first: ReceivedOffer,
    end: (s: ReturnType<typeof setUp>, id: string) => Promise<unknown>,
    state: string,
  ) {
    const repository = new GroupSyncedRepository();
    const s = setUp({ repository });
    const { id } = await s.factory.createAgreement(first, alice);
    const ending = end(s, id);
    await expect.poll(async () => (await repository.get(id))?.state).toBe(state);
    // Its end is not yet durable; an offer for the same nodes is admitted all the same.
    expect(s.plan.job(id)).toBeUndefined();
    expect((await s.factory.createAgreement(whole(), alice)).state).toBe('Observed');
    repository.sync();
    await ending;
  }

  it('terminated', () => endedBeforeDurable(whole(), (s, id) => s.agreements.terminate(id, alice), 'Terminated'));

  it('expired (wsag:ExpirationTime)', () => {
    const expiresAt = new Date(start.getTime() + 60_000);
    const expiring = offerFromTemplate(rendered('advance-reservation-v1'), nodes).replace(
      '</wsag:ServiceProvider>',
      `</wsag:ServiceProvider><wsag:ExpirationTime>${expiresAt.toISOString()}</wsag:ExpirationTime>`,
    );
    return endedBeforeDurable(receivedOffer(expiring), (s, id) => s.agreements.expire(id, expiresAt), 'Complete');
  });
});

describe('node failures', () => {
  it('moves a reservation off a failed node and stores its new nodes', async () => {
    const s = setUp({ clusterNodes: 8 });
    const reservation = await s.factory.createAgreement(
      offer('advance-reservation-v1', [{ location: 'NodeCount', value: '4' }]),
      alice,
    );
    const [failing] = reservation.allocation?.segments?.[0]?.nodeIds ?? [];
    const report = s.plan.nodeFailed(failing as string, start);
    expect(report).toMatchObject({ node: failing, moved: [reservation.id], problematic: [] });
    await s.plan.settle();
    const stored = await s.repository.get(reservation.id);
    expect(stored?.allocation?.segments?.[0]?.nodeIds).not.toContain(failing);
    expect(stored?.allocation).toMatchObject({
      start: reservation.allocation?.start,
      end: reservation.allocation?.end,
      nodes: 4,
    });
    expect(s.plan.nodes().find((n) => n.id === failing)?.failed).toBe(true);
  });
});

const contextXml =
  '<wsag-neg:NegotiationContext xmlns:wsag-neg="http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation">' +
  '<wsag-neg:NegotiationType><wsag-neg:Negotiation/></wsag-neg:NegotiationType>' +
  '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder></wsag-neg:NegotiationContext>';
