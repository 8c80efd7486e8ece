import type { XmlElement } from 'libxml2-wasm';
import { InvalidTerms } from '../domain/errors.js';
import { c14n, elementChildren } from './item-constraint.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';
import { removeChildren, withFragment } from './xml-edit.js';
import { all, one, qname } from './xpath.js';

/**
 * An offer's alternatives (WS-Agreement section 4.2, term compositors): wsag:All takes
 * every child, so its alternatives are the cartesian product of its children's;
 * wsag:ExactlyOne and wsag:OneOrMore take one child at a time. For OneOrMore the server
 * picks the one child it can serve rather than trying every combination: a larger subset
 * would only ask for more than the initiator needs. Order is document order, which is the
 * initiator's preference.
 */

/** More combinations than this are refused: each is scheduled and checked on its own. */
export const maxAlternatives = 64;

const compositors = new Set(['All', 'ExactlyOne', 'OneOrMore']);

function isCompositor(element: XmlElement): boolean {
  return element.namespaceUri === ns.wsag && compositors.has(element.name);
}

export function hasChoices(terms: XmlElement): boolean {
  return all(terms, './/wsag:ExactlyOne | .//wsag:OneOrMore').length > 0;
}

/** How many alternatives the Terms describe, counted without building them. */
export function countAlternatives(terms: XmlElement): number {
  const count = (element: XmlElement): number => {
    if (!isCompositor(element)) return 1;
    const parts = elementChildren(element).map(count);
    return element.name === 'All' ? parts.reduce((a, b) => a * b, 1) : parts.reduce((a, b) => a + b, 0);
  };
  return elementChildren(terms)
    .map(count)
    .reduce((a, b) => a * b, 1);
}

/** The number of alternatives the Terms describe; refuses more than maxAlternatives, naming the count. */
export function checkAlternativeCount(terms: XmlElement): number {
  const count = countAlternatives(terms);
  if (count > maxAlternatives) {
    throw new InvalidTerms(
      `${qname(terms)}: its ExactlyOne / OneOrMore compositors combine into ${count} alternatives; at most ` +
        `${maxAlternatives} are considered`,
    );
  }
  return count;
}

/** Each alternative as the list of its term elements. */
function expand(element: XmlElement): XmlElement[][] {
  if (!isCompositor(element)) return [[element]];
  const parts = elementChildren(element).map(expand);
  return element.name === 'All' ? product(parts) : parts.flat();
}

/** Every way of taking one alternative from each part, the first part varying slowest. */
function product(parts: XmlElement[][][]): XmlElement[][] {
  return parts.reduce<XmlElement[][]>(
    (acc, part) => acc.flatMap((left) => part.map((right) => [...left, ...right])),
    [[]],
  );
}

/**
 * The whole wsag:AgreementOffer once per alternative, its Terms in normal form
 * `<wsag:Terms><wsag:All>chosen terms</wsag:All></wsag:Terms>`, so creation-constraint
 * Locations such as /wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm
 * select the alternative's terms. Canonical XML, in document order.
 */
export function alternativeOfferDocuments(offerXml: string): string[] {
  return withXml(offerXml, 'offer', (doc) => {
    const terms = one(doc.root, 'wsag:Terms');
    if (!terms) throw new InvalidTerms(`${qname(doc.root)} needs wsag:Terms`);
    checkAlternativeCount(terms);
    const choices = product(elementChildren(terms).map(expand));
    // Serialised before the Terms are emptied: each term keeps its in-scope namespaces.
    const serialized = choices.map((terms) => terms.map(c14n).join(''));
    removeChildren(terms);
    const allName = terms.prefix ? `${terms.prefix}:All` : 'All';
    return serialized.map((content) => withFragment(doc.root, terms, `<${allName}>${content}</${allName}>`));
  });
}
