import type { XmlElement } from 'libxml2-wasm';
import type { Allocation } from '../domain/allocation.js';
import { InvalidTerms } from '../domain/errors.js';
import { date, xsDateTime } from './datetime.js';
import { c14n } from './item-constraint.js';
import { withXml } from './libxml.js';
import { readOffer, type XmlReceivedOffer } from './offer-reader.js';
import { childInOrder, setText } from './xml-edit.js';
import { all } from './xpath.js';

/** sla:ServiceLevelType's sequence (schemas/sla-terms.xsd): inserted elements keep the document valid. */
const serviceLevelOrder = [
  'RuntimeEstimate', 'EarliestStart', 'Deadline', 'RequestKind', 'GuaranteeLevel', 'CheckpointFrequency',
  'MaxCoveredOutages', 'MigrationPolicy', 'SecurityPolicy', 'ChargeAccount', 'UseReservation',
];
/** arp:AllocationTimeConstraint and wsag4jt:TimeConstraint share this sequence. */
const windowOrder = ['StartTime', 'EndTime', 'Duration'];

/**
 * The offer with its time terms moved to `slot` [start, end), as the scheduler found it:
 * a reservation window (arp:AllocationTimeConstraint, wsag4jt:TimeConstraint) becomes the
 * slot; a job gets sla:EarliestStart = start, and a deadline earlier than the slot's end
 * becomes the end, as do sla:CompletedBy objectives that promised the old deadline (a
 * counter-offer must not promise what its own terms cannot meet). Re-read, so the domain
 * view matches the XML; it stays the same alternative of the original offer.
 */
export function offerInSlot(offer: XmlReceivedOffer, slot: Allocation): XmlReceivedOffer {
  const moved = withXml(offer.offerXml, 'offer', (doc) => {
    const root = doc.root;
    const sdt = 'wsag:Terms//wsag:ServiceDescriptionTerm';
    const windows = all(root, `${sdt}/arp:AllocationTimeConstraint | ${sdt}/wsag4jt:TimeConstraint`);
    const levels = all(root, `${sdt}//sla:ServiceLevel`);
    if (windows.length > 0) for (const window of windows) moveWindow(window, slot);
    else if (levels.length > 0) for (const level of levels) moveJob(root, level, slot);
    else throw new InvalidTerms('the offer has neither a reservation window (arp:AllocationTimeConstraint) nor an sla:ServiceLevel whose times could be moved');
    return c14n(root);
  });
  return withXml(moved, 'offer in slot', (doc) => readOffer(doc.root, offer.alternative));
}

function moveWindow(window: XmlElement, slot: Allocation): void {
  const child = (name: string): XmlElement => childInOrder(window, name, windowOrder);
  const hasDuration = all(window, '*[local-name()="Duration"]').length > 0;
  const hasEnd = all(window, '*[local-name()="EndTime"]').length > 0;
  setText(child('StartTime'), xsDateTime(slot.start));
  if (hasEnd || !hasDuration) setText(child('EndTime'), xsDateTime(slot.end, 'up'));
  // Kept, and kept consistent: the reader refuses an EndTime that disagrees with StartTime + Duration.
  if (hasDuration) setText(child('Duration'), String(Math.ceil((slot.end.getTime() - slot.start.getTime()) / 1000)));
}

function moveJob(root: XmlElement, level: XmlElement, slot: Allocation): void {
  setText(childInOrder(level, 'EarliestStart', serviceLevelOrder), xsDateTime(slot.start));
  const deadlineEl = all(level, 'sla:Deadline')[0];
  const deadline = date(deadlineEl?.content.trim());
  if (!deadlineEl || !deadline || deadline.getTime() >= slot.end.getTime()) return;
  const later = xsDateTime(slot.end, 'up');
  setText(deadlineEl, later);
  for (const objective of all(root, 'wsag:Terms//wsag:GuaranteeTerm//sla:CompletedBy')) {
    if (date(objective.content.trim())?.getTime() === deadline.getTime()) setText(objective, later);
  }
}
