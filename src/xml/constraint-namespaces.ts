import { XmlElement } from 'libxml2-wasm';
import { ns } from './namespaces.js';

/** Attributes of XML Schema components whose values are QNames (memberTypes: a list of them). */
const qnameAttributes = ['ref', 'type', 'base', 'itemType', 'substitutionGroup', 'memberTypes'];

/**
 * The namespaces an ItemConstraint's schema components name (a type, an element, a base),
 * so its small schema imports only those: importing every schema of the server for each
 * Item cost about 1 MiB per Item (loading the shipped templates took 40 MiB of RSS, now
 * 15), on the event loop and again on each document thread.
 *
 * `'every'` when the constraint can look past what it names: a wildcard that validates
 * (processContents lax or strict), or content of xs:anyType (an element declared without
 * a type). Those validate against whatever global declarations the schema knows, so the
 * verdict could depend on schemas the constraint does not name.
 */
export function namespacesNamed(components: readonly XmlElement[]): Set<string> | 'every' {
  const named = new Set<string>();
  for (const component of components) {
    for (const element of [component, ...descendants(component)]) {
      if (element.namespaceUri !== ns.xs) continue;
      if (
        (element.name === 'any' || element.name === 'anyAttribute') &&
        element.attr('processContents')?.value !== 'skip'
      )
        return 'every';
      if (element.name === 'element' && !declaresContent(element)) return 'every';
      for (const attribute of qnameAttributes) {
        for (const qname of (element.attr(attribute)?.value ?? '').split(/\s+/).filter(Boolean)) {
          const uri = namespaceOf(element, qname);
          if (uri === ns.xs && qname.endsWith(':anyType')) return 'every';
          if (uri !== ns.xs) named.add(uri);
        }
      }
    }
  }
  return named;
}

/** An xs:element with a type: named (type, or ref to a declaration) or given inline. */
function declaresContent(element: XmlElement): boolean {
  if (element.attr('type') || element.attr('ref')) return true;
  return descendants(element, 1).some(
    (c) => c.namespaceUri === ns.xs && (c.name === 'simpleType' || c.name === 'complexType'),
  );
}

function namespaceOf(element: XmlElement, qname: string): string {
  const colon = qname.indexOf(':');
  const prefix = colon < 0 ? '' : qname.slice(0, colon);
  // An unprefixed QName in a schema is in the default namespace, if any is declared.
  const uri = element.namespaceForPrefix(prefix);
  if (uri === null && prefix !== '') throw new Error(`prefix "${prefix}" of ${qname} is not declared`);
  return uri ?? '';
}

function descendants(element: XmlElement, depth = Infinity): XmlElement[] {
  const found: XmlElement[] = [];
  for (let c = element.firstChild; c; c = c.next) {
    if (!(c instanceof XmlElement)) continue;
    found.push(c);
    if (depth > 1) found.push(...descendants(c, depth - 1));
  }
  return found;
}
