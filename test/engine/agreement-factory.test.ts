import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anonymousCaller } from '../../src/domain/identity.js';
import { CannotSatisfy, InvalidStateTransition, NotAuthorized } from '../../src/domain/errors.js';
import { AgreementFactory } from '../../src/engine/agreements/agreement-factory.js';
import { AgreementService } from '../../src/engine/agreements/agreement-service.js';
import { defaultConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import type { AgreementRepository } from '../../src/engine/ports.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { XmlAgreementWriter } from '../../src/xml/agreement-writer.js';
import { withXml } from '../../src/xml/libxml.js';
import { readOffer } from '../../src/xml/offer-reader.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { TemplateLibrary } from '../../src/xml/template-library.js';
import { receivedOffer } from '../support/offers.js';
import { projectRoot } from '../support/server.js';

const now = new Date('2026-11-21T12:00:00Z');
const templates = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));
const reservation = templates.render(now).find((t) => t.includes('advance-reservation-v1')) as string;

function setUp(repository: AgreementRepository = new MemoryAgreementRepository(), clusterNodes = 16) {
  let n = 0;
  const plan = new PlanningService(clusterDescription({ ...defaultConfig, clusterNodes }));
  const clock = { now: () => now };
  const factory = new AgreementFactory({
    templates,
    repository,
    plan,
    clock,
    documents: new XmlAgreementWriter(),
    ids: { next: () => `a${++n}` },
    providerName: 'test-provider',
    prices: { currency: 'EUR', nodeHour: 1, preparatoryFeeRate: 0.05 },
  });
  return { factory, agreements: new AgreementService(repository, plan, clock), plan, repository };
}

describe('AgreementFactory.createAgreement', () => {
  it('persists an Observed agreement with its terms, allocation and document', async () => {
    const { factory, repository } = setUp();
    const agreement = await factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), anonymousCaller);
    expect(agreement).toMatchObject({
      id: 'a1',
      state: 'Observed',
      templateId: 'advance-reservation-v1',
      initiator: 'anonymous',
      serviceTerms: [
        { termName: 'Nodes', state: 'NotReady' },
        { termName: 'Window', state: 'NotReady' },
      ],
      guaranteeTerms: [{ termName: 'NodesThroughWindow', state: 'NotDetermined' }],
      // Booked with the nodes' preparation before the window (36 s) and their release after it (15 s); the promise is the window.
      allocation: {
        start: new Date('2026-11-21T13:59:24Z'),
        end: new Date('2026-11-21T16:00:15Z'),
        nodes: 8,
        promised: { start: new Date('2026-11-21T14:00:00Z'), end: new Date('2026-11-21T16:00:00Z') },
      },
    });
    expect(agreement.document).toContain('wsag:AgreementId="a1"');
    expect(agreement.document).toContain('<wsag:AgreementResponder>test-provider</wsag:AgreementResponder>');
    expect(await repository.get('a1')).toEqual(agreement);
  });

  it('refuses what does not fit and books nothing for it', async () => {
    const { factory, plan } = setUp();
    const offer = receivedOffer(offerFromTemplate(reservation));
    await factory.createAgreement(offer, anonymousCaller);
    await factory.createAgreement(offer, anonymousCaller);
    await expect(factory.createAgreement(offer, anonymousCaller)).rejects.toThrow(CannotSatisfy);
    expect([...plan.booked().keys()]).toEqual(['a1', 'a2']);
  });

  it('releases the booking when persisting fails', async () => {
    const failing = new MemoryAgreementRepository();
    failing.insert = async () => {
      throw new Error('disk full');
    };
    const { factory, plan } = setUp(failing);
    await expect(
      factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), anonymousCaller),
    ).rejects.toThrow('disk full');
    expect(plan.booked().size).toBe(0);
  });
});

describe('AgreementService', () => {
  it('terminates once, releases capacity, and refuses a second termination', async () => {
    const { factory, agreements, plan } = setUp();
    const a = await factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), anonymousCaller);
    const t = await agreements.terminate(a.id, anonymousCaller);
    expect(t.state).toBe('Terminated');
    expect(t.serviceTerms.every((s) => s.state === 'Completed')).toBe(true);
    expect(plan.booked().size).toBe(0);
    await expect(agreements.terminate(a.id, anonymousCaller)).rejects.toThrow(InvalidStateTransition);
  });

  it('lets only the initiator (or an admin) act on an agreement', async () => {
    const { factory, agreements } = setUp();
    const a = await factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), {
      identity: 'CN=alice',
      isAdmin: false,
    });
    await expect(agreements.get(a.id, { identity: 'CN=bob', isAdmin: false })).rejects.toThrow(NotAuthorized);
    await expect(agreements.terminate(a.id, { identity: 'CN=bob', isAdmin: false })).rejects.toThrow(NotAuthorized);
    expect((await agreements.get(a.id, { identity: 'CN=ops', isAdmin: true })).id).toBe(a.id);
    expect(await agreements.list({ identity: 'CN=bob', isAdmin: false })).toEqual([]);
  });

  it('rebuilds the plan from live agreements at start-up', async () => {
    const first = setUp();
    await first.factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), anonymousCaller);
    const b = await first.factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), anonymousCaller);
    await first.agreements.terminate(b.id, anonymousCaller);
    const second = setUp(first.repository);
    expect(await second.agreements.restorePlan()).toBe(1);
    expect([...second.plan.booked().keys()]).toEqual(['a1']);
  });
});

describe('AgreementFactory: the guarantee terms handed to the run time', () => {
  it('are the ones the stored agreement document gives back, for every shipped template; a failed store takes them back', async () => {
    const known = new Map<string, unknown>();
    const forgotten: string[] = [];
    const termsRead = {
      know: (id: string, terms: readonly unknown[]) => known.set(id, terms),
      forget: (id: string) => forgotten.push(id),
    };
    const { plan, repository } = setUp(undefined, 64);
    let n = 0;
    const factory = new AgreementFactory({
      templates,
      repository,
      plan,
      clock: { now: () => now },
      documents: new XmlAgreementWriter(),
      ids: { next: () => `t${++n}` },
      providerName: 'test-provider',
      prices: { currency: 'EUR', nodeHour: 1, preparatoryFeeRate: 0.05 },
      termsRead,
    });
    const rendered = templates.render(now);
    expect(rendered.length).toBe(5);
    for (const template of rendered) {
      const agreement = await factory.createAgreement(receivedOffer(offerFromTemplate(template)), anonymousCaller);
      const fromDocument = withXml(agreement.document, 'agreement', (doc) => readOffer(doc.root).guaranteeTerms);
      expect(known.get(agreement.id), agreement.templateId).toEqual(fromDocument);
    }
    expect([...known.values()].some((terms) => (terms as unknown[]).length > 0)).toBe(true);
    repository.insert = async () => {
      throw new Error('disk full');
    };
    await expect(
      factory.createAgreement(receivedOffer(offerFromTemplate(reservation)), anonymousCaller),
    ).rejects.toThrow('disk full');
    expect(forgotten).toEqual([`t${n}`]);
  });
});
