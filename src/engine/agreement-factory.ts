import type { Agreement } from '../domain/agreement.js';
import type { AgreementTemplate } from '../domain/template.js';
import type { Caller } from '../domain/identity.js';
import type { Allocation } from '../domain/allocation.js';
import { CannotSatisfy, UnknownTemplate } from '../domain/errors.js';
import type { CapacityPlan } from './capacity-plan.js';
import type { AgreementDocumentWriter, AgreementRepository, Clock, IdSource, ReceivedOffer, TemplateCatalog } from './ports.js';

export interface AgreementFactoryDeps {
  templates: TemplateCatalog;
  repository: AgreementRepository;
  documents: AgreementDocumentWriter;
  plan: CapacityPlan;
  clock: Clock;
  ids: IdSource;
  providerName: string;
}

/** State carried through the steps of one CreateAgreement. */
interface CreateAgreementContext {
  offer: ReceivedOffer;
  caller: Caller;
  now: Date;
  agreementId: string;
  template?: AgreementTemplate;
  allocation?: Allocation;
  document?: string;
  agreement?: Agreement;
}

type Step = { name: string; run(ctx: CreateAgreementContext, deps: AgreementFactoryDeps): void | Promise<void> };

/** Steps shared with CreatePendingAgreement and negotiation, in order. */
export const resolveTemplate: Step = {
  name: 'resolveTemplate',
  run(ctx, deps) {
    const { templateId, templateName } = ctx.offer;
    if (templateId === undefined && templateName === undefined) {
      throw new UnknownTemplate('the offer names no template: wsag:Context needs wsag:TemplateId or wsag:TemplateName');
    }
    const template = deps.templates.find({ id: templateId, name: templateName });
    if (!template) {
      const known = deps.templates.list().map((t) => `${t.name} (id ${t.id})`).join(', ');
      throw new UnknownTemplate(
        `no template with ${[templateId !== undefined && `TemplateId "${templateId}"`, templateName !== undefined && `TemplateName "${templateName}"`].filter(Boolean).join(' and ')}; known: ${known}`,
      );
    }
    ctx.template = template;
  },
};

export const checkCreationConstraints: Step = {
  name: 'checkCreationConstraints',
  run(ctx, deps) {
    deps.templates.checkCreationConstraints(required(ctx.template), ctx.offer);
  },
};

export const admitToPlan: Step = {
  name: 'admitToPlan',
  run(ctx, deps) {
    const decision = deps.plan.admit(ctx.agreementId, ctx.offer.request, ctx.now);
    if (!decision.accepted) throw new CannotSatisfy(decision.reason);
    ctx.allocation = decision.allocation;
  },
};

export const writeAgreementDocument: Step = {
  name: 'writeAgreementDocument',
  run(ctx, deps) {
    const template = required(ctx.template);
    ctx.document = deps.documents.write(ctx.offer, {
      agreementId: ctx.agreementId,
      responder: deps.providerName,
      initiator: ctx.caller.identity,
      templateId: template.id,
      templateName: template.name,
    });
  },
};

export const persistAgreement: Step = {
  name: 'persistAgreement',
  async run(ctx, deps) {
    const template = required(ctx.template);
    const agreement: Agreement = {
      id: ctx.agreementId,
      name: ctx.offer.name,
      templateId: template.id,
      templateName: template.name,
      initiator: ctx.caller.identity,
      state: 'Observed',
      serviceTerms: ctx.offer.serviceTermNames.map((termName) => ({ termName, state: 'NotReady' })),
      guaranteeTerms: ctx.offer.guaranteeTerms.map((g) => ({ termName: g.name, state: 'NotDetermined' })),
      request: ctx.offer.request,
      allocation: ctx.allocation,
      document: required(ctx.document),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    };
    await deps.repository.insert(agreement);
    ctx.agreement = agreement;
  },
};

export const createAgreementSteps: readonly Step[] = [
  resolveTemplate,
  checkCreationConstraints,
  admitToPlan,
  writeAgreementDocument,
  persistAgreement,
];

/**
 * AgreementFactory.createAgreement: a one-shot binding request. The agreement is durable
 * before this resolves; if any step fails, capacity booked by an earlier step is released.
 */
export class AgreementFactory {
  constructor(private readonly deps: AgreementFactoryDeps) {}

  async createAgreement(offer: ReceivedOffer, caller: Caller): Promise<Agreement> {
    const ctx: CreateAgreementContext = { offer, caller, now: this.deps.clock.now(), agreementId: this.deps.ids.next() };
    try {
      for (const step of createAgreementSteps) await step.run(ctx, this.deps);
    } catch (error) {
      this.deps.plan.release(ctx.agreementId);
      throw error;
    }
    return required(ctx.agreement);
  }
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('step order broken: a value an earlier step sets is missing');
  return value;
}
