import type { Allocation } from './allocation.js';
import type { ServiceRequest } from './terms.js';

/**
 * WS-Agreement Negotiation (GFD.193) as the server keeps it (PROTOCOL.md "The negotiation
 * the research describes"). Offers are kept as exchanged; the domain view of each offer's
 * terms sits beside it so the engine never reads XML.
 */

/** GFD.193 NegotiationOfferContext/State. */
export type OfferState = 'Advisory' | 'Solicited' | 'Acceptable' | 'Rejected';
export const offerStates: readonly OfferState[] = ['Advisory', 'Solicited', 'Acceptable', 'Rejected'];

export type OfferCreator = 'NegotiationInitiator' | 'NegotiationResponder';

/**
 * Open: offers may be exchanged. Concluded: an Acceptable offer became an agreement.
 * Terminated: the initiator ended it. Closed: a site limit (rounds, duration) ended it.
 */
export type NegotiationState = 'Open' | 'Concluded' | 'Terminated' | 'Closed';
export const negotiationStates: readonly NegotiationState[] = ['Open', 'Concluded', 'Terminated', 'Closed'];

/**
 * A preparatory reservation: capacity held for an Acceptable counter-offer until it
 * expires. Held -> Confirmed (accepted in time) | Released (rejected, negotiation
 * terminated) | Expired (not confirmed in time; the fee is charged).
 */
export type HoldState = 'Held' | 'Confirmed' | 'Released' | 'Expired';

export interface Money {
  amount: number;
  currency: string;
}

/** Replaced, never changed in place (`offer.hold = { ...hold, state }`): snapshots share it. */
export interface Hold {
  readonly allocation: Allocation;
  readonly expiresAt: Date;
  readonly state: HoldState;
  /** The preparatory fee agreed with the committing offer. */
  readonly fee: Money;
  /** What was charged when the hold ended unconfirmed (absent while Held or once Confirmed). */
  readonly charged?: Money;
  readonly endedAt?: Date;
}

/** Which of an offer's alternatives (ExactlyOne / OneOrMore) an answer is about. */
export interface AlternativeChoice {
  /** 1-based position in document order. */
  index: number;
  count: number;
  /** The service description terms of the alternative, by name. */
  terms: string[];
}

export interface NegotiationOfferRecord {
  offerId: string;
  /** The OfferId (or TemplateId / agreement id for a first offer) this offer answers. */
  counterOfferTo: string;
  creator: OfferCreator;
  state: OfferState;
  expirationTime?: Date;
  createdAt: Date;
  /**
   * The offer element as exchanged (wsag-neg:NegotiationOffer or NegotiationCounterOffer); never changed once stored.
   */
  readonly document: string;
  request: ServiceRequest;
  /** The template the offer's Context names; counter-offers keep it. */
  templateId?: string;
  /** Price of the offered terms as quoted (responder offers), and the price curve's factor in it (absent: 1). */
  price?: Money;
  priceFactor?: number;
  hold?: Hold;
  alternative?: AlternativeChoice;
  /** Why the responder rejected an offer, or what an advisory slot is. */
  note?: string;
}

export interface Negotiation {
  id: string;
  initiator: string;
  type: 'Negotiation' | 'Renegotiation';
  /** The agreement being renegotiated. */
  agreementId?: string;
  state: NegotiationState;
  /** Negotiate calls answered so far. */
  rounds: number;
  /** The wsag-neg:NegotiationContext element, completed by the server. */
  context: string;
  offers: NegotiationOfferRecord[];
  createdAt: Date;
  updatedAt: Date;
  /** After this instant no more offers are answered (site maximum duration or the initiator's ExpirationTime). */
  expiresAt: Date;
  /** Set when Concluded: the agreement an Acceptable offer became. */
  agreementCreated?: string;
  /** Why the negotiation is Closed. */
  closedBecause?: string;
}

/** Key under which a hold books capacity in the plan (agreements book under their id). */
export function holdKey(offerId: string): string {
  return `hold:${offerId}`;
}

/** The offer id of a hold's plan key; undefined for an agreement's key. */
export function offerIdOfHoldKey(key: string): string | undefined {
  return key.startsWith('hold:') ? key.slice('hold:'.length) : undefined;
}

/**
 * A copy to compare against or hand on while the negotiation changes: its fields and each
 * offer's are copied; what is replaced rather than changed (holds, requests, documents) is
 * shared. Far cheaper than a deep copy of every offer document.
 */
export function snapshotOf(negotiation: Negotiation): Negotiation {
  return { ...negotiation, offers: negotiation.offers.map((offer) => ({ ...offer })) };
}

export function findOffer(negotiation: Negotiation, offerId: string): NegotiationOfferRecord | undefined {
  return negotiation.offers.find((o) => o.offerId === offerId);
}

export function liveHolds(negotiation: Negotiation): NegotiationOfferRecord[] {
  return negotiation.offers.filter((o) => o.hold?.state === 'Held');
}

/** When the first of the negotiation's holds in state Held expires; undefined without one. */
export function firstHoldExpiry(negotiation: Negotiation): Date | undefined {
  let first: Date | undefined;
  for (const offer of negotiation.offers) {
    if (offer.hold?.state === 'Held' && (first === undefined || offer.hold.expiresAt < first))
      first = offer.hold.expiresAt;
  }
  return first;
}

/** Offer ids the server writes are `<negotiation id>-<n>`, so an offer id alone finds its negotiation. */
export function nextOfferId(negotiation: Negotiation): string {
  let n = negotiation.offers.length + 1;
  while (findOffer(negotiation, `${negotiation.id}-${n}`)) n++;
  return `${negotiation.id}-${n}`;
}

/** The negotiation an offer id the server wrote belongs to. */
export function negotiationIdOf(offerId: string): string {
  const dash = offerId.lastIndexOf('-');
  return dash > 0 ? offerId.slice(0, dash) : offerId;
}
