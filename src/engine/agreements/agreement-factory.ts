export type { AgreementFactoryDeps } from './create-agreement-context.js';
import type { Agreement, AgreementState } from '../../domain/agreement.js';
import type { Caller } from '../../domain/identity.js';
import { CannotSatisfy, InvalidTerms, UnknownTemplate } from '../../domain/errors.js';
import { holdKey } from '../../domain/negotiation.js';
import { isoTime } from '../../domain/time.js';
import { alternativeLabel, alternativesMeetingConstraints } from './alternatives.js';
import { actorOf, agreementNote, allocationSummary } from '../audit/audit-notes.js';
import { bidderOf } from '../planning/quote.js';
import type { ReceivedOffer } from '../ports.js';
import { refuseBidWithTimePromise, requireBindingRequest } from './refused-terms.js';
import { templateOf } from './template-resolution.js';
import {
  type AgreementFactoryDeps,
  type CreateAgreementContext,
  type Step,
  required,
} from './create-agreement-context.js';
import {
  reserveRemoteStandby,
  bindRemoteStandby,
  markReservationUsed,
  checkShares,
  checkFairUse,
  holdFunds,
  quotedPrice,
} from './holding-steps.js';

export const resolveTemplate: Step = {
  name: 'resolveTemplate',
  run(ctx, deps) {
    ctx.template = templateOf(deps.templates, ctx.offer);
    if (ctx.replaces && ctx.replaces.templateId !== ctx.template.id) {
      throw new UnknownTemplate(
        `a renegotiation keeps the template: agreement "${ctx.replaces.id}" uses "` +
          `${ctx.replaces.templateId}", the offer names "${ctx.template.id}"`,
      );
    }
  },
};

/** Each alternative (ExactlyOne / OneOrMore) is checked on its own. */
export const checkCreationConstraints: Step = {
  name: 'checkCreationConstraints',
  run(ctx, deps) {
    const { candidates, reasons } = alternativesMeetingConstraints(deps.templates, required(ctx.template), ctx.offer);
    ctx.candidates = candidates;
    ctx.reasons.push(...reasons);
  },
};

/** wsag:ExpirationTime must lie ahead: an agreement that has already expired is no promise at all. */
export const checkExpirationTime: Step = {
  name: 'checkExpirationTime',
  run(ctx) {
    const expiresAt = ctx.offer.expiresAt;
    if (expiresAt && expiresAt.getTime() <= ctx.now.getTime()) {
      throw new InvalidTerms(
        `wsag:ExpirationTime ${isoTime(expiresAt)} has already passed (now ${isoTime(ctx.now)}): the ` +
          `agreement would end before it is made`,
      );
    }
  },
};

/** A one-shot CreateAgreement is binding: a non-binding or preparatory request is negotiated instead. */
export const requireBinding: Step = {
  name: 'requireBinding',
  run(ctx) {
    for (const alternative of required(ctx.candidates)) {
      requireBindingRequest(alternative.request);
      refuseBidWithTimePromise(alternative.request);
      if (ctx.state === 'Pending' && alternative.request.interactive) {
        throw new InvalidTerms(
          'sla:Interactive starts the job within seconds or not at all, so it cannot wait as a pending ' +
            "agreement for the provider's decision: send it with CreateAgreement",
        );
      }
    }
  },
};

/**
 * The first alternative the plan can serve is booked; a job that uses a reservation takes the reservation's capacity
 * instead.
 */
export const admitToPlan: Step = {
  name: 'admitToPlan',
  async run(ctx, deps) {
    for (const alternative of required(ctx.candidates)) {
      const reservationId = alternative.request.useReservation;
      if (reservationId !== undefined) {
        if (!deps.reservations) throw new InvalidTerms('this server does not take sla:UseReservation requests');
        ctx.allocation = await deps.reservations.claim(reservationId, alternative.request, ctx.caller, ctx.now);
        ctx.undo.push(() => deps.reservations?.unclaim(reservationId));
        ctx.chosen = alternative;
        return;
      }
      const decision = deps.plan.admit(
        ctx.agreementId,
        alternative.request,
        ctx.now,
        undefined,
        alternative.guaranteeTerms,
        bidderOf(alternative.request, ctx.caller),
      );
      if (decision.accepted) {
        ctx.undo.push(() => deps.plan.release(ctx.agreementId));
        ctx.chosen = alternative;
        ctx.allocation = decision.allocation;
        return;
      }
      ctx.reasons.push(`${alternativeLabel(alternative)}${decision.reason}`);
    }
    throw new CannotSatisfy(ctx.reasons.join('; '));
  },
};

/**
 * Accepting: the Acceptable offer's hold becomes the agreement's booking (for a
 * renegotiation, it replaces the old one). A hold missing from the plan (it could not be
 * booked again after a restart) is booked again from its stored allocation, or refused.
 */
export const takeOverHold: Step = {
  name: 'takeOverHold',
  run(ctx, deps) {
    const { offer } = required(ctx.committed);
    ctx.chosen = required(ctx.candidates)[0];
    if (!offer.hold) return;
    const key = holdKey(offer.offerId);
    const previous = deps.plan.job(ctx.agreementId);
    const held = deps.plan.job(key);
    if (previous) deps.plan.release(ctx.agreementId);
    if (!deps.plan.rename(key, ctx.agreementId)) {
      const outcome = deps.plan.restore(
        ctx.agreementId,
        offer.request,
        offer.hold.allocation,
        offer.createdAt,
        ctx.now,
      );
      if (outcome.restored === 'lost') {
        if (previous) deps.plan.restoreJob(previous);
        throw new CannotSatisfy(
          `the capacity held for offer "${offer.offerId}" is no longer available: ${outcome.reason}`,
        );
      }
    }
    deps.shares?.rename(key, ctx.agreementId);
    deps.fairUse?.rename(key, ctx.agreementId, 'agreement');
    ctx.undo.push(() => {
      deps.fairUse?.rename(ctx.agreementId, key, 'hold');
      if (ctx.replaces) deps.fairUse?.own(ctx.agreementId, ctx.replaces.initiator, 'agreement', ctx.replaces.request);
      deps.plan.release(ctx.agreementId);
      if (previous) deps.plan.restoreJob(previous);
      if (held) deps.plan.restoreJob(held, previous ? ctx.agreementId : undefined);
      deps.shares?.rename(ctx.agreementId, key);
    });
    ctx.allocation = deps.plan.allocationOf(ctx.agreementId, offer.hold.allocation);
  },
};

export const writeAgreementDocument: Step = {
  name: 'writeAgreementDocument',
  async run(ctx, deps) {
    const template = required(ctx.template);
    ctx.document = deps.documents.write(required(ctx.chosen), {
      agreementId: ctx.agreementId,
      responder: deps.providerName,
      initiator: ctx.replaces?.initiator ?? ctx.caller.identity,
      templateId: template.id,
      templateName: template.name,
    });
    // The provider signs what it commits to, before it is stored (PROTOCOL.md).
    if (deps.signer) ctx.document = await deps.signer.sign(ctx.document);
  },
};

export const persistAgreement: Step = {
  name: 'persistAgreement',
  async run(ctx, deps) {
    const template = required(ctx.template);
    const chosen = required(ctx.chosen);
    const replaced = ctx.replaces;
    const quoted = quotedPrice(ctx, deps);
    const agreement: Agreement = {
      id: ctx.agreementId,
      ...(chosen.name !== undefined ? { name: chosen.name } : {}),
      templateId: template.id,
      templateName: template.name,
      initiator: replaced?.initiator ?? ctx.caller.identity,
      state: replaced?.state ?? ctx.state,
      serviceTerms: chosen.serviceTermNames.map((termName) => ({ termName, state: 'NotReady' })),
      guaranteeTerms: chosen.guaranteeTerms.map((g) => ({ termName: g.name, state: 'NotDetermined' })),
      // An interactive job, once booked, holds its nodes like a reservation of the promised session (its booking adds
      // the preparation).
      request:
        chosen.request.interactive && ctx.allocation
          ? {
              ...chosen.request,
              window: { ...(ctx.allocation.promised ?? { start: ctx.allocation.start, end: ctx.allocation.end }) },
            }
          : chosen.request,
      ...(ctx.allocation ? { allocation: ctx.allocation } : {}),
      document: required(ctx.document),
      price: quoted.price,
      ...(quoted.factor !== 1 ? { priceFactor: quoted.factor } : {}),
      ...(ctx.committed
        ? { origin: { negotiationId: ctx.committed.negotiation.id, offerId: ctx.committed.offer.offerId } }
        : {}),
      ...(chosen.alternative ? { alternative: chosen.alternative } : {}),
      ...(ctx.acceptanceEpr !== undefined ? { acceptanceEpr: ctx.acceptanceEpr } : {}),
      ...(chosen.eligibleParties?.length
        ? { eligibleParties: chosen.eligibleParties }
        : replaced?.eligibleParties
          ? { eligibleParties: replaced.eligibleParties }
          : {}),
      ...(replaced?.usedBy !== undefined ? { usedBy: replaced.usedBy } : {}),
      ...(ctx.offer.expiresAt
        ? { expiresAt: ctx.offer.expiresAt }
        : replaced?.expiresAt
          ? { expiresAt: replaced.expiresAt }
          : {}),
      createdAt: replaced?.createdAt ?? ctx.now,
      updatedAt: ctx.now,
    };
    const audit = agreementNote({
      actor: actorOf(ctx.caller),
      action: replaced ? 'renegotiated' : 'created',
      after: agreement,
      ...(replaced ? { before: replaced } : {}),
      details: {
        templateId: agreement.templateId,
        allocation: allocationSummary(agreement.allocation),
        ...(agreement.origin
          ? { negotiationId: agreement.origin.negotiationId, offerId: agreement.origin.offerId }
          : {}),
        ...(agreement.request.useReservation !== undefined ? { useReservation: agreement.request.useReservation } : {}),
      },
    });
    deps.termsRead?.know(agreement.id, chosen.guaranteeTerms);
    const store = (committed?: () => void) =>
      replaced
        ? deps.repository.update(agreement, [audit], committed)
        : deps.repository.insert(agreement, [audit], committed);
    try {
      if (ctx.committed) ctx.durable = (await storedReadable(store)).durable;
      else await store();
    } catch (error) {
      deps.termsRead?.forget(agreement.id);
      throw error;
    }
    ctx.agreement = agreement;
  },
};

export const createAgreementSteps: readonly Step[] = [
  resolveTemplate,
  checkExpirationTime,
  checkCreationConstraints,
  requireBinding,
  admitToPlan,
  checkShares,
  checkFairUse,
  holdFunds,
  reserveRemoteStandby,
  writeAgreementDocument,
  persistAgreement,
  bindRemoteStandby,
  markReservationUsed,
];

/** Accepting an Acceptable negotiation offer, with the negotiation locked. */
export const acceptOfferSteps: readonly Step[] = [
  resolveTemplate,
  checkExpirationTime,
  checkCreationConstraints,
  takeOverHold,
  reserveRemoteStandby,
  writeAgreementDocument,
  persistAgreement,
  bindRemoteStandby,
];

/**
 * AgreementFactory (WS-Agreement CreateAgreement, CreatePendingAgreement): the agreement
 * is durable before these resolve; if a step fails, what earlier steps booked is undone.
 */
export interface NewAgreementOptions {
  agreementId?: string;
}

export class AgreementFactory {
  constructor(private readonly deps: AgreementFactoryDeps) {}

  /**
   * `options.agreementId`: the id the new agreement takes (chosen before, so a retry of the request finds it); else a
   * new one.
   */
  async createAgreement(offer: ReceivedOffer, caller: Caller, options: NewAgreementOptions = {}): Promise<Agreement> {
    try {
      if (offer.accepts) return await this.acceptOffer(offer, offer.accepts, caller, options.agreementId);
      return await this.run(createAgreementSteps, this.context(offer, caller, 'Observed', options.agreementId));
    } finally {
      // Jobs the admission moved (best-effort jobs making room) get their new allocations stored.
      await this.deps.plan.settle();
    }
  }

  /** The agreement starts Pending: capacity is booked, and the provider decides later (AgreementService.decide). */
  async createPendingAgreement(
    offer: ReceivedOffer,
    caller: Caller,
    acceptanceEpr?: string,
    options: NewAgreementOptions = {},
  ): Promise<Agreement> {
    if (offer.accepts) {
      throw new InvalidTerms(
        'an offer that accepts a negotiated offer is sent with CreateAgreement, not CreatePendingAgreement',
      );
    }
    const ctx = this.context(offer, caller, 'Pending', options.agreementId);
    if (acceptanceEpr !== undefined) ctx.acceptanceEpr = acceptanceEpr;
    try {
      return await this.run(createAgreementSteps, ctx);
    } finally {
      await this.deps.plan.settle();
    }
  }

  private async acceptOffer(
    offer: ReceivedOffer,
    ref: NonNullable<ReceivedOffer['accepts']>,
    caller: Caller,
    agreementId?: string,
  ): Promise<Agreement> {
    const negotiations = this.deps.negotiations;
    if (!negotiations)
      throw new InvalidTerms('this server does not negotiate: send the offer without a NegotiationExtension');
    return negotiations.confirm(ref, offer, caller, async (committed) => {
      const ctx = this.context(offer, caller, 'Observed', agreementId);
      ctx.committed = committed;
      const renegotiated = committed.negotiation.agreementId;
      if (renegotiated !== undefined) {
        const current = await this.deps.repository.get(renegotiated);
        if (current?.state !== 'Observed') {
          throw new InvalidTerms(
            `agreement "${renegotiated}" is no longer Observed (${current?.state ?? 'gone'}): the ` +
              `renegotiated offer cannot be accepted`,
          );
        }
        ctx.replaces = current;
        ctx.agreementId = current.id;
      }
      const run = async () => ({ agreement: await this.run(acceptOfferSteps, ctx), durable: required(ctx.durable) });
      // Changing an existing agreement is serialised with its other updates (terminate, decisions).
      return renegotiated !== undefined && this.deps.agreements
        ? this.deps.agreements.locked(renegotiated, run)
        : run();
    });
  }

  private context(
    offer: ReceivedOffer,
    caller: Caller,
    state: AgreementState,
    agreementId = this.deps.ids.next(),
  ): CreateAgreementContext {
    return {
      offer,
      caller,
      now: this.deps.clock.now(),
      agreementId,
      state,
      reasons: [],
      undo: [],
    };
  }

  private async run(steps: readonly Step[], ctx: CreateAgreementContext): Promise<Agreement> {
    try {
      for (const step of steps) await step.run(ctx, this.deps);
    } catch (error) {
      if (!ctx.agreement) for (const undo of ctx.undo.reverse()) await undo();
      throw error;
    }
    return required(ctx.agreement);
  }
}

/**
 * Starts a write and resolves as soon as reads see it (its `committed`), with the promise of
 * its durability; rejects if the write fails first. A failure after that (the log's sync)
 * rejects the promise handed back, which its taker awaits.
 */
async function storedReadable(write: (committed: () => void) => Promise<void>): Promise<{ durable: Promise<void> }> {
  let readable!: () => void;
  const seen = new Promise<void>((resolve) => (readable = resolve));
  const durable = write(readable);
  // Awaited later by the taker; until then a failed sync is not an unhandled rejection.
  durable.catch(() => {});
  await Promise.race([seen, durable]);
  // Wrapped: an async function's promise would wait for a promise it returns.
  return { durable };
}
