import type { XmlElement } from 'libxml2-wasm';
import { InvalidTerms, SchemaViolation } from '../domain/errors.js';
import { offerStates, type OfferCreator, type OfferState } from '../domain/negotiation.js';
import type { NegotiationRequest, ReceivedNegotiationOffer } from '../engine/ports.js';
import { date } from './datetime.js';
import { standaloneSource } from './canonical.js';
import { ns } from './namespaces.js';
import { readEmbeddedOffer, type XmlReceivedOffer } from './offer-reader.js';
import { one, qname, stringAt, text } from './xpath.js';

/**
 * WS-Agreement Negotiation (GFD.193) inputs, read after schema validation. A missing
 * element the schema requires is still reported as SchemaViolation naming it, so a
 * caller that skipped validation gets a useful fault, not a crash.
 */

const roles: readonly OfferCreator[] = ['NegotiationInitiator', 'NegotiationResponder'];

/** A negotiation offer as read here: its offer is the XML reader's, whose plain parts can cross threads. */
export type XmlNegotiationOffer = ReceivedNegotiationOffer & { offer: XmlReceivedOffer };

/** A wsag-neg:NegotiationOffer (Negotiate, Advertise). */
export function readNegotiationOffer(element: XmlElement): XmlNegotiationOffer {
  expectElement(element, ['NegotiationOffer', 'NegotiationCounterOffer']);
  const where = `wsag-neg:${element.name}`;
  const offerContext = required(element, 'wsag-neg:NegotiationOfferContext', where);
  const counterOfferTo = required(
    offerContext,
    'wsag-neg:CounterOfferTo',
    `${where}/wsag-neg:NegotiationOfferContext`,
  ).content.trim();
  if (!counterOfferTo)
    throw new InvalidTerms(
      `${where}/wsag-neg:NegotiationOfferContext/wsag-neg:CounterOfferTo is empty: name the offer or template ` +
        `this offer answers`,
    );
  const creator = role(required(offerContext, 'wsag-neg:Creator', `${where}/wsag-neg:NegotiationOfferContext`));
  const stateEl = one(required(offerContext, 'wsag-neg:State', `${where}/wsag-neg:NegotiationOfferContext`), '*');
  const state = stateEl?.namespaceUri === ns.wsagNeg ? (stateEl.name as OfferState) : undefined;
  if (!state || !offerStates.includes(state)) {
    throw new SchemaViolation(
      `${where}/wsag-neg:NegotiationOfferContext/wsag-neg:State needs one of ` +
        `${offerStates.map((s) => `wsag-neg:${s}`).join(', ')}`,
    );
  }
  const offerId = stringAt(element, '@wsag-neg:OfferId');
  const result: XmlNegotiationOffer = {
    counterOfferTo,
    creator,
    state,
    offer: readOfferPart(element, where),
    document: standaloneSource(element),
  };
  if (offerId) result.offerId = offerId;
  const expires = date(text(offerContext, 'wsag-neg:ExpirationTime'), 'wsag-neg:ExpirationTime');
  if (expires) result.expirationTime = expires;
  return result;
}

/** The offer's Name, Context and Terms, read as a wsag:AgreementOffer of their own (readEmbeddedOffer). */
function readOfferPart(element: XmlElement, where: string): XmlReceivedOffer {
  required(element, 'wsag:Context', where);
  required(element, 'wsag:Terms', where);
  return readEmbeddedOffer(element);
}

/** InitiateNegotiation's wsag-neg:NegotiationContext. */
export function readNegotiationRequest(element: XmlElement): NegotiationRequest {
  expectElement(element, ['NegotiationContext']);
  const where = 'wsag-neg:NegotiationContext';
  const typeEl = one(
    required(element, 'wsag-neg:NegotiationType', where),
    'wsag-neg:Negotiation | wsag-neg:Renegotiation',
  );
  if (!typeEl)
    throw new SchemaViolation(`${where}/wsag-neg:NegotiationType needs wsag-neg:Negotiation or wsag-neg:Renegotiation`);
  const type = typeEl.name as NegotiationRequest['type'];
  const request: NegotiationRequest = {
    type,
    agreementResponder: role(required(element, 'wsag-neg:AgreementResponder', where)),
    document: standaloneSource(element),
  };
  if (type === 'Renegotiation') {
    const path = 'wsag-neg:ResponderAgreementEPR/wsa:ReferenceParameters/srv:AgreementId';
    const agreementId = text(typeEl, path);
    if (!agreementId) {
      throw new InvalidTerms(
        `${where}/wsag-neg:NegotiationType/wsag-neg:Renegotiation/${path} is missing: name the agreement to ` +
          `renegotiate by its EPR`,
      );
    }
    request.agreementId = agreementId;
  }
  const expires = date(text(element, 'wsag-neg:ExpirationTime'), 'wsag-neg:ExpirationTime');
  if (expires) request.expirationTime = expires;
  return request;
}

function expectElement(element: XmlElement, names: string[]): void {
  if (element.namespaceUri !== ns.wsagNeg || !names.includes(element.name)) {
    throw new SchemaViolation(
      `expected ${names.map((n) => `wsag-neg:${n}`).join(' or ')}, found ${qname(element)} ({` +
        `${element.namespaceUri}}${element.name})`,
    );
  }
}

function required(parent: XmlElement, path: string, where: string): XmlElement {
  const found = one(parent, path);
  if (!found) throw new SchemaViolation(`${where} needs ${path}`);
  return found;
}

function role(element: XmlElement): OfferCreator {
  const value = element.content.trim() as OfferCreator;
  if (!roles.includes(value))
    throw new SchemaViolation(
      `wsag-neg:${element.name} must be NegotiationInitiator or NegotiationResponder, not "${value}"`,
    );
  return value;
}
