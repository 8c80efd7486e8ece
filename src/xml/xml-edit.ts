import { randomUUID } from 'node:crypto';
import type { XmlElement } from 'libxml2-wasm';
import { escapeXml } from './escape.js';
import { c14n, elementChildren } from './item-constraint.js';
import { withXml } from './libxml.js';
import { qname } from './xpath.js';

/**
 * Small edits of parsed documents. libxml2-wasm cannot move nodes between documents, so
 * subtrees from elsewhere are spliced in as text and the result is parsed again.
 */

/** Canonical XML of a document's root element. */
export function canonical(xml: string, what: string): string {
  return withXml(xml, what, (doc) => c14n(doc.root));
}

export function removeChildren(element: XmlElement): void {
  for (let c = element.firstChild; c; c = element.firstChild) c.remove();
}

/** Replaces the element's content by one text node. */
export function setText(element: XmlElement, value: string): void {
  removeChildren(element);
  element.addText(value);
}

/**
 * The child `local` of `parent` (same namespace and prefix as the parent), created at its
 * place in the schema's sequence `order` when missing, so the document stays valid.
 */
export function childInOrder(parent: XmlElement, local: string, order: readonly string[]): XmlElement {
  const children = elementChildren(parent).filter((c) => c.namespaceUri === parent.namespaceUri);
  const existing = children.find((c) => c.name === local);
  if (existing) return existing;
  const position = order.indexOf(local);
  if (position < 0) throw new Error(`${local} is not in the sequence ${order.join(', ')}`);
  const before = new Set(order.slice(0, position));
  const previous = children.filter((c) => before.has(c.name)).at(-1);
  const prefix = parent.prefix || undefined;
  if (previous) return previous.appendElement(local, prefix);
  const first = elementChildren(parent)[0];
  return first ? first.prependElement(local, prefix) : parent.addElement(local, prefix);
}

/**
 * Canonical XML of `root`'s element with `fragment` (well-formed XML that declares its own
 * namespaces) appended to `parent`'s content. The document itself is left unchanged.
 */
export function withFragment(root: XmlElement, parent: XmlElement, fragment: string): string {
  const marker = `wsag-server-splice-${randomUUID()}`;
  const placeholder = parent.addText(marker);
  let serialized: string;
  try {
    serialized = c14n(root);
  } finally {
    placeholder.remove();
  }
  const at = serialized.indexOf(marker);
  return canonical(serialized.slice(0, at) + fragment + serialized.slice(at + marker.length), 'edited document');
}

/**
 * The document with its root element renamed to {uri}local, keeping content and attributes.
 * Uses the prefix already bound to `uri` on the root, else declares `preferredPrefix`.
 */
export function renameRoot(
  xml: string,
  what: string,
  uri: string,
  local: string,
  preferredPrefix: string,
  attribute?: { local: string; value: string },
): string {
  const renamed = withXml(xml, what, (doc) => {
    const root = doc.root;
    const serialized = c14n(root);
    const old = qname(root);
    const inScope = root.namespaces;
    let prefix = Object.keys(inScope).find((p) => p && inScope[p] === uri);
    let declaration = '';
    if (prefix === undefined) {
      prefix = preferredPrefix;
      for (let i = 1; prefix in inScope; i++) prefix = `${preferredPrefix}${i}`;
      declaration = ` xmlns:${prefix}="${uri}"`;
    }
    const name = `${prefix}:${local}`;
    // An attribute of the new name's namespace the root lacks (canonicalised below into its place).
    const added =
      attribute && !root.attrs.some((a) => a.namespaceUri === uri && a.name === attribute.local)
        ? ` ${prefix}:${attribute.local}="${escapeXml(attribute.value)}"`
        : '';
    // Canonical XML has no empty-element tags: it always starts with `<old` and ends with `</old>`.
    return `<${name}${declaration}${added}${serialized.slice(old.length + 1, -(old.length + 3))}</${name}>`;
  });
  return canonical(renamed, what);
}
