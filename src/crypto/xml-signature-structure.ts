import { X509Certificate } from 'node:crypto';
import { XmlElement, XmlText, type XmlDocument, type XmlNode } from 'libxml2-wasm';
import { SignatureInvalid } from '../domain/errors.js';
import { ns } from '../xml/namespaces.js';
import { all, evaluate } from '../xml/xpath.js';
import {
  algorithm,
  dsNs,
  referenceTransforms,
  signatureMethods,
  type SignatureMethod,
} from './xml-signature-algorithms.js';

/**
 * Where signatures may sit in an agreement, and what each may contain. Everything outside
 * this shape is refused before any digest is computed, so that a verifier never checks one
 * thing and the reader of the agreement sees another (signature wrapping).
 */

export type SignatureRole = 'provider signature' | 'initiator countersignature';

export interface AgreementParts {
  root: XmlElement;
  context: XmlElement;
  terms: XmlElement;
  /** The provider's ds:Signature, a child of the root's wsag:Context. */
  providerSignature?: XmlElement;
  /** The initiator's ds:Signature, inside the provider's ds:Signature/ds:Object. */
  countersignature?: XmlElement;
}

export interface SignatureParts {
  role: SignatureRole;
  element: XmlElement;
  signedInfo: XmlElement;
  method: SignatureMethod;
  digestValue: Buffer;
  signatureValue: Buffer;
  /** ds:KeyInfo/ds:X509Data's certificates, in document order. */
  certificates: X509Certificate[];
}

const digestBytes = 32;

/** Throws SignatureInvalid "<where>: <problem>". */
export function invalid(where: string, problem: string): never {
  throw new SignatureInvalid(`${where}: ${problem}`);
}

function structureError(role: SignatureRole, problem: string): never {
  return invalid(`${role}: structure`, problem);
}

function agreementError(problem: string): never {
  return invalid('agreement structure', problem);
}

function is(node: XmlNode | null | undefined, namespace: string, localName: string): node is XmlElement {
  return node instanceof XmlElement && node.namespaceUri === namespace && node.name === localName;
}

const prefixOf: Record<string, string> = { [ns.wsag]: 'wsag', [dsNs]: 'ds' };

/** wsag:X or ds:X whatever prefix the document uses; {namespace}X for the rest. */
function qname(element: XmlElement): string {
  const known = prefixOf[element.namespaceUri];
  if (known) return `${known}:${element.name}`;
  return element.namespaceUri ? `{${element.namespaceUri}}${element.name}` : element.name;
}

function pathOf(element: XmlElement): string {
  const steps: string[] = [];
  for (let at: XmlElement | null = element; at; at = at.parent) steps.unshift(qname(at));
  return `/${steps.join('/')}`;
}

function elementChildren(element: XmlElement): XmlElement[] {
  const children: XmlElement[] = [];
  for (let child = element.firstChild; child; child = child.next) if (child instanceof XmlElement) children.push(child);
  return children;
}

/**
 * The root is wsag:AgreementOffer with the children [wsag:Name], wsag:Context, wsag:Terms;
 * the document holds no other wsag:Context or wsag:Terms anywhere; ds:Signature sits only at
 * the provider's place (a child of the Context) and the initiator's (in the provider's
 * ds:Object), at most one in each; no other ds:Object exists.
 */
export function locateAgreement(doc: XmlDocument): AgreementParts {
  const root = doc.root;
  if (!is(root, ns.wsag, 'AgreementOffer'))
    agreementError(`the root element is ${qname(root)}; a signed agreement is a wsag:AgreementOffer`);
  const children = elementChildren(root);
  const expected = is(children[0], ns.wsag, 'Name') ? ['Name', 'Context', 'Terms'] : ['Context', 'Terms'];
  if (children.length !== expected.length || children.some((child, i) => !is(child, ns.wsag, expected[i] as string))) {
    agreementError(
      `wsag:AgreementOffer must have the children [wsag:Name,] wsag:Context, wsag:Terms; it has ` +
        `${children.map(qname).join(', ') || 'none'}`,
    );
  }
  const [context, terms] = children.slice(-2) as [XmlElement, XmlElement];
  for (const name of ['Context', 'Terms']) {
    const count = evaluate(root, `count(//wsag:${name})`) as number;
    if (count !== 1)
      agreementError(
        `the document holds ${count} wsag:${name} elements; only the one child of wsag:AgreementOffer is allowed`,
      );
  }

  const signatures = all(root, '//ds:Signature');
  const inContext = signatures.filter((s) => s.parent?.isSameNode(context));
  if (inContext.length > 1)
    agreementError(
      `wsag:Context holds ${inContext.length} ds:Signature elements; exactly one provider signature is allowed`,
    );
  const providerSignature = inContext[0];
  const countersignatures = signatures.filter((s) => {
    const object = s.parent;
    return (
      is(object, dsNs, 'Object') &&
      providerSignature !== undefined &&
      object.parent?.isSameNode(providerSignature) === true
    );
  });
  if (countersignatures.length > 1)
    agreementError(
      `the provider signature's ds:Object holds ${countersignatures.length} ds:Signature elements; one ` +
        `countersignature is allowed`,
    );
  const placed = [...inContext, ...countersignatures];
  const stray = signatures.find((s) => !placed.some((p) => p.isSameNode(s)));
  if (stray) {
    agreementError(
      `a ds:Signature at ${pathOf(stray)} is outside the two signature places (the provider's, a child of ` +
        `wsag:Context; the initiator's, in the provider's ds:Object)`,
    );
  }
  const strayObject = all(root, '//ds:Object').find(
    (o) => !providerSignature || !o.parent?.isSameNode(providerSignature),
  );
  if (strayObject)
    agreementError(
      `a ds:Object at ${pathOf(strayObject)}: only the provider signature may hold one, for the countersignature`,
    );
  return { root, context, terms, providerSignature, countersignature: countersignatures[0] };
}

/** The children of a ds element: ds elements only, with whitespace between them. */
function dsChildren(element: XmlElement, role: SignatureRole): XmlElement[] {
  const children: XmlElement[] = [];
  for (let child = element.firstChild; child; child = child.next) {
    if (child instanceof XmlElement && child.namespaceUri === dsNs) children.push(child);
    else if (child instanceof XmlText && child.content.trim() === '') continue;
    else if (child instanceof XmlElement) structureError(role, `${qname(child)} is not allowed in ${qname(element)}`);
    else
      structureError(
        role,
        `${qname(element)} may contain only elements, found ${JSON.stringify(child.content.trim().slice(0, 40))}`,
      );
  }
  return children;
}

/** Exactly the children `names`, in order (a trailing `?` marks an optional last one). */
function expectChildren(element: XmlElement, role: SignatureRole, names: string[]): XmlElement[] {
  const children = dsChildren(element, role);
  const required = names.filter((n) => !n.endsWith('?'));
  const matches =
    children.length >= required.length &&
    children.length <= names.length &&
    children.every((child, i) => child.name === (names[i] as string).replace('?', ''));
  if (!matches) {
    const wanted = names.map((n) => (n.endsWith('?') ? `[ds:${n.slice(0, -1)}]` : `ds:${n}`)).join(', ');
    structureError(
      role,
      `${qname(element)} must contain ${wanted || 'nothing'}; it contains ` +
        `${children.map(qname).join(', ') || 'nothing'}`,
    );
  }
  return children;
}

/** Only the attributes `allowed`, none of them namespaced. */
function expectAttributes(element: XmlElement, role: SignatureRole, allowed: string[]): void {
  const extra = element.attrs.find((a) => a.namespaceUri !== '' || !allowed.includes(a.name));
  if (extra)
    structureError(
      role,
      `${qname(element)} may not carry the attribute ${extra.prefix ? `${extra.prefix}:` : ''}${extra.name}`,
    );
}

/** An element naming an algorithm of the allow-list, with no parameters. */
function algorithmOf(element: XmlElement, role: SignatureRole, allowed: readonly string[]): string {
  expectAttributes(element, role, ['Algorithm']);
  expectChildren(element, role, []);
  const uri = element.attr('Algorithm')?.value;
  if (uri === undefined || !allowed.includes(uri)) {
    structureError(
      role,
      `${qname(element)} Algorithm ${uri === undefined ? 'is missing' : `"${uri}" is not allowed`}; allowed: ` +
        `${allowed.join(', ')}`,
    );
  }
  return uri;
}

function base64Of(element: XmlElement, role: SignatureRole): Buffer {
  expectAttributes(element, role, []);
  for (let child = element.firstChild; child; child = child.next) {
    if (!(child instanceof XmlText)) structureError(role, `${qname(element)} may contain only base64 text`);
  }
  const text = element.content.replace(/\s+/g, '');
  if (text === '' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text))
    structureError(role, `${qname(element)} is not base64`);
  return Buffer.from(text, 'base64');
}

/**
 * Reads one ds:Signature of the allowed shape:
 * SignedInfo(CanonicalizationMethod exc-c14n, SignatureMethod rsa-sha256 | ecdsa-sha256,
 * exactly one Reference URI="" with Transforms [enveloped-signature, exc-c14n] and
 * DigestMethod sha256), SignatureValue, KeyInfo/X509Data/X509Certificate+, and for the
 * provider signature an optional ds:Object holding exactly the countersignature.
 */
export function readSignature(element: XmlElement, role: SignatureRole): SignatureParts {
  expectAttributes(element, role, ['Id']);
  const withObject = role === 'provider signature';
  const [signedInfo, signatureValue, keyInfo, object] = expectChildren(element, role, [
    'SignedInfo',
    'SignatureValue',
    'KeyInfo',
    ...(withObject ? ['Object?'] : []),
  ]) as [XmlElement, XmlElement, XmlElement, XmlElement | undefined];
  if (object) {
    expectAttributes(object, role, []);
    expectChildren(object, role, ['Signature']);
  }

  expectAttributes(signedInfo, role, []);
  const references = dsChildren(signedInfo, role).filter((c) => c.name === 'Reference');
  if (references.length !== 1)
    structureError(
      role,
      `ds:SignedInfo holds ${references.length} ds:Reference elements; exactly one, to the whole agreement, is allowed`,
    );
  const [c14nMethod, signatureMethod, reference] = expectChildren(signedInfo, role, [
    'CanonicalizationMethod',
    'SignatureMethod',
    'Reference',
  ]) as [XmlElement, XmlElement, XmlElement];
  algorithmOf(c14nMethod, role, [algorithm.excC14n]);
  const method = algorithmOf(signatureMethod, role, signatureMethods) as SignatureMethod;

  expectAttributes(reference, role, ['URI']);
  const uri = reference.attr('URI')?.value;
  if (uri !== '')
    structureError(
      role,
      `ds:Reference URI must be "" (the whole agreement); it is ${uri === undefined ? 'missing' : `"${uri}"`}`,
    );
  const [transforms, digestMethod, digestValue] = expectChildren(reference, role, [
    'Transforms',
    'DigestMethod',
    'DigestValue',
  ]) as [XmlElement, XmlElement, XmlElement];
  expectAttributes(transforms, role, []);
  const transformList = dsChildren(transforms, role);
  const named = transformList.map((t) =>
    t.name === 'Transform'
      ? algorithmOf(t, role, referenceTransforms)
      : structureError(role, `${qname(t)} is not allowed in ds:Transforms`),
  );
  if (named.join(' ') !== referenceTransforms.join(' ')) {
    structureError(
      role,
      `ds:Transforms must be exactly [${referenceTransforms.join(', ')}]; they are [${named.join(', ')}]`,
    );
  }
  algorithmOf(digestMethod, role, [algorithm.sha256]);
  const digest = base64Of(digestValue, role);
  if (digest.length !== digestBytes)
    structureError(role, `ds:DigestValue has ${digest.length} bytes; a SHA-256 digest has ${digestBytes}`);

  expectAttributes(keyInfo, role, []);
  const [x509Data] = expectChildren(keyInfo, role, ['X509Data']) as [XmlElement];
  expectAttributes(x509Data, role, []);
  const certificateElements = dsChildren(x509Data, role);
  if (certificateElements.length === 0 || certificateElements.some((c) => c.name !== 'X509Certificate')) {
    structureError(role, 'ds:X509Data must contain one or more ds:X509Certificate and nothing else');
  }
  const certificates = certificateElements.map((c, i) => {
    try {
      return new X509Certificate(base64Of(c, role));
    } catch (error) {
      if (error instanceof SignatureInvalid) throw error;
      return structureError(role, `ds:X509Certificate ${i + 1} is not a DER certificate: ${(error as Error).message}`);
    }
  });

  return {
    role,
    element,
    signedInfo,
    method,
    digestValue: digest,
    signatureValue: base64Of(signatureValue, role),
    certificates,
  };
}
