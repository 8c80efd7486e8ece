import type { Allocation } from '../domain/allocation.js';
import type { AlternativeChoice, Hold, Money } from '../domain/negotiation.js';
import { xsDateTime } from './datetime.js';
import { escapeXml } from './escape.js';
import { ns } from './namespaces.js';

/**
 * The server's own extension elements (schemas/wsag-server.xsd), as XML text. Each declares
 * the srv namespace itself, so it can be placed in any document.
 */
const decl = `xmlns:srv="${ns.srv}"`;

function element(name: string, content: string, attributes = ''): string {
  return `<srv:${name}${attributes}>${content}</srv:${name}>`;
}

/** xs:decimal, never an exponent; prices are in cents. */
function money(name: string, value: Money): string {
  return element(name, value.amount.toFixed(2), ` Currency="${escapeXml(value.currency)}"`);
}

export function noteXml(note: string): string {
  return `<srv:Note ${decl}>${escapeXml(note)}</srv:Note>`;
}

/** undefined when there is nothing to quote. */
export function quoteXml(price: Money | undefined, fee: Money | undefined): string | undefined {
  if (!price && !fee) return undefined;
  return (
    `<srv:Quote ${decl}>${price ? money('Price', price) : ''}${fee ? money('PreparatoryFee', fee) : ''}` +
    `</srv:Quote>`
  );
}

export function chosenAlternativeXml(choice: AlternativeChoice): string {
  return (
    `<srv:ChosenAlternative ${decl} Count="${choice.count}" Index="${choice.index}">` +
    choice.terms.map((t) => element('Term', escapeXml(t))).join('') +
    '</srv:ChosenAlternative>'
  );
}

export function acceptedOfferXml(accepts: { offerId: string; negotiationId?: string }): string {
  return (
    `<srv:AcceptedOffer ${decl}>` +
    (accepts.negotiationId !== undefined ? element('NegotiationId', escapeXml(accepts.negotiationId)) : '') +
    element('OfferId', escapeXml(accepts.offerId)) +
    '</srv:AcceptedOffer>'
  );
}

/** The slot as promised: a window's booking adds the nodes' preparation and release, which are the provider's. */
export function slotXml(slot: Allocation): string {
  const { start, end } = slot.promised ?? slot;
  return (
    `<srv:Slot ${decl} Nodes="${slot.nodes}">${element('Start', xsDateTime(start))}` +
    `${element('End', xsDateTime(end, 'up'))}</srv:Slot>`
  );
}

export function holdXml(hold: Hold): string {
  return (
    `<srv:Hold ${decl}>` +
    element('State', hold.state) +
    element('ExpiresAt', xsDateTime(hold.expiresAt)) +
    money('Fee', hold.fee) +
    (hold.charged ? money('Charged', hold.charged) : '') +
    (hold.endedAt ? element('EndedAt', xsDateTime(hold.endedAt)) : '') +
    '</srv:Hold>'
  );
}
