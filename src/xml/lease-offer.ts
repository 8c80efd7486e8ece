import type { XmlElement } from 'libxml2-wasm';
import { isoTime } from '../domain/time.js';
import { c14n } from './item-constraint.js';
import { withXml } from './libxml.js';
import { setText } from './xml-edit.js';
import { all, text } from './xpath.js';

/** What a lease change asks for: a new end of the window, or fewer nodes. */
export interface LeaseChange {
  until?: Date;
  nodes?: number;
}

/**
 * The renegotiation offer that changes a lease (docs/leases.md): the agreement's
 * own terms with the reservation window's end moved (arp:EndTime, or arp:Duration) or the
 * node count changed (jsdl:TotalResourceCount and the sla:NodesAvailable objective), without
 * the provider's signature and the agreement's id, which belong to the agreement, not to an
 * offer. Fails naming what is missing when the agreement is no lease (no window).
 */
export function leaseOffer(agreementXml: string, change: LeaseChange): string {
  return withXml(agreementXml, 'agreement', (doc) => {
    const root = doc.root;
    for (const signature of all(root, './/ds:Signature')) signature.remove();
    root.attrs.find((a) => a.name === 'AgreementId')?.remove();
    const window = all(root, './/wsag:ServiceDescriptionTerm/arp:AllocationTimeConstraint')[0];
    if (!window)
      throw new Error('the agreement is no lease: it has no reservation window (arp:AllocationTimeConstraint)');
    if (change.until) {
      const start = new Date(text(window, 'arp:StartTime') ?? '');
      if (!(change.until.getTime() > start.getTime()))
        throw new Error(
          `the lease cannot end at ${isoTime(change.until)}: its window starts at ${text(window, 'arp:StartTime')}`,
        );
      const end = all(window, 'arp:EndTime')[0];
      const duration = all(window, 'arp:Duration')[0];
      if (end) setText(end, isoTime(change.until));
      if (duration) setText(duration, String(Math.round((change.until.getTime() - start.getTime()) / 1000)));
    }
    if (change.nodes !== undefined) {
      const counts = all(root, './/jsdl:TotalResourceCount/jsdl:Exact');
      if (counts.length === 0) throw new Error('the agreement names no jsdl:TotalResourceCount/jsdl:Exact to change');
      for (const count of counts) setText(count, String(change.nodes));
      for (const objective of all(root, './/sla:NodesAvailable')) setText(objective, String(change.nodes));
    }
    return c14n(root as XmlElement);
  });
}
