import { XmlElement } from 'libxml2-wasm';
import { SchemaViolation } from '../domain/errors.js';

/** The child elements `{namespace}local` of a Body element, in document order. */
export function childElements(parent: XmlElement, namespace: string, local: string): XmlElement[] {
  const found: XmlElement[] = [];
  for (let c = parent.firstChild; c; c = c.next) {
    if (c instanceof XmlElement && c.namespaceUri === namespace && c.name === local) found.push(c);
  }
  return found;
}

/** At least one such child; the schema already requires it, so a miss names the element. */
export function requiredChildren(parent: XmlElement, namespace: string, qname: string): XmlElement[] {
  const found = childElements(parent, namespace, qname.slice(qname.indexOf(':') + 1));
  if (found.length === 0) throw new SchemaViolation(`${qname} is missing from ${parent.name}`);
  return found;
}
