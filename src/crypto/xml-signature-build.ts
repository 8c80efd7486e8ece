import type { KeyObject, X509Certificate } from 'node:crypto';
import type { XmlDocument, XmlElement } from 'libxml2-wasm';
import { algorithm, dsNs, referenceTransforms, signBytes, type SignatureMethod } from './xml-signature-algorithms.js';
import { canonicalSignedInfo, digestBeforeSigning } from './xml-signature-canonical.js';

/**
 * Appends a ds element to `parent` (outside any ds element): it declares the ds prefix
 * itself unless the prefix already means the XML-DSig namespace there.
 */
export function appendDsElement(parent: XmlElement, localName: string): XmlElement {
  if (parent.namespaceForPrefix('ds') === dsNs) return parent.addElement(localName, 'ds');
  const element = parent.addElement(localName);
  element.addNsDeclaration(dsNs, 'ds');
  element.prefix = 'ds';
  return element;
}

function addAlgorithm(parent: XmlElement, name: string, uri: string): XmlElement {
  const element = parent.addElement(name, 'ds');
  element.setAttr('Algorithm', uri);
  return element;
}

/**
 * Appends a complete enveloped signature over the whole document to `parent`. The digest
 * is taken first, while the document is what the enveloped transform will leave of it
 * (the ds:Signature is added as one element, with no text around it).
 */
export function appendSignature(doc: XmlDocument, parent: XmlElement, method: SignatureMethod, key: KeyObject, keyInfoChain: X509Certificate[]): void {
  const digest = digestBeforeSigning(doc);
  const signature = appendDsElement(parent, 'Signature');
  const signedInfo = signature.addElement('SignedInfo', 'ds');
  addAlgorithm(signedInfo, 'CanonicalizationMethod', algorithm.excC14n);
  addAlgorithm(signedInfo, 'SignatureMethod', method);
  const reference = signedInfo.addElement('Reference', 'ds');
  reference.setAttr('URI', '');
  const transforms = reference.addElement('Transforms', 'ds');
  for (const transform of referenceTransforms) addAlgorithm(transforms, 'Transform', transform);
  addAlgorithm(reference, 'DigestMethod', algorithm.sha256);
  const digestValue = reference.addElement('DigestValue', 'ds');
  const signatureValue = signature.addElement('SignatureValue', 'ds');
  const x509Data = signature.addElement('KeyInfo', 'ds').addElement('X509Data', 'ds');
  for (const certificate of keyInfoChain) x509Data.addElement('X509Certificate', 'ds').addText(certificate.raw.toString('base64'));

  digestValue.addText(digest.toString('base64'));
  signatureValue.addText(signBytes(method, key, canonicalSignedInfo(signedInfo)).toString('base64'));
}
