import type { Allocation } from '../../domain/allocation.js';
import { FairUseExceeded, ShareExceeded } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import {
  holdKey,
  nextOfferId,
  type Money,
  type Negotiation,
  type NegotiationOfferRecord,
} from '../../domain/negotiation.js';
import { preparatoryFee } from '../../domain/pricing.js';
import type { AgreementTemplate } from '../../domain/template.js';
import { addSeconds, ceilToSecond, isoTime } from '../../domain/time.js';
import { alternativeLabel, alternativesMeetingConstraints } from '../agreements/alternatives.js';
import type { ReceivedNegotiationOffer, ReceivedOffer } from '../ports.js';
import { bidderOf } from '../planning/quote.js';
import { refuseBidWithTimePromise } from '../agreements/refused-terms.js';
import { CounterOfferWriter } from './counter-offer-writer.js';
export type { NegotiationSettings } from './counter-offer-writer.js';

/** Who decides, and what the charge account the offer names can still cover (the budget). */
export interface DecideContext {
  caller: Caller;
  budget?: { account: string; available: number; currency: string };
}

const counterOfferKind = {
  LaterStart: 'later start',
  LaterDeadline: 'later deadline',
  FewerNodes: 'fewer nodes',
} as const;

/**
 * The responder's side of a round: Advisory counter-offers with start slots and prices
 * for a non-binding request, and for a Solicited offer either an Acceptable counter-offer
 * that holds capacity in the plan (a preparatory reservation), or a Rejected one saying why
 * followed by Advisory counter-offers the scheduler could serve instead (a later start or
 * deadline, fewer nodes). Counter-offers are appended to the negotiation; storing it is the
 * caller's job.
 */
export class ResponderOffers extends CounterOfferWriter {
  /** Advisory: start slots for each alternative that meets the template, each with its price; nothing held. */
  advise(
    negotiation: Negotiation,
    incoming: ReceivedNegotiationOffer,
    record: NegotiationOfferRecord,
    now: Date,
  ): NegotiationOfferRecord[] {
    const template = this.templateFor(negotiation, incoming);
    const { candidates, reasons } = this.negotiable(template, incoming.offer);
    const answers: NegotiationOfferRecord[] = [];
    for (const alternative of candidates) {
      const slots = this.deps.plan.slots(
        alternative.request,
        now,
        this.deps.settings.advisorySlots,
        negotiation.agreementId,
      );
      if (slots.length === 0)
        reasons.push(
          `${alternativeLabel(alternative)}no start slot: ${alternative.request.nodeCount} nodes are never ` +
            `free for the requested time`,
        );
      slots.forEach(({ slot, completion }, i) => {
        const moved = this.deps.documents.withSlot(alternative, slot, completion);
        const price = this.price(negotiation, moved.request, slot);
        const late =
          moved.request.deadline &&
          alternative.request.deadline &&
          moved.request.deadline > alternative.request.deadline;
        const note =
          `${alternativeLabel(alternative)}start slot ${i + 1} of ${slots.length}: ${slot.nodes} nodes from ` +
          `${isoTime(slot.start)} to ${isoTime(slot.end)}` +
          (late ? ` (later than the requested deadline ${isoTime(alternative.request.deadline as Date)})` : '');
        answers.push(this.counterOffer(negotiation, record, template, moved, 'Advisory', now, { price, note, slot }));
      });
    }
    if (answers.length === 0) {
      answers.push(
        this.counterOffer(negotiation, record, template, incoming.offer, 'Rejected', now, { note: reasons.join('; ') }),
      );
    }
    return answers;
  }

  /**
   * Solicited: the first alternative the plan can serve gets an Acceptable counter-offer with
   * a hold. Otherwise a Rejected counter-offer says why (the scheduler's reasons), followed
   * by Advisory counter-offers the initiator may solicit instead: the scheduler's
   * alternatives (a later start, a later deadline, fewer nodes), each with its slot and price.
   */
  decide(
    negotiation: Negotiation,
    incoming: ReceivedNegotiationOffer,
    record: NegotiationOfferRecord,
    now: Date,
    context: DecideContext,
  ): NegotiationOfferRecord[] {
    const template = this.templateFor(negotiation, incoming);
    const { candidates, reasons } = this.negotiable(template, incoming.offer);
    const keepable: Array<{ alternative: ReceivedOffer; booking: Allocation }> = [];
    const laterForShare: Array<{ alternative: ReceivedOffer; roomAt: Date }> = [];
    const overBudget: ReceivedOffer[] = [];
    for (const alternative of candidates) {
      if (alternative.request.useReservation !== undefined) {
        reasons.push(
          `${alternativeLabel(alternative)}using a reservation is not negotiated: send CreateAgreement with ` +
            `sla:UseReservation inside the reserved window`,
        );
        continue;
      }
      const offerId = nextOfferId(negotiation);
      const decision = this.deps.plan.admit(
        holdKey(offerId),
        alternative.request,
        now,
        negotiation.agreementId,
        alternative.guaranteeTerms,
        bidderOf(alternative.request, context.caller),
      );
      if (!decision.accepted) {
        reasons.push(`${alternativeLabel(alternative)}${decision.reason}`);
        if (decision.breaksObjectives) keepable.push({ alternative, booking: decision.breaksObjectives });
        continue;
      }
      const prices = this.deps.settings.prices;
      const { price, factor } = this.quote(negotiation, alternative.request, decision.allocation, holdKey(offerId));
      // The hold must keep the VO within its share and the charge account within its budget; else a counter-offer that
      // does.
      const refused = this.beyondShareOrBudget(offerId, alternative, decision.allocation, price, context, now);
      if (refused) {
        this.deps.plan.release(holdKey(offerId));
        reasons.push(`${alternativeLabel(alternative)}${refused.reason}`);
        if (refused.roomAt) laterForShare.push({ alternative, roomAt: refused.roomAt });
        else if (!refused.fairUse) overBudget.push(alternative);
        continue;
      }
      const fee = preparatoryFee(price, prices);
      const expiresAt = ceilToSecond(addSeconds(now, this.deps.settings.holdSeconds));
      const answer = this.counterOffer(negotiation, record, template, alternative, 'Acceptable', now, {
        offerId,
        price,
        fee,
        expirationTime: expiresAt,
        slot: decision.allocation,
        note: `committing offer: held until ${isoTime(expiresAt)}; accept it with CreateAgreement before then`,
      });
      answer.hold = { allocation: decision.allocation, expiresAt, state: 'Held', fee };
      if (factor !== 1) answer.priceFactor = factor;
      return [answer];
    }
    const hint = this.earliestSlotHint(negotiation, candidates, now);
    const rejected = this.counterOffer(negotiation, record, template, incoming.offer, 'Rejected', now, {
      note: reasons.join('; ') + hint,
    });
    return [
      rejected,
      ...this.objectivesKept(negotiation, record, template, keepable, now),
      ...laterForShare.flatMap(({ alternative, roomAt }) =>
        this.whenShareAllows(negotiation, record, template, alternative, roomAt, context, now),
      ),
      ...overBudget.flatMap((alternative) =>
        this.withinBudget(negotiation, record, template, alternative, context, now),
      ),
      ...this.counterProposals(
        negotiation,
        record,
        template,
        candidates.filter((c) => !overBudget.includes(c) && !laterForShare.some((l) => l.alternative === c)),
        now,
      ),
    ];
  }

  /**
   * Why a booking the plan could make cannot be held: its VO's share, the party's fair use, or the charge account's
   * budget.
   */
  private beyondShareOrBudget(
    key: string,
    alternative: ReceivedOffer,
    booking: Allocation,
    price: Money,
    context: DecideContext,
    now: Date,
  ): { reason: string; roomAt?: Date; fairUse?: true } | undefined {
    try {
      this.deps.shares?.check(holdKey(key), alternative.request, booking, context.caller, now);
      this.deps.fairUse?.check(holdKey(key), 'hold', alternative.request, booking, context.caller, now);
    } catch (error) {
      if (error instanceof ShareExceeded)
        return { reason: error.message, ...(error.roomAt ? { roomAt: error.roomAt } : {}) };
      if (error instanceof FairUseExceeded) return { reason: error.message, fairUse: true };
      throw error;
    }
    const budget = context.budget;
    if (budget && alternative.request.chargeAccount && price.amount > budget.available + 1e-9) {
      return {
        reason:
          `account "${budget.account}" cannot cover ${price.amount.toFixed(2)} ${price.currency}: ` +
          `${budget.available.toFixed(2)} ${budget.currency} available`,
      };
    }
    return undefined;
  }

  /**
   * The same terms from the time the VO's share has room again (the next epoch, or the one after), if the plan and the
   * share allow them then.
   */
  private whenShareAllows(
    negotiation: Negotiation,
    record: NegotiationOfferRecord,
    template: AgreementTemplate,
    alternative: ReceivedOffer,
    roomAt: Date,
    context: DecideContext,
    now: Date,
  ): NegotiationOfferRecord[] {
    let from = roomAt;
    for (let tries = 0; tries < 3; tries++) {
      const r = alternative.request;
      const request = r.window
        ? {
            ...r,
            window: { start: from, end: new Date(from.getTime() + r.window.end.getTime() - r.window.start.getTime()) },
          }
        : { ...r, earliestStart: new Date(Math.max(from.getTime(), r.earliestStart?.getTime() ?? 0)) };
      const [found] = this.deps.plan.slots(request, now, 1, negotiation.agreementId);
      if (!found) return [];
      try {
        this.deps.shares?.check(
          'share-counter',
          request,
          { ...found.slot, segments: [] } as Allocation,
          context.caller,
          now,
        );
      } catch (error) {
        if (!(error instanceof ShareExceeded) || !error.roomAt) throw error;
        from = error.roomAt;
        continue;
      }
      const moved = this.deps.documents.withSlot(alternative, found.slot, found.completion);
      const price = this.price(negotiation, moved.request, found.slot);
      const note =
        `${alternativeLabel(alternative)}counter-offer (when the VO's share allows it): ` +
        `${found.slot.nodes} nodes from ${isoTime(found.slot.start)} to ${isoTime(found.slot.end)}; solicit ` +
        `it to hold the capacity`;
      return [
        this.counterOffer(negotiation, record, template, moved, 'Advisory', now, { price, note, slot: found.slot }),
      ];
    }
    return [];
  }

  /**
   * What the charge account's budget buys: the same job on fewer nodes, if the template allows it and the plan has
   * them.
   */
  private withinBudget(
    negotiation: Negotiation,
    record: NegotiationOfferRecord,
    template: AgreementTemplate,
    alternative: ReceivedOffer,
    context: DecideContext,
    now: Date,
  ): NegotiationOfferRecord[] {
    const budget = context.budget;
    if (!budget) return [];
    for (let nodes = alternative.request.nodeCount - 1; nodes >= 1; nodes--) {
      const changed = this.changedWithinTemplate(template, alternative, { nodeCount: nodes });
      if (!changed) continue;
      const [found] = this.deps.plan.slots(changed.request, now, 1, negotiation.agreementId);
      if (!found) continue;
      const moved = this.deps.documents.withSlot(changed, found.slot, found.completion);
      const price = this.price(negotiation, moved.request, found.slot);
      if (price.amount > budget.available + 1e-9) continue;
      const note =
        `${alternativeLabel(alternative)}counter-offer (what the budget buys): ${nodes} nodes for ` +
        `${price.amount.toFixed(2)} ${price.currency} of the ${budget.available.toFixed(2)} ` +
        `${budget.currency} account "${budget.account}" has, from ${isoTime(found.slot.start)} to ` +
        `${isoTime(found.slot.end)}; solicit it to hold the capacity`;
      return [
        this.counterOffer(negotiation, record, template, moved, 'Advisory', now, { price, note, slot: found.slot }),
      ];
    }
    return [];
  }

  /**
   * The plan found a booking but it breaks the offer's own objectives (more nodes promised
   * than booked, a completion or start too early): the same terms with the objectives the
   * booking keeps, as an Advisory counter-offer.
   */
  private objectivesKept(
    negotiation: Negotiation,
    record: NegotiationOfferRecord,
    template: AgreementTemplate,
    keepable: Array<{ alternative: ReceivedOffer; booking: Allocation }>,
    now: Date,
  ): NegotiationOfferRecord[] {
    const out: NegotiationOfferRecord[] = [];
    for (const { alternative, booking } of keepable) {
      const span = booking.promised ?? booking;
      const changed = this.changedWithinTemplate(template, alternative, {
        objectives: { nodesAvailable: booking.nodes, completedBy: span.end, startBy: span.start },
      });
      if (!changed) continue;
      const price = this.price(negotiation, changed.request, booking);
      const note =
        `${alternativeLabel(alternative)}counter-offer (objectives the plan keeps): ` +
        `${booking.nodes} nodes from ${isoTime(span.start)} to ${isoTime(span.end)}; solicit it to hold the capacity`;
      out.push(
        this.counterOffer(negotiation, record, template, changed, 'Advisory', now, { price, note, slot: booking }),
      );
    }
    return out;
  }

  /** The alternatives that meet the template and can be negotiated: an interactive job starts at once, so it is not. */
  private negotiable(
    template: AgreementTemplate,
    offer: ReceivedOffer,
  ): { candidates: ReceivedOffer[]; reasons: string[] } {
    const { candidates, reasons } = alternativesMeetingConstraints(this.deps.templates, template, offer);
    for (const c of candidates) refuseBidWithTimePromise(c.request);
    const interactive = candidates.filter((c) => c.request.interactive);
    for (const c of interactive)
      reasons.push(
        `${alternativeLabel(c)}sla:Interactive starts the job within seconds or not at all, so it is not ` +
          `negotiated or held: send it with CreateAgreement`,
      );
    return { candidates: candidates.filter((c) => !c.request.interactive), reasons };
  }

  /**
   * What the scheduler could serve instead of each alternative (Hovestadt 2006, section 2.3.3:
   * the responder's counter-offers), as Advisory offers with their terms rewritten, their
   * slot and price; nothing is held. Changed terms that break the template's creation
   * constraints, or that the offer's terms cannot express, are not offered.
   */
  private counterProposals(
    negotiation: Negotiation,
    record: NegotiationOfferRecord,
    template: AgreementTemplate,
    candidates: ReceivedOffer[],
    now: Date,
  ): NegotiationOfferRecord[] {
    const out: NegotiationOfferRecord[] = [];
    for (const alternative of candidates) {
      if (alternative.request.useReservation !== undefined) continue;
      for (const proposal of this.deps.plan.alternatives(alternative.request, now, negotiation.agreementId)) {
        const changed = this.changedWithinTemplate(template, alternative, proposal.changes);
        if (!changed) continue;
        const price = this.price(negotiation, changed.request, proposal.slot);
        const note =
          `${alternativeLabel(alternative)}counter-offer (${counterOfferKind[proposal.kind]}): ` +
          `${proposal.description}; ` +
          `${proposal.slot.nodes} nodes from ${isoTime(proposal.slot.start)} to ` +
          `${isoTime(proposal.slot.end)}; solicit it to hold the capacity`;
        out.push(
          this.counterOffer(negotiation, record, template, changed, 'Advisory', now, {
            price,
            note,
            slot: proposal.slot,
          }),
        );
      }
    }
    return out;
  }
}
