import { randomUUID } from 'node:crypto';
import type {
  AgreementReference,
  NegotiationOfferInfo,
  NegotiationReference,
  WsagClient,
} from '../client/wsag-client.js';
import { acceptingOffer } from '../xml/accepting-offer.js';
import { CliError } from './errors.js';

/** What `wsag negotiate` and `wsag coallocate` share: offer ids, slots, finding and accepting offers. */

/** A fresh OfferId for an offer we send (the server refuses an id used before in the negotiation). */
export function newOfferId(): string {
  return `i-${randomUUID().slice(0, 8)}`;
}

export interface Slot {
  nodes?: number;
  start?: string;
  end?: string;
}

/** The capacity a counter-offer is about (its srv:Slot), for reservation windows and jobs alike. */
export function slotOf(offer: NegotiationOfferInfo): Slot {
  return offer.slot ?? {};
}

/** The Negotiation port's EPR for a negotiation id at `baseUrl`. */
export function negotiationAt(baseUrl: string, negotiationId: string): NegotiationReference {
  return { address: `${baseUrl}/wsag/Negotiation`, negotiationId };
}

/** The offer `offerId` of the negotiation's history, or a message listing what is there. */
export async function findNegotiationOffer(
  client: WsagClient,
  negotiationId: string,
  offerId: string,
): Promise<NegotiationOfferInfo> {
  const offers = await client.negotiationOffers(negotiationId);
  const found = offers.find((o) => o.offerId === offerId);
  if (found) return found;
  const known =
    offers
      .filter((o) => o.offerId)
      .map((o) => `${o.offerId} (${o.state})`)
      .join(', ') || 'none yet';
  throw new CliError(`negotiation ${negotiationId} has no offer "${offerId}"; its offers: ${known}`);
}

/** Accepting a committing offer: CreateAgreement with the offer's terms and a NegotiationExtension naming it. */
export async function acceptCounterOffer(
  client: WsagClient,
  negotiation: NegotiationReference,
  offer: NegotiationOfferInfo,
): Promise<AgreementReference> {
  if (offer.creator !== 'NegotiationResponder' || offer.state !== 'Acceptable') {
    const from = offer.creator === 'NegotiationResponder' ? 'the provider' : 'you';
    const advice =
      offer.state === 'Advisory'
        ? `; solicit it first: wsag negotiate --negotiation ${negotiation.negotiationId} --solicit --counter ` +
          `${offer.offerId}`
        : '';
    throw new CliError(
      `offer ${offer.offerId} (${offer.state}, from ${from}) cannot be accepted: only the provider's ` +
        `Acceptable (committing) offers can${advice}`,
    );
  }
  return client.createAgreement(acceptingOffer(offer.xml, { negotiation }));
}
