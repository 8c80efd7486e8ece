import type { Agreement, AgreementState } from '../../domain/agreement.js';
import type { AgreementTemplate } from '../../domain/template.js';
import type { Caller } from '../../domain/identity.js';
import type { GuaranteeTerm } from '../../domain/terms.js';
import type { Allocation } from '../../domain/allocation.js';
import { CannotSatisfy, InvalidTerms, UnknownTemplate } from '../../domain/errors.js';
import { holdKey } from '../../domain/negotiation.js';
import type { PriceList } from '../../domain/pricing.js';
import { isoTime } from '../../domain/time.js';
import type { AgreementService } from './agreement-service.js';
import { alternativeLabel, alternativesMeetingConstraints } from './alternatives.js';
import { actorOf, agreementNote, allocationSummary, systemActor } from '../audit/audit-notes.js';
import type { RemoteStandby } from '../migration/migration-standby.js';
import type { Peer } from '../migration/peers.js';
import type { CommittedOffer, NegotiationService } from '../negotiation/negotiation-service.js';
import type { PlanningService } from '../planning/planning-service.js';
import { bidderOf, quote, type Quote } from '../planning/quote.js';
import type { AgreementDocumentWriter, AuditDetails, AgreementRepository, AgreementSigner, Clock, IdSource, ReceivedOffer, TemplateCatalog } from '../ports.js';
import type { StandbyHold } from '../migration/ports.js';
import type { ReservationUse } from './reservation-use.js';
import type { Charging } from '../accounting/charging.js';
import { agreementHoldId } from '../accounting/charging.js';
import { VoUsage } from '../accounting/vo-usage.js';
import { refuseBidWithTimePromise, requireBindingRequest } from './refused-terms.js';
import { templateOf } from './template-resolution.js';
import type { FairUse } from '../fair-use/fair-use.js';

export interface AgreementFactoryDeps {
  templates: TemplateCatalog;
  repository: AgreementRepository;
  documents: AgreementDocumentWriter;
  plan: PlanningService;
  clock: Clock;
  ids: IdSource;
  providerName: string;
  prices: PriceList;
  /** Needed to accept negotiated offers, renegotiate, and use reservations. */
  negotiations?: NegotiationService;
  agreements?: AgreementService;
  reservations?: ReservationUse;
  /** Signs every agreement document before it is stored; absent when the site has no signing key. */
  signer?: AgreementSigner;
  /** Full service: remote standby capacity held at a peer at acceptance (present when peers are configured). */
  standby?: Pick<RemoteStandby, 'reserve' | 'bind' | 'release'>;
  /** Holds of funds on the sla:ChargeAccount; absent: nothing is charged. */
  charging?: Pick<Charging, 'hold'>;
  /** VO usage SLAs; absent: no shares are enforced. */
  shares?: Pick<VoUsage, 'check' | 'own' | 'forget' | 'rename'>;
  /** Fair use (docs/security.md): one party's share of the site; absent: no limits. */
  fairUse?: Pick<FairUse, 'check' | 'own' | 'forget' | 'rename'>;
  /**
   * The run time, told the guarantee terms as read from the offer before the agreement is
   * stored, so it does not parse the agreement document again to judge them.
   */
  termsRead?: { know(agreementId: string, terms: readonly GuaranteeTerm[]): void; forget(agreementId: string): void };
}

/** State carried through the steps of one CreateAgreement or CreatePendingAgreement. */
interface CreateAgreementContext {
  offer: ReceivedOffer;
  caller: Caller;
  now: Date;
  agreementId: string;
  state: AgreementState;
  acceptanceEpr?: string;
  template?: AgreementTemplate;
  /** Alternatives that meet the creation constraints, in the initiator's order. */
  candidates?: ReceivedOffer[];
  /** Why alternatives were not taken, for the fault when none is. */
  reasons: string[];
  chosen?: ReceivedOffer;
  allocation?: Allocation;
  /** Accepting a negotiated offer. */
  committed?: CommittedOffer;
  /** Renegotiation: the agreement the accepted offer changes. */
  replaces?: Agreement;
  document?: string;
  /** The quoted price (a negotiated offer's own quote when one is accepted) and its demand factor. */
  price?: Quote;
  agreement?: Agreement;
  /**
   * Accepting a negotiated offer: the agreement is stored (readable) but this resolves only
   * once it is durable; NegotiationService.confirm awaits it after storing the negotiation,
   * so one sync of the log makes both durable (docs/decisions/0002-group-commit.md).
   */
  durable?: Promise<void>;
  /** Full service: the standby held at a peer, bound once the agreement is stored. */
  standby?: { peer: Peer; hold: StandbyHold };
  /** Undo what earlier steps did to the plan (and the funds), newest first, if a later step fails. */
  undo: Array<() => void | Promise<void>>;
}

type Step = { name: string; run(ctx: CreateAgreementContext, deps: AgreementFactoryDeps): void | Promise<void> };

export const resolveTemplate: Step = {
  name: 'resolveTemplate',
  run(ctx, deps) {
    ctx.template = templateOf(deps.templates, ctx.offer);
    if (ctx.replaces && ctx.replaces.templateId !== ctx.template.id) {
      throw new UnknownTemplate(`a renegotiation keeps the template: agreement "${ctx.replaces.id}" uses "${ctx.replaces.templateId}", the offer names "${ctx.template.id}"`);
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
      throw new InvalidTerms(`wsag:ExpirationTime ${isoTime(expiresAt)} has already passed (now ${isoTime(ctx.now)}): the agreement would end before it is made`);
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
        throw new InvalidTerms('sla:Interactive starts the job within seconds or not at all, so it cannot wait as a pending agreement for the provider\'s decision: send it with CreateAgreement');
      }
    }
  },
};

/** The first alternative the plan can serve is booked; a job that uses a reservation takes the reservation's capacity instead. */
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
      const decision = deps.plan.admit(ctx.agreementId, alternative.request, ctx.now, undefined, alternative.guaranteeTerms, bidderOf(alternative.request, ctx.caller));
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
      const outcome = deps.plan.restore(ctx.agreementId, offer.request, offer.hold.allocation, offer.createdAt, ctx.now);
      if (outcome.restored === 'lost') {
        if (previous) deps.plan.restoreJob(previous);
        throw new CannotSatisfy(`the capacity held for offer "${offer.offerId}" is no longer available: ${outcome.reason}`);
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

/**
 * Full service is accepted only if remote capacity can be reserved (TERMS.md): with peers
 * configured, standby capacity is held at the cheapest suitable peer (a preparatory
 * reservation), or the offer is refused with why. A renegotiation keeps the standby it has.
 */
export const reserveRemoteStandby: Step = {
  name: 'reserveRemoteStandby',
  async run(ctx, deps) {
    const chosen = required(ctx.chosen);
    if (!deps.standby || chosen.request.guaranteeLevel !== 'Full' || ctx.replaces) return;
    const reservation = await deps.standby.reserve(chosen.request, { agreementId: ctx.agreementId });
    if (!reservation.held) throw new CannotSatisfy(`Full service needs standby capacity at a peer provider: ${reservation.reason}`);
    const { peer, hold } = reservation;
    ctx.standby = { peer, hold };
    ctx.undo.push(() => void deps.standby?.release(peer, hold).catch(() => undefined));
  },
};

/**
 * The agreement is made: the standby held at the peer becomes an agreement with it, noted on
 * the audit trail (`standby-bound`; the standby is ended when the job's run is over). If
 * binding fails the agreement stands and `standby-not-bound` says why.
 */
export const bindRemoteStandby: Step = {
  name: 'bindRemoteStandby',
  async run(ctx, deps) {
    const standby = ctx.standby;
    if (!standby || !deps.standby) return;
    const before = required(ctx.agreement);
    const after = { ...before, updatedAt: deps.clock.now() };
    let details: AuditDetails & { action: string };
    try {
      const remote = await deps.standby.bind(standby.peer, standby.hold);
      details = { action: 'standby-bound', peer: remote.peer, remoteAgreementId: remote.agreementId, remoteAddress: remote.address, price: { ...standby.hold.price } };
    } catch (error) {
      details = { action: 'standby-not-bound', peer: standby.peer.name, reason: error instanceof Error ? error.message : String(error) };
    }
    const { action, ...rest } = details;
    await deps.repository.update(after, [agreementNote({ actor: systemActor, action, before, after, details: rest })]);
    ctx.agreement = after;
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
      // An interactive job, once booked, holds its nodes like a reservation of the promised session (its booking adds the preparation).
      request: chosen.request.interactive && ctx.allocation ? { ...chosen.request, window: { ...(ctx.allocation.promised ?? { start: ctx.allocation.start, end: ctx.allocation.end }) } } : chosen.request,
      ...(ctx.allocation ? { allocation: ctx.allocation } : {}),
      document: required(ctx.document),
      price: quoted.price,
      ...(quoted.factor !== 1 ? { priceFactor: quoted.factor } : {}),
      ...(ctx.committed ? { origin: { negotiationId: ctx.committed.negotiation.id, offerId: ctx.committed.offer.offerId } } : {}),
      ...(chosen.alternative ? { alternative: chosen.alternative } : {}),
      ...(ctx.acceptanceEpr !== undefined ? { acceptanceEpr: ctx.acceptanceEpr } : {}),
      ...(chosen.eligibleParties?.length ? { eligibleParties: chosen.eligibleParties } : replaced?.eligibleParties ? { eligibleParties: replaced.eligibleParties } : {}),
      ...(replaced?.usedBy !== undefined ? { usedBy: replaced.usedBy } : {}),
      ...(ctx.offer.expiresAt ? { expiresAt: ctx.offer.expiresAt } : replaced?.expiresAt ? { expiresAt: replaced.expiresAt } : {}),
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
        ...(agreement.origin ? { negotiationId: agreement.origin.negotiationId, offerId: agreement.origin.offerId } : {}),
        ...(agreement.request.useReservation !== undefined ? { useReservation: agreement.request.useReservation } : {}),
      },
    });
    deps.termsRead?.know(agreement.id, chosen.guaranteeTerms);
    const store = (committed?: () => void) => (replaced ? deps.repository.update(agreement, [audit], committed) : deps.repository.insert(agreement, [audit], committed));
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

/** A reservation is used once: record which agreement used it. */
export const markReservationUsed: Step = {
  name: 'markReservationUsed',
  async run(ctx, deps) {
    const reservationId = required(ctx.chosen).request.useReservation;
    if (reservationId !== undefined) await deps.reservations?.markUsed(reservationId, required(ctx.agreement).id, ctx.now, ctx.caller);
  },
};

/** One-shot binding request (and CreatePendingAgreement, which only starts in Pending). */
/** The booking must keep its VO, group and user within their shares (docs/vo-policy.md); it is counted as theirs from now on. */
export const checkShares: Step = {
  name: 'checkShares',
  run(ctx, deps) {
    if (!deps.shares) return;
    const chosen = required(ctx.chosen);
    deps.shares.check(ctx.agreementId, chosen.request, ctx.allocation, ctx.caller, ctx.now);
    deps.shares.own(ctx.agreementId, VoUsage.ownerOf(chosen.request, ctx.replaces?.initiator ?? ctx.caller.identity));
    ctx.undo.push(() => deps.shares?.forget(ctx.agreementId));
  },
};

/** The booking must keep its party within the site's fair-use limits; it is counted as the party's from now on. */
export const checkFairUse: Step = {
  name: 'checkFairUse',
  run(ctx, deps) {
    if (!deps.fairUse) return;
    const chosen = required(ctx.chosen);
    const kind = ctx.state === 'Pending' ? 'pending' : 'agreement';
    deps.fairUse.check(ctx.agreementId, kind, chosen.request, ctx.allocation, ctx.caller, ctx.now);
    deps.fairUse.own(ctx.agreementId, ctx.caller.identity, kind, chosen.request);
    ctx.undo.push(() => deps.fairUse?.forget(ctx.agreementId));
  },
};

/**
 * The quoted price is held on the charge account before the agreement is stored:
 * not enough funds refuses the offer naming the account and both amounts. A renegotiation
 * keeps the agreement's hold.
 */
export const holdFunds: Step = {
  name: 'holdFunds',
  async run(ctx, deps) {
    if (!deps.charging || ctx.replaces) return;
    const chosen = required(ctx.chosen);
    const { price } = quotedPrice(ctx, deps);
    const release = await deps.charging.hold(agreementHoldId(ctx.agreementId), chosen.request, price, ctx.caller, `agreement ${ctx.agreementId}`);
    if (release) ctx.undo.push(release);
  },
};

/**
 * What the agreement costs: an accepted offer's quote, else the price by the plan's load
 * over its booking (docs/pricing.md), its own booking left out; worked out once.
 */
function quotedPrice(ctx: CreateAgreementContext, deps: AgreementFactoryDeps): Quote {
  const offer = ctx.committed?.offer;
  ctx.price ??= offer?.price ? { price: offer.price, factor: offer.priceFactor ?? 1 } : quote(deps.plan, deps.prices, required(ctx.chosen).request, ctx.allocation, [ctx.agreementId]);
  return ctx.price;
}

export const createAgreementSteps: readonly Step[] = [
  resolveTemplate, checkExpirationTime, checkCreationConstraints, requireBinding, admitToPlan, checkShares, checkFairUse, holdFunds, reserveRemoteStandby, writeAgreementDocument, persistAgreement, bindRemoteStandby, markReservationUsed,
];

/** Accepting an Acceptable negotiation offer, with the negotiation locked. */
export const acceptOfferSteps: readonly Step[] = [
  resolveTemplate, checkExpirationTime, checkCreationConstraints, takeOverHold, reserveRemoteStandby, writeAgreementDocument, persistAgreement, bindRemoteStandby,
];

/**
 * AgreementFactory (WS-Agreement CreateAgreement, CreatePendingAgreement): the agreement
 * is durable before these resolve; if a step fails, what earlier steps booked is undone.
 */
export class AgreementFactory {
  constructor(private readonly deps: AgreementFactoryDeps) {}

  async createAgreement(offer: ReceivedOffer, caller: Caller): Promise<Agreement> {
    try {
      if (offer.accepts) return await this.acceptOffer(offer, offer.accepts, caller);
      return await this.run(createAgreementSteps, this.context(offer, caller, 'Observed'));
    } finally {
      // Jobs the admission moved (best-effort jobs making room) get their new allocations stored.
      await this.deps.plan.settle();
    }
  }

  /** The agreement starts Pending: capacity is booked, and the provider decides later (AgreementService.decide). */
  async createPendingAgreement(offer: ReceivedOffer, caller: Caller, acceptanceEpr?: string): Promise<Agreement> {
    if (offer.accepts) {
      throw new InvalidTerms('an offer that accepts a negotiated offer is sent with CreateAgreement, not CreatePendingAgreement');
    }
    const ctx = this.context(offer, caller, 'Pending');
    if (acceptanceEpr !== undefined) ctx.acceptanceEpr = acceptanceEpr;
    try {
      return await this.run(createAgreementSteps, ctx);
    } finally {
      await this.deps.plan.settle();
    }
  }

  private async acceptOffer(offer: ReceivedOffer, ref: NonNullable<ReceivedOffer['accepts']>, caller: Caller): Promise<Agreement> {
    const negotiations = this.deps.negotiations;
    if (!negotiations) throw new InvalidTerms('this server does not negotiate: send the offer without a NegotiationExtension');
    return negotiations.confirm(ref, offer, caller, async (committed) => {
      const ctx = this.context(offer, caller, 'Observed');
      ctx.committed = committed;
      const renegotiated = committed.negotiation.agreementId;
      if (renegotiated !== undefined) {
        const current = await this.deps.repository.get(renegotiated);
        if (current?.state !== 'Observed') {
          throw new InvalidTerms(`agreement "${renegotiated}" is no longer Observed (${current?.state ?? 'gone'}): the renegotiated offer cannot be accepted`);
        }
        ctx.replaces = current;
        ctx.agreementId = current.id;
      }
      const run = async () => ({ agreement: await this.run(acceptOfferSteps, ctx), durable: required(ctx.durable) });
      // Changing an existing agreement is serialised with its other updates (terminate, decisions).
      return renegotiated !== undefined && this.deps.agreements ? this.deps.agreements.locked(renegotiated, run) : run();
    });
  }

  private context(offer: ReceivedOffer, caller: Caller, state: AgreementState): CreateAgreementContext {
    return { offer, caller, now: this.deps.clock.now(), agreementId: this.deps.ids.next(), state, reasons: [], undo: [] };
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

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('step order broken: a value an earlier step sets is missing');
  return value;
}
