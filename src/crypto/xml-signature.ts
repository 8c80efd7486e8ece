/**
 * XML-DSig signatures on agreement documents (docs/security.md, "Agreement signatures").
 *
 * The provider signs every agreement: one enveloped ds:Signature, the last child of the
 * root's wsag:Context (the only place AgreementType leaves open), over the whole document
 * (Reference URI=""). The initiator may countersign: a second enveloped ds:Signature inside
 * the provider's, in a ds:Object (XAdES's counter-signature place). Its enveloped transform
 * hides only itself, so it covers the agreement and the provider's signature; the provider's
 * hides its whole subtree, countersignature included, so it stays valid.
 */
import { timingSafeEqual, type KeyObject, type X509Certificate } from 'node:crypto';
import type { XmlDocument } from 'libxml2-wasm';
import { MalformedMessage, MessageTooLarge } from '../domain/errors.js';
import { rootChildEnd } from '../xml/element-end.js';
import { parseXml } from '../xml/libxml.js';
import { guardRawXml, type RawGuardLimits } from '../xml/raw-guard.js';
import { signatureMethodFor, verifyBytes } from './xml-signature-algorithms.js';
import { appendDsElement, appendSignature, signatureText } from './xml-signature-build.js';
import { canonicalSignedInfo, referenceDigest } from './xml-signature-canonical.js';
import { checkSigningCredentials, orderChain, type SigningCredentials } from './xml-signature-credentials.js';
import { invalid, locateAgreement, readSignature, type SignatureParts } from './xml-signature-structure.js';

export { SignatureInvalid } from '../domain/errors.js';
export { SigningCredentialsError, type SigningCredentials } from './xml-signature-credentials.js';

/**
 * Decides whether a signer's certificates lead to a trusted CA at `at` (TrustStore.validate):
 * returns the signer's identity or throws saying why not. The certificates come from the
 * document, leaf first, without the root; they are never trusted by themselves.
 */
export type ValidateChain = (chain: X509Certificate[], at: Date) => { identity: string };

export interface VerifyOptions {
  validateChain: ValidateChain;
  /** The time the certificates must be valid at. */
  at: Date;
  limits?: RawGuardLimits;
}

export interface VerifiedSigner {
  identity: string;
  certificate: X509Certificate;
  /** ds:SignatureValue, base64: equal values mean the same signature over the same content. */
  signatureValue: string;
}

export interface AgreementSignatures {
  provider: VerifiedSigner;
  initiator?: VerifiedSigner;
}

/** Agreement documents are checked like request bodies before libxml2 sees them: size, no DTD, depth. */
export const defaultAgreementLimits: RawGuardLimits = { maxBytes: 2 * 1024 * 1024, maxDepth: 64 };

/**
 * Parses an agreement keeping all its text (whitespace is signed too), after the raw guard unless `limits` is
 * undefined; guard failures are structure errors.
 */
function parseAgreement(xml: string, limits: RawGuardLimits | undefined): XmlDocument {
  try {
    const bytes = Buffer.from(xml, 'utf8');
    if (limits) guardRawXml(bytes, limits);
    return parseXml(bytes, 'agreement', undefined, { keepBlanks: true });
  } catch (error) {
    if (error instanceof MalformedMessage || error instanceof MessageTooLarge)
      invalid('agreement structure', error.message);
    throw error;
  }
}

function withAgreement<T>(xml: string, limits: RawGuardLimits | undefined, use: (doc: XmlDocument) => T): T {
  const doc = parseAgreement(xml, limits);
  try {
    return use(doc);
  } finally {
    doc.dispose();
  }
}

function serialize(doc: XmlDocument): string {
  return doc.toString({ format: false, noDeclaration: true, encoding: 'utf-8' }).trimEnd();
}

/**
 * Signs an unsigned agreement as its provider; returns the signed document. The document is
 * the server's own, written from an offer that passed the raw guard, so it is parsed without
 * the guard's scan. The signature is written into the text as given, before the Context's
 * end tag: the same document as appending it to the tree and writing the tree out, without
 * either step; the tree is used only when the text has no such end tag.
 */
export function signAgreement(agreementXml: string, signer: SigningCredentials): string {
  const { method, keyInfoChain } = checkSigningCredentials(signer);
  return withAgreement(agreementXml, undefined, (doc) => {
    const parts = locateAgreement(doc);
    if (parts.providerSignature) throw new Error('the agreement is already signed: wsag:Context holds a ds:Signature');
    const contextEnd = rootChildEnd(agreementXml, parts.context.prefix ? `${parts.context.prefix}:Context` : 'Context');
    if (contextEnd !== undefined) {
      return (
        agreementXml.slice(0, contextEnd) +
        signatureText(doc, method, signer.key, keyInfoChain) +
        agreementXml.slice(contextEnd)
      );
    }
    appendSignature(doc, parts.context, method, signer.key, keyInfoChain);
    return serialize(doc);
  });
}

/**
 * Countersigns a provider-signed agreement as its initiator; returns the countersigned
 * document. It does not check the provider's signature: verify the agreement first.
 */
export function countersign(agreementXml: string, key: KeyObject, chain: X509Certificate[]): string {
  const { method, keyInfoChain } = checkSigningCredentials({ key, chain });
  return withAgreement(agreementXml, defaultAgreementLimits, (doc) => {
    const { providerSignature, countersignature } = locateAgreement(doc);
    if (!providerSignature)
      invalid(
        'provider signature: structure',
        'the agreement has no provider signature (a ds:Signature in wsag:Context) to countersign',
      );
    if (countersignature) throw new Error('the agreement is already countersigned');
    readSignature(providerSignature, 'provider signature');
    const object = appendDsElement(providerSignature, 'Object');
    appendSignature(doc, object, method, key, keyInfoChain);
    return serialize(doc);
  });
}

/** Whether the agreement carries no provider signature at all (stored while signing was off). */
export function isUnsignedAgreement(xml: string): boolean {
  return withAgreement(xml, defaultAgreementLimits, (doc) => !locateAgreement(doc).providerSignature);
}

/**
 * Verifies the provider's signature and, if present, the initiator's countersignature:
 * structure (see xml-signature-structure.ts), algorithms, the signer's key, digest,
 * signature value, then the certificate chain with `validateChain`. Throws SignatureInvalid
 * naming the signature and what is wrong.
 */
export function verifyAgreementSignatures(xml: string, options: VerifyOptions): AgreementSignatures {
  return withAgreement(xml, options.limits ?? defaultAgreementLimits, (doc) => {
    const { providerSignature, countersignature } = locateAgreement(doc);
    if (!providerSignature)
      invalid('provider signature: structure', 'the agreement is not signed: wsag:Context holds no ds:Signature');
    // Both are read before either is checked, so a malformed countersignature is reported as such.
    const provider = readSignature(providerSignature, 'provider signature');
    const initiator = countersignature && readSignature(countersignature, 'initiator countersignature');
    const result: AgreementSignatures = { provider: verifySignature(doc, provider, options) };
    if (initiator) result.initiator = verifySignature(doc, initiator, options);
    return result;
  });
}

function verifySignature(
  doc: XmlDocument,
  signature: SignatureParts,
  { validateChain, at }: VerifyOptions,
): VerifiedSigner {
  const { role } = signature;
  const chain = orderChain(signature.certificates, role);
  const leaf = chain[0] as X509Certificate;
  const method = signatureMethodFor(leaf.publicKey);
  if (typeof method !== 'string') invalid(`${role}: structure`, `the signer's key is refused: ${method.refused}`);
  if (method !== signature.method) {
    invalid(
      `${role}: structure`,
      `ds:SignatureMethod ${signature.method} does not fit the signer's ${leaf.publicKey.asymmetricKeyType} key`,
    );
  }
  if (!timingSafeEqual(referenceDigest(doc, signature.element), signature.digestValue)) {
    invalid(
      `${role}: digest mismatch`,
      'the agreement differs from what was signed (ds:DigestValue does not match its canonical form)',
    );
  }
  if (!verifyBytes(method, leaf.publicKey, canonicalSignedInfo(signature.signedInfo), signature.signatureValue)) {
    invalid(
      `${role}: bad signature value`,
      "ds:SignatureValue does not verify with the key of the signer's certificate",
    );
  }
  try {
    return {
      identity: validateChain(chain, at).identity,
      certificate: leaf,
      signatureValue: signature.signatureValue.toString('base64'),
    };
  } catch (error) {
    return invalid(`${role}: untrusted chain`, error instanceof Error ? error.message : String(error));
  }
}
