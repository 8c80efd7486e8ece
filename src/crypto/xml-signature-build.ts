import type { KeyObject, X509Certificate } from 'node:crypto';
import type { XmlDocument, XmlElement } from 'libxml2-wasm';
import { algorithm, dsNs, referenceTransforms, signBytes, type SignatureMethod } from './xml-signature-algorithms.js';
import { digestBeforeSigning } from './xml-signature-canonical.js';

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

/** A ds element as the signer writes it: one description, appended to the document and written as canonical text. */
interface DsElement {
  name: string;
  attribute?: [string, string];
  text?: string;
  children?: DsElement[];
}

const withAlgorithm = (name: string, uri: string): DsElement => ({ name, attribute: ['Algorithm', uri] });

function signedInfo(method: SignatureMethod, digest: Buffer): DsElement {
  return {
    name: 'SignedInfo',
    children: [
      withAlgorithm('CanonicalizationMethod', algorithm.excC14n),
      withAlgorithm('SignatureMethod', method),
      {
        name: 'Reference',
        attribute: ['URI', ''],
        children: [
          {
            name: 'Transforms',
            children: referenceTransforms.map((transform) => withAlgorithm('Transform', transform)),
          },
          withAlgorithm('DigestMethod', algorithm.sha256),
          { name: 'DigestValue', text: digest.toString('base64') },
        ],
      },
    ],
  };
}

/** Appends `element` under `parent`, in the ds namespace `parent` already binds to the ds prefix. */
function append(parent: XmlElement, element: DsElement): XmlElement {
  const added = parent.addElement(element.name, 'ds');
  if (element.attribute) added.setAttr(element.attribute[0], element.attribute[1]);
  if (element.text !== undefined) added.addText(element.text);
  for (const child of element.children ?? []) append(added, child);
  return added;
}

/**
 * The element in exclusive canonical form as the apex of what is signed: the ds prefix
 * declared on it (the one namespace it uses), empty elements as start and end tags, the
 * escapes Canonical XML prescribes. Equal to libxml2's exc-c14n of the appended element
 * (test/crypto/xml-signature.test.ts), without copying and parsing it to find out.
 */
function canonical(element: DsElement, apex = true): string {
  const declaration = apex ? ` xmlns:ds="${dsNs}"` : '';
  const attribute = element.attribute ? ` ${element.attribute[0]}="${escapeAttribute(element.attribute[1])}"` : '';
  const content =
    (element.text === undefined ? '' : escapeText(element.text)) +
    (element.children ?? []).map((child) => canonical(child, false)).join('');
  return `<ds:${element.name}${declaration}${attribute}>${content}</ds:${element.name}>`;
}

const escapeText = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
const escapeAttribute = (value: string) =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#x9;')
    .replace(/\n/g, '&#xA;')
    .replace(/\r/g, '&#xD;');

/** SignedInfo over `digest`, in the exclusive canonical form the SignatureValue signs. */
export function canonicalSignedInfoText(method: SignatureMethod, digest: Buffer): string {
  return canonical(signedInfo(method, digest));
}

/**
 * The complete enveloped signature over the whole document. The digest is taken first,
 * while the document is what the enveloped transform will leave of it (the ds:Signature is
 * then added as one element, with no text around it).
 */
function signatureOver(
  doc: XmlDocument,
  method: SignatureMethod,
  key: KeyObject,
  keyInfoChain: X509Certificate[],
): DsElement & { children: DsElement[] } {
  const info = signedInfo(method, digestBeforeSigning(doc));
  const signatureValue = signBytes(method, key, Buffer.from(canonical(info), 'utf8'));
  return {
    name: 'Signature',
    children: [
      info,
      { name: 'SignatureValue', text: signatureValue.toString('base64') },
      {
        name: 'KeyInfo',
        children: [
          {
            name: 'X509Data',
            children: keyInfoChain.map((certificate) => ({
              name: 'X509Certificate',
              text: certificate.raw.toString('base64'),
            })),
          },
        ],
      },
    ],
  };
}

/** Appends a complete enveloped signature over the whole document to `parent`. */
export function appendSignature(
  doc: XmlDocument,
  parent: XmlElement,
  method: SignatureMethod,
  key: KeyObject,
  keyInfoChain: X509Certificate[],
): void {
  const signature = signatureOver(doc, method, key, keyInfoChain);
  const element = appendDsElement(parent, 'Signature');
  for (const child of signature.children) append(element, child);
}

/**
 * The same signature as XML text (declaring the ds prefix itself), for the caller to write
 * into the document's text where `appendSignature` would have appended it.
 */
export function signatureText(
  doc: XmlDocument,
  method: SignatureMethod,
  key: KeyObject,
  keyInfoChain: X509Certificate[],
): string {
  return canonical(signatureOver(doc, method, key, keyInfoChain));
}
