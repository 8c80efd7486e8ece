import { XmlC14NMode, XmlElement, type XmlNode } from 'libxml2-wasm';

/** Canonical XML 1.0 (inclusive: every in-scope namespace) or Exclusive Canonical XML 1.0, without comments. */
export type CanonicalMode = 'inclusive' | 'exclusive';

const modes = { inclusive: XmlC14NMode.XML_C14N_1_0, exclusive: XmlC14NMode.XML_C14N_EXCLUSIVE_1_0 } as const;

/**
 * The canonical form of `node` and its subtree.
 *
 * Why not `node.canonicalizeToString`: libxml2-wasm canonicalises a subtree by asking a
 * JavaScript callback about every node of the whole document, wrapping each in a new
 * object, which cost more than the rest of a negotiation round. Here a document's lone
 * root element is canonicalised with no callback at all, and any other node through a node
 * set, whose test only reads parent pointers. The output is the same
 * (test/xml/canonical.test.ts).
 */
export function canonicalXml(node: XmlNode, mode: CanonicalMode): string {
  const options = { mode: modes[mode], withComments: false };
  if (isLoneRoot(node)) return node.doc.canonicalizeToString(options);
  return node.doc.canonicalizeToString({ ...options, nodeSet: new Set([node]) });
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
