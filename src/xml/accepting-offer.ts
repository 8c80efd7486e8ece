import type { XmlElement } from 'libxml2-wasm';
import { escapeXml } from './escape.js';
import { standaloneSource } from './canonical.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';
import { canonical } from './xml-edit.js';
import { all, one, qname, stringAt } from './xpath.js';

/**
 * The initiator's side of WS-Agreement Negotiation (GFD.193): the offers a client sends.
 * Both functions copy Name, Context and Terms as XML that stands on its own (every in-scope
 * namespace declared on it), so the terms keep their meaning wherever they land.
 */

export type InitiatorOfferState = 'Advisory' | 'Solicited' | 'Acceptable' | 'Rejected';

/** Where a negotiation lives: its EPR's address and srv:NegotiationId. */
export interface NegotiationEpr {
  address: string;
  negotiationId: string;
}

interface OfferParts {
  offerId?: string;
  name?: string;
  context: string;
  terms: string;
}

/**
 * The wsag:AgreementOffer that accepts a committing (Acceptable) counter-offer: its Name,
 * Context and Terms unchanged, plus a NegotiationExtension in the Context naming the
 * counter-offer (CounterOfferTo = its OfferId). The server-written srv:* parts of the
 * Context may stay: the server ignores them when reading an offer. With `negotiation`,
 * the extension also carries the ResponderNegotiationEPR, so the server need not derive
 * the negotiation from the offer id. The counter-offer may be given as the element of an
 * answer already parsed (no second parse); that element then loses any negotiation
 * extension its Context carries. The offer is assembled from those parts as written out
 * and not parsed again to make it canonical: the server reads it either way.
 */
export function acceptingOffer(
  counterOffer: string | XmlElement,
  options: { negotiation?: NegotiationEpr } = {},
): string {
  const parts =
    typeof counterOffer === 'string'
      ? withXml(counterOffer, 'offer', (doc) => offerParts(doc.root))
      : offerParts(counterOffer);
  if (!parts.offerId) throw new Error('the counter-offer has no wsag-neg:OfferId: there is nothing to accept');
  const epr = options.negotiation
    ? `<wsag-neg:ResponderNegotiationEPR xmlns:wsa="${ns.wsa}" xmlns:srv="${ns.srv}">` +
      `<wsa:Address>${escapeXml(options.negotiation.address)}</wsa:Address>` +
      `<wsa:ReferenceParameters><srv:NegotiationId>${escapeXml(options.negotiation.negotiationId)}` +
      `</srv:NegotiationId></wsa:ReferenceParameters>` +
      '</wsag-neg:ResponderNegotiationEPR>'
    : '';
  const extension =
    `<wsag-neg:NegotiationExtension xmlns:wsag-neg="${ns.wsagNeg}">${epr}` +
    offerContext({ counterOfferTo: parts.offerId, state: 'Acceptable' }) +
    '</wsag-neg:NegotiationExtension>';
  const closing = parts.context.lastIndexOf('</');
  const context = parts.context.slice(0, closing) + extension + parts.context.slice(closing);
  return (
    `<wsag:AgreementOffer xmlns:wsag="${ns.wsag}">${parts.name ?? ''}${context}${parts.terms}` +
    `</wsag:AgreementOffer>`
  );
}

/**
 * A wsag-neg:NegotiationOffer from the initiator, made of an agreement offer (as
 * offerFromTemplate writes it) or of another negotiation offer (to counter it with its
 * own terms): Name, Context, Terms, the NegotiationOfferContext, and empty
 * NegotiationConstraints. The first offer of a negotiation counters the TemplateId.
 */
export function negotiationOffer(
  offerXml: string,
  options: { offerId?: string; counterOfferTo: string; state: InitiatorOfferState; expirationTime?: string },
): string {
  const parts = withXml(offerXml, 'offer', (doc) => offerParts(doc.root));
  const offerId = options.offerId === undefined ? '' : ` wsag-neg:OfferId="${escapeXml(options.offerId)}"`;
  return canonical(
    `<wsag-neg:NegotiationOffer xmlns:wsag-neg="${ns.wsagNeg}" xmlns:wsag="${ns.wsag}"${offerId}>` +
      (parts.name ?? '') +
      parts.context +
      parts.terms +
      offerContext(options) +
      '<wsag-neg:NegotiationConstraints></wsag-neg:NegotiationConstraints>' +
      '</wsag-neg:NegotiationOffer>',
    'negotiation offer',
  );
}

/** wsag-neg:NegotiationOfferContext of an initiator's offer; the wsag-neg prefix is declared by the caller. */
function offerContext(options: {
  counterOfferTo: string;
  state: InitiatorOfferState;
  expirationTime?: string;
}): string {
  const neg = (name: string, content: string): string => `<wsag-neg:${name}>${content}</wsag-neg:${name}>`;
  return neg(
    'NegotiationOfferContext',
    neg('CounterOfferTo', escapeXml(options.counterOfferTo)) +
      (options.expirationTime ? neg('ExpirationTime', escapeXml(options.expirationTime)) : '') +
      neg('Creator', 'NegotiationInitiator') +
      neg('State', `<wsag-neg:${options.state}></wsag-neg:${options.state}>`),
  );
}

/**
 * Name, Context and Terms of an agreement offer or a negotiation (counter-)offer. A
 * negotiation extension already in the Context is dropped: it belongs to the offer it
 * came with (each offer states its own negotiation context).
 */
function offerParts(root: XmlElement): OfferParts {
  const known =
    (root.namespaceUri === ns.wsag && root.name === 'AgreementOffer') ||
    (root.namespaceUri === ns.wsagNeg && (root.name === 'NegotiationOffer' || root.name === 'NegotiationCounterOffer'));
  if (!known)
    throw new Error(
      `expected wsag:AgreementOffer, wsag-neg:NegotiationOffer or wsag-neg:NegotiationCounterOffer, found ` +
        `${qname(root)}`,
    );
  const context = one(root, 'wsag:Context');
  const terms = one(root, 'wsag:Terms');
  if (!context || !terms) throw new Error(`${qname(root)} needs wsag:Context and wsag:Terms`);
  for (const old of all(context, 'wsag-neg:NegotiationExtension | wsag-neg:RenegotiationExtension')) old.remove();
  const name = one(root, 'wsag:Name');
  const offerId = stringAt(root, '@wsag-neg:OfferId');
  return {
    ...(offerId ? { offerId } : {}),
    ...(name ? { name: standaloneSource(name) } : {}),
    context: withEndTag(standaloneSource(context), qname(context)),
    terms: standaloneSource(terms),
  };
}

/**
 * An element written out on its own with an end tag, when it was written empty (`<x/>`), so content can go before it.
 */
function withEndTag(source: string, name: string): string {
  return source.endsWith('/>') ? `${source.slice(0, -2)}></${name}>` : source;
}
