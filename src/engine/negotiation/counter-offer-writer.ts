import type { Allocation } from '../../domain/allocation.js';
import { CreationConstraintViolation, InvalidTerms } from '../../domain/errors.js';
import type { FairUse } from '../fair-use/fair-use.js';
import {
  findOffer,
  nextOfferId,
  type Money,
  type Negotiation,
  type NegotiationOfferRecord,
  type OfferState,
} from '../../domain/negotiation.js';
import type { AgreementTemplate } from '../../domain/template.js';
import { isoTime } from '../../domain/time.js';
import type { PlanningService } from '../planning/planning-service.js';
import type {
  CounterOfferDetails,
  NegotiationDocumentWriter,
  ReceivedNegotiationOffer,
  ReceivedOffer,
  TemplateCatalog,
  TermChanges,
} from '../ports.js';
import { quote, type Quote } from '../planning/quote.js';
import { templateOf } from '../agreements/template-resolution.js';
import type { VoUsage } from '../accounting/vo-usage.js';
import type { PriceList } from '../../domain/pricing.js';

export interface NegotiationSettings {
  /** How long an Acceptable counter-offer holds its capacity. */
  holdSeconds: number;
  maxRounds: number;
  maxSeconds: number;
  /** Start slots offered per alternative of an Advisory offer. */
  advisorySlots: number;
  prices: PriceList;
  providerName: string;
}

/**
 * Writing counter-offers: their terms moved within the template, their price and quote, their notes (ResponderOffers
 * decides which).
 */
export abstract class CounterOfferWriter {
  constructor(
    protected readonly deps: {
      templates: TemplateCatalog;
      documents: NegotiationDocumentWriter;
      plan: PlanningService;
      settings: NegotiationSettings;
      /** VO usage SLAs: a hold must keep its VO within its share. */
      shares?: Pick<VoUsage, 'check'>;
      /** Fair use: a hold must keep its party within the site's limits. */
      fairUse?: Pick<FairUse, 'check'>;
    },
  ) {}

  /**
   * The quoted price of `request` on `slot` by the plan's load there, the agreement a renegotiation replaces and `held`
   * left out.
   */
  protected price(negotiation: Negotiation, request: ReceivedOffer['request'], slot: Allocation, held?: string): Money {
    return this.quote(negotiation, request, slot, held).price;
  }

  protected quote(negotiation: Negotiation, request: ReceivedOffer['request'], slot: Allocation, held?: string): Quote {
    const excluding = [held, negotiation.agreementId].filter((key): key is string => key !== undefined);
    return quote(this.deps.plan, this.deps.settings.prices, request, slot, excluding);
  }

  /**
   * The offer with `changes`, if the result still meets the template's creation constraints and the terms can express
   * them.
   */
  protected changedWithinTemplate(
    template: AgreementTemplate,
    offer: ReceivedOffer,
    changes: TermChanges,
  ): ReceivedOffer | undefined {
    try {
      const changed = this.deps.documents.withTerms(offer, changes);
      this.deps.templates.checkCreationConstraints(template, changed);
      return changed;
    } catch (error) {
      if (error instanceof CreationConstraintViolation || error instanceof InvalidTerms) return undefined;
      throw error;
    }
  }

  protected earliestSlotHint(negotiation: Negotiation, candidates: ReceivedOffer[], now: Date): string {
    for (const alternative of candidates) {
      const [found] = this.deps.plan.slots(alternative.request, now, 1, negotiation.agreementId);
      const slot = found?.slot;
      if (slot)
        return `; earliest feasible start for ${slot.nodes} nodes: ${isoTime(slot.start)} (ends ${isoTime(slot.end)})`;
    }
    return '';
  }

  protected counterOffer(
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
  protected templateFor(negotiation: Negotiation, incoming: ReceivedNegotiationOffer): AgreementTemplate {
    const template = templateOf(this.deps.templates, incoming.offer);
    const answered = findOffer(negotiation, incoming.counterOfferTo);
    const kept =
      answered?.templateId ??
      (this.deps.templates.find({ id: incoming.counterOfferTo }) ? incoming.counterOfferTo : undefined);
    if (kept !== undefined && kept !== template.id) {
      throw new InvalidTerms(
        `the offer names template "${template.id}" but counters an offer of template "${kept}": ` +
          `counter-offers keep the template`,
      );
    }
    return template;
  }
}
