import type { XmlElement } from 'libxml2-wasm';
import { isoTime } from '../domain/time.js';
import { c14n } from './item-constraint.js';
import { withXml } from './libxml.js';
import { setText } from './xml-edit.js';
import { all, text } from './xpath.js';

const windowPath = './/wsag:ServiceDescriptionTerm/arp:AllocationTimeConstraint';

/** When an offer's reservation window (arp:AllocationTimeConstraint) starts; undefined for an offer without one. */
export function windowStart(offerXml: string): Date | undefined {
  return withXml(offerXml, 'offer', (doc) => {
    const window = all(doc.root, windowPath)[0];
    const start = window ? text(window, 'arp:StartTime') : undefined;
    return start === undefined ? undefined : new Date(start);
  });
}

/**
 * The offer with its reservation window moved to begin at `start`, the same length as
 * before (arp:EndTime moved by as much; arp:Duration kept). A co-allocation moves every
 * task's window to the common start it found.
 */
export function withWindowStart(offerXml: string, start: Date): string {
  return withXml(offerXml, 'offer', (doc) => {
    const window = all(doc.root, windowPath)[0];
    const startElement = window ? all(window, 'arp:StartTime')[0] : undefined;
    if (!window || !startElement)
      throw new Error('the offer has no reservation window (arp:AllocationTimeConstraint with arp:StartTime)');
    const shift = start.getTime() - new Date(startElement.content.trim()).getTime();
    setText(startElement, isoTime(start));
    const end = all(window, 'arp:EndTime')[0];
    if (end) setText(end, isoTime(new Date(new Date(end.content.trim()).getTime() + shift)));
    return c14n(doc.root as XmlElement);
  });
}
