import { CannotSatisfy } from '../../domain/errors.js';
import { agreementNote, systemActor } from '../audit/audit-notes.js';
import { quote, type Quote } from '../planning/quote.js';
import type { AuditDetails } from '../ports.js';
import { agreementHoldId } from '../accounting/charging.js';
import { VoUsage } from '../accounting/vo-usage.js';
import {
  type AgreementFactoryDeps,
  type CreateAgreementContext,
  type Step,
  required,
} from './create-agreement-context.js';

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
    if (!reservation.held)
      throw new CannotSatisfy(`Full service needs standby capacity at a peer provider: ${reservation.reason}`);
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
      details = {
        action: 'standby-bound',
        peer: remote.peer,
        remoteAgreementId: remote.agreementId,
        remoteAddress: remote.address,
        price: { ...standby.hold.price },
      };
    } catch (error) {
      details = {
        action: 'standby-not-bound',
        peer: standby.peer.name,
        reason: error instanceof Error ? error.message : String(error),
      };
    }
    const { action, ...rest } = details;
    await deps.repository.update(after, [agreementNote({ actor: systemActor, action, before, after, details: rest })]);
    ctx.agreement = after;
  },
};

/** A reservation is used once: record which agreement used it. */
export const markReservationUsed: Step = {
  name: 'markReservationUsed',
  async run(ctx, deps) {
    const reservationId = required(ctx.chosen).request.useReservation;
    if (reservationId !== undefined)
      await deps.reservations?.markUsed(reservationId, required(ctx.agreement).id, ctx.now, ctx.caller);
  },
};

/** One-shot binding request (and CreatePendingAgreement, which only starts in Pending). */
/**
 * The booking must keep its VO, group and user within their shares (docs/vo-policy.md); it is counted as theirs from
 * now on.
 */
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
    const release = await deps.charging.hold(
      agreementHoldId(ctx.agreementId),
      chosen.request,
      price,
      ctx.caller,
      `agreement ${ctx.agreementId}`,
    );
    if (release) ctx.undo.push(release);
  },
};

/**
 * What the agreement costs: an accepted offer's quote, else the price by the plan's load
 * over its booking (docs/pricing.md), its own booking left out; worked out once.
 */
export function quotedPrice(ctx: CreateAgreementContext, deps: AgreementFactoryDeps): Quote {
  const offer = ctx.committed?.offer;
  ctx.price ??= offer?.price
    ? { price: offer.price, factor: offer.priceFactor ?? 1 }
    : quote(deps.plan, deps.prices, required(ctx.chosen).request, ctx.allocation, [ctx.agreementId]);
  return ctx.price;
}
