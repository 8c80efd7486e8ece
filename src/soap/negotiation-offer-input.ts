import type { XmlElement } from 'libxml2-wasm';
import { InvalidTerms } from '../domain/errors.js';
import { maxAlternatives } from '../xml/alternatives.js';
import { ns } from '../xml/namespaces.js';
import { readNegotiationOffer, type XmlNegotiationOffer } from '../xml/negotiation-reader.js';
import { SchemaSet } from '../xml/schema-set.js';
import { requiredChildren } from './body-children.js';
import type { SoapRequest } from './envelope.js';

/** The Body elements that carry negotiation offers. */
export type NegotiationOfferInput = 'NegotiateInput' | 'AdvertiseInput';

/** Reads the offers of a Negotiate or Advertise request: on this thread, or on another (src/workers). */
export interface NegotiationOfferReader {
  readNegotiationOffers(request: SoapRequest, input: NegotiationOfferInput): Promise<XmlNegotiationOffer[]>;
}

/**
 * What one Negotiate or Advertise may ask the planner to weigh (docs/security.md): offers, and their alternatives
 * together.
 */
export const maxOffersPerMessage = 16;

/**
 * The Body validated against our schemas, then its offers read: at most maxOffersPerMessage, and maxAlternatives
 * together.
 */
export function readNegotiationOffersInput(body: XmlElement, input: NegotiationOfferInput): XmlNegotiationOffer[] {
  const where = `wsag-neg:${input}`;
  SchemaSet.get().validate(body, where);
  const elements = requiredChildren(body, ns.wsagNeg, 'wsag-neg:NegotiationOffer');
  if (elements.length > maxOffersPerMessage) {
    throw new InvalidTerms(
      `${where} holds ${elements.length} wsag-neg:NegotiationOffer elements; at most ${maxOffersPerMessage} ` +
        `are considered per message: send the rest in another round`,
    );
  }
  const offers = elements.map(readNegotiationOffer);
  const alternatives = offers.reduce((sum, o) => sum + o.offer.alternativeCount, 0);
  if (alternatives > maxAlternatives) {
    throw new InvalidTerms(
      `${where}: its offers combine into ${alternatives} alternatives; at most ${maxAlternatives} are ` +
        `considered per message`,
    );
  }
  return offers;
}

/** Reads negotiation offers on the calling thread, from the envelope already parsed. */
export const sameThreadNegotiationOfferReader: NegotiationOfferReader = {
  async readNegotiationOffers(request, input) {
    return readNegotiationOffersInput(request.body, input);
  },
};
