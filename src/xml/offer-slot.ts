import type { XmlElement } from 'libxml2-wasm';
import type { Allocation } from '../domain/allocation.js';
import type { TermChanges } from '../engine/ports.js';
import { InvalidTerms } from '../domain/errors.js';
import { date, xsDateTime } from './datetime.js';
import { withXml } from './libxml.js';
import { withEditedTerms, type XmlReceivedOffer } from './offer-reader.js';
import { childInOrder, removeChildren, setText } from './xml-edit.js';
import { all } from './xpath.js';

/** sla:ServiceLevelType's sequence (schemas/sla-terms.xsd): inserted elements keep the document valid. */
const serviceLevelOrder = [
  'RuntimeEstimate',
  'EarliestStart',
  'Deadline',
  'RequestKind',
  'GuaranteeLevel',
  'CheckpointFrequency',
  'MaxCoveredOutages',
  'MigrationPolicy',
  'SecurityPolicy',
  'ChargeAccount',
  'UseReservation',
  'Interactive',
  'Bid',
  'ResumesFromCheckpoint',
];
/** arp:AllocationTimeConstraint and wsag4jt:TimeConstraint share this sequence. */
const windowOrder = ['StartTime', 'EndTime', 'Duration'];

/**
 * The offer with its time terms moved to `slot` [start, end), as the scheduler found it:
 * a reservation window (arp:AllocationTimeConstraint, wsag4jt:TimeConstraint) becomes the
 * slot; a job gets sla:EarliestStart = start, and a deadline earlier than `completion` (the
 * slot's end unless the caller says the job needs longer, e.g. room for its covered
 * outages) becomes that completion, as do sla:CompletedBy objectives earlier than it
 * (a counter-offer must not promise what its own terms cannot meet). Its terms are read
 * again, so the domain view matches the XML; it stays the same alternative of the original offer.
 */
export function offerInSlot(offer: XmlReceivedOffer, slot: Allocation, completion: Date = slot.end): XmlReceivedOffer {
  if (offer.request.window) return offerWithTerms(offer, { window: { start: slot.start, end: slot.end } });
  const deadline = offer.request.deadline;
  const later = deadline && deadline.getTime() < completion.getTime() ? completion : undefined;
  return offerWithTerms(offer, { earliestStart: slot.start, ...(later ? { deadline: later } : {}) });
}

/**
 * The offer with some terms changed (counter-offers): the reservation window, the earliest
 * start, the deadline, the node count, the runtime estimate, guarantee objectives. Objectives
 * the changed terms could not keep follow them: sla:CompletedBy with the deadline,
 * sla:NodesAvailable with the node count. Read again, so the domain view matches the XML.
 */
export function offerWithTerms(offer: XmlReceivedOffer, changes: TermChanges): XmlReceivedOffer {
  return withXml(offer.offerSource, 'offer', (doc) => {
    const root = doc.root;
    const sdt = 'wsag:Terms//wsag:ServiceDescriptionTerm';
    const levels = all(root, `${sdt}//sla:ServiceLevel`);
    const needLevel = (what: string) => {
      if (levels.length === 0)
        throw new InvalidTerms(`the offer has no sla:ServiceLevel whose ${what} could be changed`);
    };
    if (changes.window) {
      const windows = all(root, `${sdt}/arp:AllocationTimeConstraint | ${sdt}/wsag4jt:TimeConstraint`);
      if (windows.length === 0)
        throw new InvalidTerms(
          'the offer has neither a reservation window (arp:AllocationTimeConstraint) nor an sla:ServiceLevel ' +
            'whose times could be moved',
        );
      for (const window of windows) moveWindow(window, changes.window);
    }
    if (changes.earliestStart) {
      if (levels.length === 0)
        throw new InvalidTerms(
          'the offer has neither a reservation window (arp:AllocationTimeConstraint) nor an sla:ServiceLevel ' +
            'whose times could be moved',
        );
      for (const level of levels)
        setText(childInOrder(level, 'EarliestStart', serviceLevelOrder), xsDateTime(changes.earliestStart));
    }
    if (changes.deadline) {
      needLevel('deadline');
      for (const level of levels) moveDeadline(root, level, changes.deadline);
    }
    if (changes.runtimeSeconds !== undefined) {
      needLevel('runtime estimate');
      for (const level of levels)
        setText(childInOrder(level, 'RuntimeEstimate', serviceLevelOrder), String(Math.ceil(changes.runtimeSeconds)));
    }
    if (changes.nodeCount !== undefined) changeNodeCount(root, sdt, changes.nodeCount);
    if (changes.objectives) keepableObjectives(root, changes.objectives);
    // Read from the edited document itself: written out and parsed again, it reads the same.
    return withEditedTerms(offer, root);
  });
}

function moveWindow(window: XmlElement, slot: { start: Date; end: Date }): void {
  const child = (name: string): XmlElement => childInOrder(window, name, windowOrder);
  const hasDuration = all(window, '*[local-name()="Duration"]').length > 0;
  const hasEnd = all(window, '*[local-name()="EndTime"]').length > 0;
  setText(child('StartTime'), xsDateTime(slot.start));
  if (hasEnd || !hasDuration) setText(child('EndTime'), xsDateTime(slot.end, 'up'));
  // Kept, and kept consistent: the reader refuses an EndTime that disagrees with StartTime + Duration.
  if (hasDuration) setText(child('Duration'), String(Math.ceil((slot.end.getTime() - slot.start.getTime()) / 1000)));
}

/** A CompletedBy earlier than the new deadline would still be the deadline the offer is planned for: it moves too. */
function moveDeadline(root: XmlElement, level: XmlElement, deadline: Date): void {
  setText(childInOrder(level, 'Deadline', serviceLevelOrder), xsDateTime(deadline, 'up'));
  keepableObjectives(root, { completedBy: deadline });
}

/**
 * Objectives the changed terms could not keep follow them (a counter-offer must not promise
 * what its own terms cannot meet): sla:NodesAvailable above `nodesAvailable` comes down to
 * it, sla:CompletedBy and sla:StartBy before `completedBy` / `startBy` move to them.
 */
function keepableObjectives(root: XmlElement, keep: NonNullable<TermChanges['objectives']>): void {
  const objectives = (name: string) => all(root, `wsag:Terms//wsag:GuaranteeTerm//sla:${name}`);
  if (keep.nodesAvailable !== undefined) {
    for (const o of objectives('NodesAvailable'))
      if (Number(o.content.trim()) > keep.nodesAvailable) setText(o, String(keep.nodesAvailable));
  }
  const notBefore = (name: string, at: Date | undefined) => {
    if (!at) return;
    for (const o of objectives(name))
      if ((date(o.content.trim())?.getTime() ?? 0) < at.getTime()) setText(o, xsDateTime(at, 'up'));
  };
  notBefore('CompletedBy', keep.completedBy);
  notBefore('StartBy', keep.startBy);
}

/** jsdl:TotalResourceCount becomes an Exact count; NodesAvailable objectives that promised the old count follow. */
function changeNodeCount(root: XmlElement, sdt: string, nodes: number): void {
  const counts = all(root, `${sdt}//jsdl:Resources/jsdl:TotalResourceCount`);
  if (counts.length === 0)
    throw new InvalidTerms('the offer has no jsdl:TotalResourceCount whose node count could be changed');
  let old: number | undefined;
  for (const count of counts) {
    const before = all(count, 'jsdl:Exact | jsdl:LowerBoundedRange | jsdl:Range/jsdl:LowerBound')[0];
    old ??= before ? Number(before.content.trim()) : undefined;
    removeChildren(count);
    setText(childInOrder(count, 'Exact', ['Exact']), String(nodes));
  }
  if (old === undefined) return;
  for (const objective of all(root, 'wsag:Terms//wsag:GuaranteeTerm//sla:NodesAvailable')) {
    // The old count promised in full follows the new count; no objective may promise more nodes than are booked.
    const promised = Number(objective.content.trim());
    if (promised === old || promised > nodes) setText(objective, String(nodes));
  }
}
