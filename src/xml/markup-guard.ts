import type { XmlElement, XmlNamedNode } from 'libxml2-wasm';
import { InvalidTerms } from '../domain/errors.js';

/**
 * Markup a browser would render or run: an offer is kept and served back as the agreement
 * document, so an element of these languages in its free slots (wsag:Context, xs:any in the
 * terms) could run as a page of this server in an operator's browser. No template needs them,
 * so none is accepted, wherever it sits (docs/security.md, "Documents never execute").
 */
const markupLanguages: Record<string, string> = {
  'http://www.w3.org/1999/xhtml': 'XHTML',
  'http://www.w3.org/2000/svg': 'SVG',
  'http://www.w3.org/1998/Math/MathML': 'MathML',
  'http://www.w3.org/1999/XSL/Transform': 'XSLT',
  'http://www.w3.org/1999/xlink': 'XLink',
};

/**
 * Refuses an offer holding markup a browser would render, or a processing instruction (an xml-stylesheet would style
 * the stored document).
 */
export function rejectBrowserMarkup(offer: XmlElement): void {
  const namespaces = Object.keys(markupLanguages);
  const test = namespaces.map((uri) => `namespace-uri()='${uri}'`).join(' or ');
  const [found] = offer.find(
    `descendant-or-self::*[${test}] | descendant-or-self::*/@*[${test}]`,
  ) as unknown as XmlNamedNode[];
  if (found) {
    const language = markupLanguages[found.namespaceUri] ?? 'markup';
    throw new InvalidTerms(
      `the offer holds ${language} (${found.name}): markup a browser would render or run is not accepted in ` +
        `an agreement offer, in wsag:Context or anywhere else`,
    );
  }
  if (offer.find('descendant::processing-instruction()').length > 0)
    throw new InvalidTerms(
      'the offer holds a processing instruction (<?...?>): none is accepted in an agreement offer',
    );
}
