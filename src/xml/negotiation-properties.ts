import type { Negotiation, NegotiationOfferRecord } from '../domain/negotiation.js';
import { c14n } from './item-constraint.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';
import { holdXml } from './srv-elements.js';
import { renameRoot, withFragment } from './xml-edit.js';
import { all, one, qname } from './xpath.js';

/** The resource properties of a negotiation (GFD.193 Negotiation port type), as XML. */

/** A served wsag:Template as wsag-neg:NegotiableTemplate: same type, content and TemplateId. */
export function negotiableTemplate(renderedTemplateXml: string): string {
  const ok = withXml(
    renderedTemplateXml,
    'template',
    (doc) =>
      (doc.root.namespaceUri === ns.wsag && doc.root.name === 'Template') ||
      (doc.root.namespaceUri === ns.wsagNeg && doc.root.name === 'NegotiableTemplate'),
  );
  if (!ok) throw new Error('a negotiable template is made from a wsag:Template');
  return renameRoot(renderedTemplateXml, 'template', ns.wsagNeg, 'NegotiableTemplate', 'wsag-neg');
}

/**
 * One offer of the negotiation's history: the exchanged element as wsag-neg:NegotiationOffer
 * (the only offer element NegotiationProperties allows; a counter-offer has the same type),
 * with the current state of its preparatory hold as srv:Hold at the end of its
 * NegotiationOfferContext, which the schema leaves open for extensions. A srv:Hold written
 * earlier is replaced, so the history shows the hold as it is now. An offer sent without an
 * OfferId carries the one the server assigned.
 */
export function historyEntry(record: NegotiationOfferRecord): string {
  // An initiator's offer sent without an OfferId shows the one the server gave it, by which it is countered.
  const renamed = renameRoot(record.document, `offer ${record.offerId}`, ns.wsagNeg, 'NegotiationOffer', 'wsag-neg', {
    local: 'OfferId',
    value: record.offerId,
  });
  return withXml(renamed, `offer ${record.offerId}`, (doc) => {
    const context = one(doc.root, 'wsag-neg:NegotiationOfferContext');
    if (!context)
      throw new Error(`offer ${record.offerId}: ${qname(doc.root)} has no wsag-neg:NegotiationOfferContext`);
    for (const earlier of all(context, 'srv:Hold')) earlier.remove();
    return record.hold ? withFragment(doc.root, context, holdXml(record.hold)) : c14n(doc.root);
  });
}

/** wsag-neg:NegotiationProperties: the completed context, the negotiable templates, the offers in order. */
export function negotiationPropertiesDocument(negotiation: Negotiation, templates: string[]): string {
  return (
    `<wsag-neg:NegotiationProperties xmlns:wsag-neg="${ns.wsagNeg}">` +
    negotiation.context +
    templates.map(negotiableTemplate).join('') +
    negotiation.offers.map(historyEntry).join('') +
    '</wsag-neg:NegotiationProperties>'
  );
}
