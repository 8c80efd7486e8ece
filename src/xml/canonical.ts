import { XmlC14NMode, XmlDocument, XmlElement, type XmlNode } from 'libxml2-wasm';
import { escapeXml } from './escape.js';
import { parseXml } from './libxml.js';

/** Canonical XML 1.0 (inclusive: every in-scope namespace) or Exclusive Canonical XML 1.0, without comments. */
export type CanonicalMode = 'inclusive' | 'exclusive';

const modes = { inclusive: XmlC14NMode.XML_C14N_1_0, exclusive: XmlC14NMode.XML_C14N_EXCLUSIVE_1_0 } as const;
const xmlNamespace = 'http://www.w3.org/XML/1998/namespace';

/**
 * The canonical form of `node` and its subtree.
 *
 * Why not `node.canonicalizeToString`: libxml2-wasm canonicalises a subtree by asking a
 * JavaScript callback about every node and namespace node of the whole document, wrapping
 * each in a new object, which cost more than the rest of a negotiation round. Here:
 * - a document's lone root element is canonicalised with no callback at all;
 * - any other element is written out with every namespace in scope declared on it, parsed
 *   as a document of its own, and canonicalised as its lone root (twice as fast as a node
 *   set for an offer among three, about as fast for an offer that is most of its envelope);
 * - what cannot be copied faithfully goes through a node set, whose test only reads parent
 *   pointers.
 * The output is libxml2's either way (test/xml/canonical.test.ts).
 */
export function canonicalXml(node: XmlNode, mode: CanonicalMode): string {
  const options = { mode: modes[mode], withComments: false };
  if (isLoneRoot(node)) return node.doc.canonicalizeToString(options);
  const copy = node instanceof XmlElement ? standaloneCopy(node) : undefined;
  const canonical = copy === undefined ? undefined : canonicalOfCopy(copy, mode);
  return canonical ?? node.doc.canonicalizeToString({ ...options, nodeSet: new Set([node]) });
}

/**
 * The element as XML text that parses on its own to the same subtree (every namespace in
 * scope declared on it), without canonicalising it: for a document canonicalised as a whole
 * later, or for `canonicalOfSource` when the element's canonical form is asked for.
 */
export function standaloneSource(element: XmlElement): string {
  return standaloneCopy(element) ?? canonicalXml(element, 'inclusive');
}

/** The inclusive canonical form of a `standaloneSource`: what `canonicalXml` gives for the element it came from. */
export function canonicalOfSource(source: string): string {
  const canonical = canonicalOfCopy(source, 'inclusive');
  if (canonical === undefined) throw new Error('an element written out on its own did not parse again');
  return canonical;
}

/** The canonical form of an element written out on its own, parsed as a document; undefined if it does not parse. */
function canonicalOfCopy(copy: string, mode: CanonicalMode): string | undefined {
  const doc = parsedCopy(copy);
  if (!doc) return undefined;
  try {
    return doc.canonicalizeToString({ mode: modes[mode], withComments: false });
  } finally {
    doc.dispose();
  }
}

/**
 * The document's root element with no sibling: the document's canonical form is then the
 * element's (comments are left out either way; a processing instruction or a DTD beside it
 * would not be).
 */
function isLoneRoot(node: XmlNode): boolean {
  if (!(node instanceof XmlElement) || node.parent !== null || !node.isSameNode(node.doc.root)) return false;
  try {
    return node.prev === null && node.next === null;
  } catch {
    return false; // a sibling of a kind libxml2-wasm does not wrap
  }
}

/**
 * The element as XML text of its own, every namespace in scope declared on it; undefined
 * when an ancestor carries an xml:* attribute, which Canonical XML copies onto a subtree.
 */
function standaloneCopy(element: XmlElement): string | undefined {
  const inherited = inheritedNamespaces(element);
  if (!inherited) return undefined;
  const text = element.toString({ format: false, noDeclaration: true, encoding: 'utf-8' });
  let declarations = '';
  for (const [prefix, uri] of inherited)
    declarations += ` ${prefix === '' ? 'xmlns' : `xmlns:${prefix}`}="${escapeXml(uri)}"`;
  const nameEnd = text.search(/[\s/>]/);
  return text.slice(0, nameEnd) + declarations + text.slice(nameEnd);
}

/**
 * The namespace declarations `element` inherits from its ancestors, by prefix ('' the default
 * namespace), nearest first as libxml2's xmlGetNsList finds them, those it declares itself left
 * out (without libxml2-wasm's in-scope map, rebuilt with a spread for each namespace).
 * Undefined when an ancestor carries an xml:* attribute, which a copy of the element would
 * have to carry too (Canonical XML copies it onto a subtree).
 */
export function inheritedNamespaces(element: XmlElement): Map<string, string> | undefined {
  const inherited = new Map<string, string>();
  const declared = element.nsDeclarations;
  for (let ancestor = element.parent; ancestor; ancestor = ancestor.parent) {
    if (ancestor.attrs.some((a) => a.namespaceUri === xmlNamespace)) return undefined;
    for (const [prefix, uri] of Object.entries(ancestor.nsDeclarations)) {
      if (!Object.hasOwn(declared, prefix) && !inherited.has(prefix)) inherited.set(prefix, uri);
    }
  }
  return inherited;
}

/**
 * `element` taken out of its document into a new one, as its root, the namespaces it
 * inherited declared on it: the tree a parse of its standalone copy gives, without writing it
 * out and parsing it again. Undefined (nothing moved) where `inheritedNamespaces` is. The old
 * document no longer holds the element; dispose the new one first, as its elements may still
 * name namespace declarations of the old.
 */
export function movedIntoOwnDocument(element: XmlElement): XmlDocument | undefined {
  const inherited = inheritedNamespaces(element);
  if (!inherited) return undefined;
  try {
    for (const [prefix, uri] of inherited) element.addNsDeclaration(uri, prefix === '' ? undefined : prefix);
  } catch {
    return undefined; // a declaration libxml2 will not add: the caller parses the copy instead
  }
  const doc = XmlDocument.create();
  doc.root = element;
  return doc;
}

/**
 * The copy parsed keeping every text node as the tree had it; undefined if it does not parse (an entity reference the
 * copy has no declaration for).
 */
function parsedCopy(copy: string) {
  try {
    return parseXml(copy, 'canonical copy', undefined, { keepBlanks: true });
  } catch {
    return undefined;
  }
}
