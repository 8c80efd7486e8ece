import { XmlC14NMode, type XmlDocument, type XmlElement } from 'libxml2-wasm';
import { canonicalXml } from '../xml/canonical.js';
import { sha256 } from './xml-signature-algorithms.js';

const exclusive = { mode: XmlC14NMode.XML_C14N_EXCLUSIVE_1_0, withComments: false } as const;

/**
 * What the one Reference (URI="", transforms enveloped-signature then exc-c14n) digests:
 * the whole document without comments and without `signature`'s subtree, in exclusive
 * canonical form. libxml2 hides the descendants, attributes and namespace nodes of a hidden
 * element too, so hiding the signature element removes all of it.
 */
export function referenceDigest(doc: XmlDocument, signature: XmlElement): Buffer {
  const canonical = doc.canonicalizeToString({ ...exclusive, isVisible: (node) => !node.isSameNode(signature) });
  return sha256(canonical);
}

/**
 * The same digest taken while the signature is not yet in the document: the document is
 * then exactly what the enveloped transform leaves, and no node needs asking whether it
 * is visible (libxml2-wasm asks a JavaScript callback about each).
 */
export function digestBeforeSigning(doc: XmlDocument): Buffer {
  return sha256(doc.canonicalizeToString(exclusive));
}

/** The bytes the SignatureValue signs: SignedInfo in exclusive canonical form. */
export function canonicalSignedInfo(signedInfo: XmlElement): Buffer {
  return Buffer.from(canonicalXml(signedInfo, 'exclusive'), 'utf8');
}
