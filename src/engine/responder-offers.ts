import { InvalidTerms } from '../domain/errors.js';
import { findOffer, holdKey, nextOfferId, type Negotiation, type NegotiationOfferRecord, type OfferState } from '../domain/negotiation.js';
import { preparatoryFee, regularPrice } from '../domain/pricing.js';
import type { AgreementTemplate } from '../domain/template.js';
import { addSeconds, ceilToSecond, isoTime } from '../domain/time.js';
import { alternativeLabel, alternativesMeetingConstraints } from './alternatives.js';
import type { CapacityPlan } from './capacity-plan.js';
import type { NegotiationSettings } from './negotiation-service.js';
import type { CounterOfferDetails, NegotiationDocumentWriter, ReceivedNegotiationOffer, ReceivedOffer, TemplateCatalog } from './ports.js';
import { templateOf } from './template-resolution.js';

/**
 * The responder's side of a round: Advisory counter-offers with start slots and prices
 * for a non-binding request, and for a Solicited offer either an Acceptable counter-offer
 * that holds capacity in the plan (a preparatory reservation) or a Rejected one saying why.
 * Counter-offers are appended to the negotiation; storing it is the caller's job.
 */
export class ResponderOffers {
  constructor(
    private readonly deps: {
      templates: TemplateCatalog;
      documents: NegotiationDocumentWriter;
      plan: CapacityPlan;
      settings: NegotiationSettings;
    },
  ) {}

  /** Advisory: start slots for each alternative that meets the template, each with its price; nothing held. */
  advise(negotiation: Negotiation, incoming: ReceivedNegotiationOffer, record: NegotiationOfferRecord, now: Date): NegotiationOfferRecord[] {
    const template = this.templateFor(negotiation, incoming);
    const { candidates, reasons } = alternativesMeetingConstraints(this.deps.templates, template, incoming.offer);
    const answers: NegotiationOfferRecord[] = [];
    for (const alternative of candidates) {
      const slots = this.deps.plan.slots(alternative.request, now, this.deps.settings.advisorySlots, negotiation.agreementId);
      if (slots.length === 0) reasons.push(`${alternativeLabel(alternative)}no start slot: ${alternative.request.nodeCount} nodes are never free for the requested time`);
      slots.forEach((slot, i) => {
        const moved = this.deps.documents.withSlot(alternative, slot);
        const price = regularPrice(moved.request, slot, this.deps.settings.prices);
        const late = moved.request.deadline && alternative.request.deadline && moved.request.deadline > alternative.request.deadline;
        const note =
          `${alternativeLabel(alternative)}start slot ${i + 1} of ${slots.length}: ${slot.nodes} nodes from ${isoTime(slot.start)} to ${isoTime(slot.end)}` +
          (late ? ` (later than the requested deadline ${isoTime(alternative.request.deadline as Date)})` : '');
        answers.push(this.counterOffer(negotiation, record, template, moved, 'Advisory', now, { price, note, slot }));
      });
    }
    if (answers.length === 0) {
      answers.push(this.counterOffer(negotiation, record, template, incoming.offer, 'Rejected', now, { note: reasons.join('; ') }));
    }
    return answers;
  }

  /** Solicited: the first alternative the plan can serve gets an Acceptable counter-offer with a hold; otherwise Rejected, saying why. */
  decide(negotiation: Negotiation, incoming: ReceivedNegotiationOffer, record: NegotiationOfferRecord, now: Date): NegotiationOfferRecord {
    const template = this.templateFor(negotiation, incoming);
    const { candidates, reasons } = alternativesMeetingConstraints(this.deps.templates, template, incoming.offer);
    for (const alternative of candidates) {
      if (alternative.request.useReservation !== undefined) {
        reasons.push(`${alternativeLabel(alternative)}using a reservation is not negotiated: send CreateAgreement with sla:UseReservation inside the reserved window`);
        continue;
      }
      const offerId = nextOfferId(negotiation);
      const decision = this.deps.plan.admit(holdKey(offerId), alternative.request, now, negotiation.agreementId);
      if (!decision.accepted) {
        reasons.push(`${alternativeLabel(alternative)}${decision.reason}`);
        continue;
      }
      const prices = this.deps.settings.prices;
      const price = regularPrice(alternative.request, decision.allocation, prices);
      const fee = decision.allocation ? preparatoryFee(price, prices) : { amount: 0, currency: prices.currency };
      const expiresAt = ceilToSecond(addSeconds(now, this.deps.settings.holdSeconds));
      const answer = this.counterOffer(negotiation, record, template, alternative, 'Acceptable', now, {
        offerId, price, fee, expirationTime: expiresAt,
        ...(decision.allocation ? { slot: decision.allocation } : {}),
        note: `committing offer: held until ${isoTime(expiresAt)}; accept it with CreateAgreement before then`,
      });
      if (decision.allocation) answer.hold = { allocation: decision.allocation, expiresAt, state: 'Held', fee };
      return answer;
    }
    const hint = this.earliestSlotHint(negotiation, candidates, now);
    return this.counterOffer(negotiation, record, template, incoming.offer, 'Rejected', now, { note: reasons.join('; ') + hint });
  }

  private earliestSlotHint(negotiation: Negotiation, candidates: ReceivedOffer[], now: Date): string {
    for (const alternative of candidates) {
      const [slot] = this.deps.plan.slots(alternative.request, now, 1, negotiation.agreementId);
      if (slot) return `; earliest feasible start for ${slot.nodes} nodes: ${isoTime(slot.start)} (ends ${isoTime(slot.end)})`;
    }
    return '';
  }

  private counterOffer(
    negotiation: Negotiation,
    answering: NegotiationOfferRecord,
    template: AgreementTemplate,
    offer: ReceivedOffer,
    state: OfferState,
    now: Date,
    extra: Partial<Pick<CounterOfferDetails, 'offerId' | 'price' | 'fee' | 'expirationTime' | 'note' | 'slot'>>,
  ): NegotiationOfferRecord {
    const offerId = extra.offerId ?? nextOfferId(negotiation);
    const details: CounterOfferDetails = {
      offerId,
      counterOfferTo: answering.offerId,
      state,
      initiator: negotiation.initiator,
      responder: this.deps.settings.providerName,
      templateId: template.id,
      templateName: template.name,
      ...(offer.alternative ? { alternative: offer.alternative } : {}),
      ...extra,
    };
    const record: NegotiationOfferRecord = {
      offerId,
      counterOfferTo: answering.offerId,
      creator: 'NegotiationResponder',
      state,
      ...(extra.expirationTime ? { expirationTime: extra.expirationTime } : {}),
      createdAt: now,
      document: this.deps.documents.counterOffer(offer, details),
      request: offer.request,
      templateId: template.id,
      ...(extra.price ? { price: extra.price } : {}),
      ...(offer.alternative ? { alternative: offer.alternative } : {}),
      ...(extra.note ? { note: extra.note } : {}),
    };
    negotiation.offers.push(record);
    return record;
  }

  /** The offer's template; a renegotiation keeps the agreement's, counter-offers keep the one they answer. */
  private templateFor(negotiation: Negotiation, incoming: ReceivedNegotiationOffer): AgreementTemplate {
    const template = templateOf(this.deps.templates, incoming.offer);
    const answered = findOffer(negotiation, incoming.counterOfferTo);
    const kept = answered?.templateId ?? (this.deps.templates.find({ id: incoming.counterOfferTo }) ? incoming.counterOfferTo : undefined);
    if (kept !== undefined && kept !== template.id) {
      throw new InvalidTerms(`the offer names template "${template.id}" but counters an offer of template "${kept}": counter-offers keep the template`);
    }
    return template;
  }

}
