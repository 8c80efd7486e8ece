import type { Allocation } from '../domain/allocation.js';
import type {
  CounterOfferDetails,
  NegotiationDocumentWriter,
  NegotiationRequest,
  ReceivedOffer,
  TermChanges,
} from '../engine/ports.js';
import { contextXml } from './agreement-context.js';
import { xsDateTime } from './datetime.js';
import { escapeXml } from './escape.js';
import { c14n } from './item-constraint.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';
import { XmlReceivedOffer } from './offer-reader.js';
import { offerInSlot, offerWithTerms } from './offer-slot.js';
import { chosenAlternativeXml, noteXml, quoteXml, slotXml } from './srv-elements.js';
import { childInOrder, setText } from './xml-edit.js';

export { historyEntry, negotiableTemplate, negotiationPropertiesDocument } from './negotiation-properties.js';

/** wsag-neg:NegotiationContextType's sequence. */
const contextOrder = [
  'NegotiationType',
  'ExpirationTime',
  'NegotiationInitiator',
  'NegotiationResponder',
  'AgreementResponder',
  'AgreementFactoryEPR',
];

/**
 * The negotiation documents the server writes (GFD.193). A counter-offer is written from
 * the offer's parts as text that parses on its own (every namespace it uses declared), not
 * parsed again to make it canonical: that was a sixth of a Negotiate's event-loop time.
 */
export class XmlNegotiationWriter implements NegotiationDocumentWriter {
  withSlot(offer: ReceivedOffer, slot: Allocation, completion?: Date): XmlReceivedOffer {
    return offerInSlot(asXml(offer), slot, completion);
  }

  withTerms(offer: ReceivedOffer, changes: TermChanges): XmlReceivedOffer {
    return offerWithTerms(asXml(offer), changes);
  }

  /**
   * The counter-offer: the offer's Name and Terms, its Context completed as an agreement's
   * would be (accepting it yields the same agreement), then the offer context. State holds
   * at most one extension element (InnerNegotiationStateType), so the note goes there and
   * the quote and the chosen alternative go to the offer context's open end.
   * NegotiationConstraints is required by the schema; the server states none.
   */
  counterOffer(offer: ReceivedOffer, details: CounterOfferDetails): string {
    const xml = asXml(offer);
    const neg = (name: string, content: string): string => `<wsag-neg:${name}>${content}</wsag-neg:${name}>`;
    const alternative = details.alternative ?? xml.alternative;
    const offerContext =
      neg('CounterOfferTo', escapeXml(details.counterOfferTo)) +
      (details.expirationTime ? neg('ExpirationTime', xsDateTime(details.expirationTime)) : '') +
      neg('Creator', 'NegotiationResponder') +
      neg('State', neg(details.state, details.note !== undefined ? noteXml(details.note) : '')) +
      (quoteXml(details.price, details.fee) ?? '') +
      (details.slot ? slotXml(details.slot) : '') +
      (alternative ? chosenAlternativeXml(alternative) : '');
    return (
      `<wsag-neg:NegotiationCounterOffer xmlns:wsag-neg="${ns.wsagNeg}" xmlns:wsag="${ns.wsag}" ` +
      `wsag-neg:OfferId="${escapeXml(details.offerId)}">` +
      (xml.name === undefined ? '' : `<wsag:Name>${escapeXml(xml.name)}</wsag:Name>`) +
      contextXml(xml, details) +
      xml.termsSource +
      neg('NegotiationOfferContext', offerContext) +
      '<wsag-neg:NegotiationConstraints></wsag-neg:NegotiationConstraints>' +
      '</wsag-neg:NegotiationCounterOffer>'
    );
  }

  /**
   * The received NegotiationContext with the server's view filled in: its lifetime, and both
   * negotiating parties. The authenticated initiator replaces whatever the request claimed.
   */
  completeContext(
    request: NegotiationRequest,
    details: { initiator: string; responder: string; expiresAt: Date },
  ): string {
    return withXml(request.document, 'wsag-neg:NegotiationContext', (doc) => {
      const root = doc.root;
      setText(childInOrder(root, 'ExpirationTime', contextOrder), xsDateTime(details.expiresAt));
      setText(childInOrder(root, 'NegotiationInitiator', contextOrder), details.initiator);
      setText(childInOrder(root, 'NegotiationResponder', contextOrder), details.responder);
      return c14n(root);
    });
  }
}

function asXml(offer: ReceivedOffer): XmlReceivedOffer {
  if (!(offer instanceof XmlReceivedOffer)) throw new Error('negotiation documents are written from XML offers');
  return offer;
}
