import { X509Certificate } from 'node:crypto';
import { XmlElement, type XmlDocument } from 'libxml2-wasm';
import { canonicalXml } from '../xml/canonical.js';
import { NotAuthenticated } from '../domain/errors.js';
import { elementChildren } from '../xml/item-constraint.js';
import { withXml } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { algorithm, sha256, signatureMethods, verifyBytes, type SignatureMethod } from './xml-signature-algorithms.js';

/**
 * WS-Security 1.0 (X.509 Token Profile) for callers behind TLS terminators: a ds:Signature
 * in the wsse:Security header over the Body, every other header and a wsu:Timestamp, each
 * referenced by wsu:Id, with the signer's certificate (and its issuers: proxy chains) in
 * wsse:BinarySecurityToken elements. See docs/security.md "Authentication".
 */
export const wss = {
  x509v3: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3',
  base64: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary',
} as const;

/**
 * How long a signed message is accepted after its wsu:Created when it names no wsu:Expires, and the clock skew allowed.
 */
export const timestampLimits = { maxAgeSeconds: 300, skewSeconds: 60 } as const;

export type ChainCheck = (chain: X509Certificate[], at: Date) => { identity: string };

/**
 * What a verified WS-Security header proves: who signed, the signature (SHA-256 of its value, hex) and until when the
 * message may be accepted.
 */
export interface SignedMessage {
  identity: string;
  signatureDigest: string;
  acceptableUntil: Date;
}

/**
 * What the message's WS-Security signature proves, or undefined when it carries no
 * wsse:Security header. `text` is the envelope as received: it is parsed again keeping
 * whitespace, because the digests cover the exact text. Any flaw throws NotAuthenticated.
 */
export function verifyWsSecurity(text: string, validateChain: ChainCheck, now: Date): SignedMessage | undefined {
  return withXml(
    text,
    'SOAP message',
    (doc) => {
      const envelope = doc.root;
      const header = elementChildren(envelope).find(
        (c) => c.name === 'Header' && c.namespaceUri === envelope.namespaceUri,
      );
      const body = elementChildren(envelope).find((c) => c.name === 'Body' && c.namespaceUri === envelope.namespaceUri);
      const headers = header ? elementChildren(header) : [];
      const security = headers.filter((h) => is(h, ns.wsse, 'Security'));
      if (security.length === 0) return undefined;
      if (security.length > 1) refuse(`the message has ${security.length} wsse:Security headers; one is allowed`);
      if (!body) refuse('the message has no soap:Body');
      return verify(doc, security[0] as XmlElement, body, headers, validateChain, now);
    },
    { keepBlanks: true },
  );
}

function verify(
  doc: XmlDocument,
  security: XmlElement,
  body: XmlElement,
  headers: XmlElement[],
  validateChain: ChainCheck,
  now: Date,
): SignedMessage {
  const parts = elementChildren(security);
  const signatures = parts.filter((p) => is(p, ns.ds, 'Signature'));
  if (signatures.length !== 1) refuse(`wsse:Security must hold exactly one ds:Signature, found ${signatures.length}`);
  const timestamps = parts.filter((p) => is(p, ns.wsu, 'Timestamp'));
  if (timestamps.length !== 1) refuse(`wsse:Security must hold exactly one wsu:Timestamp, found ${timestamps.length}`);
  const tokens = parts.filter((p) => is(p, ns.wsse, 'BinarySecurityToken'));
  const signature = signatures[0] as XmlElement;
  const timestamp = timestamps[0] as XmlElement;
  const expires = checkFreshness(timestamp, now);

  const [signedInfo, signatureValue, keyInfo] = expect(signature, ['SignedInfo', 'SignatureValue', 'KeyInfo']) as [
    XmlElement,
    XmlElement,
    XmlElement,
  ];
  const [c14n, method, ...references] = elementChildren(signedInfo);
  if (!c14n || !is(c14n, ns.ds, 'CanonicalizationMethod') || c14n.attr('Algorithm')?.value !== algorithm.excC14n) {
    refuse(`ds:SignedInfo must start with CanonicalizationMethod ${algorithm.excC14n}`);
  }
  const signatureMethod = method && is(method, ns.ds, 'SignatureMethod') ? method.attr('Algorithm')?.value : undefined;
  if (!signatureMethod || !signatureMethods.includes(signatureMethod))
    refuse(`ds:SignatureMethod must be one of ${signatureMethods.join(', ')}`);

  // Every reference must name exactly one element by wsu:Id; duplicate ids are a wrapping attempt.
  const signed: XmlElement[] = [];
  for (const reference of references) {
    if (!is(reference, ns.ds, 'Reference'))
      refuse(`ds:SignedInfo may hold only ds:Reference after the methods, found ${reference.name}`);
    const uri = reference.attr('URI')?.value ?? '';
    const target = byWsuId(doc, uri, 'ds:Reference URI');
    const [transforms, digestMethod, digestValue] = expect(reference, [
      'Transforms',
      'DigestMethod',
      'DigestValue',
    ]) as [XmlElement, XmlElement, XmlElement];
    const transformList = elementChildren(transforms).map((t) => t.attr('Algorithm')?.value);
    if (transformList.length !== 1 || transformList[0] !== algorithm.excC14n)
      refuse(`ds:Reference ${uri}: the only transform allowed is ${algorithm.excC14n}`);
    if (digestMethod.attr('Algorithm')?.value !== algorithm.sha256)
      refuse(`ds:Reference ${uri}: DigestMethod must be ${algorithm.sha256}`);
    if (!sha256(canonicalXml(target, 'exclusive')).equals(Buffer.from(digestValue.content.trim(), 'base64'))) {
      refuse(`ds:Reference ${uri}: digest mismatch: the ${target.name} element was changed after it was signed`);
    }
    signed.push(target);
  }
  const covered = (element: XmlElement): boolean => signed.some((s) => s.isSameNode(element));
  if (!covered(body)) refuse('the signature does not cover the soap:Body');
  if (!covered(timestamp)) refuse('the signature does not cover the wsu:Timestamp');
  for (const h of headers) {
    if (!h.isSameNode(security) && !covered(h))
      refuse(
        `the signature does not cover the header ${h.prefix ? `${h.prefix}:` : ''}${h.name}: every header ` +
          `must be signed`,
      );
  }

  const chain = signerChain(doc, keyInfo, tokens);
  const signer = chain[0] as X509Certificate;
  const value = Buffer.from(signatureValue.content.trim(), 'base64');
  if (
    !verifyBytes(
      signatureMethod as SignatureMethod,
      signer.publicKey,
      Buffer.from(canonicalXml(signedInfo, 'exclusive'), 'utf8'),
      value,
    )
  ) {
    refuse('ds:SignatureValue does not verify with the certificate in the wsse:BinarySecurityToken');
  }
  try {
    const { identity } = validateChain(chain, now);
    return {
      identity,
      signatureDigest: sha256(value).toString('hex'),
      acceptableUntil: new Date(expires + timestampLimits.skewSeconds * 1000),
    };
  } catch (error) {
    refuse(`the signing certificate is not accepted: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The signer's certificate (KeyInfo/SecurityTokenReference/Reference to a token) first, then the other tokens as its
 * issuers.
 */
function signerChain(doc: XmlDocument, keyInfo: XmlElement, tokens: XmlElement[]): X509Certificate[] {
  const [reference] = elementChildren(keyInfo)
    .filter((c) => is(c, ns.wsse, 'SecurityTokenReference'))
    .flatMap((str) => elementChildren(str))
    .filter((c) => is(c, ns.wsse, 'Reference'));
  const uri = reference?.attr('URI')?.value ?? '';
  const token = byWsuId(doc, uri, 'ds:KeyInfo/wsse:SecurityTokenReference/wsse:Reference URI');
  if (!tokens.some((t) => t.isSameNode(token)))
    refuse(`ds:KeyInfo refers to ${uri}, which is not a wsse:BinarySecurityToken of this wsse:Security header`);
  const certificate = (t: XmlElement): X509Certificate => {
    if (t.attr('ValueType')?.value !== wss.x509v3) refuse(`wsse:BinarySecurityToken ValueType must be ${wss.x509v3}`);
    try {
      return new X509Certificate(Buffer.from(t.content.trim(), 'base64'));
    } catch {
      refuse('a wsse:BinarySecurityToken does not hold a DER X.509 certificate');
    }
  };
  return [certificate(token), ...tokens.filter((t) => !t.isSameNode(token)).map(certificate)];
}

/** Refuses a stale or future message; returns when it expires (ms since the epoch). */
function checkFreshness(timestamp: XmlElement, now: Date): number {
  const created = Date.parse(child(timestamp, ns.wsu, 'Created')?.content.trim() ?? '');
  if (Number.isNaN(created)) refuse('wsu:Timestamp needs a wsu:Created time');
  const expiresText = child(timestamp, ns.wsu, 'Expires')?.content.trim();
  const expires = expiresText === undefined ? created + timestampLimits.maxAgeSeconds * 1000 : Date.parse(expiresText);
  const skew = timestampLimits.skewSeconds * 1000;
  if (created > now.getTime() + skew) refuse(`wsu:Created ${new Date(created).toISOString()} is in the future`);
  if (Number.isNaN(expires) || expires + skew < now.getTime())
    refuse(`the message expired at ${Number.isNaN(expires) ? expiresText : new Date(expires).toISOString()}`);
  if (expires - created > timestampLimits.maxAgeSeconds * 1000)
    refuse(`wsu:Expires may be at most ${timestampLimits.maxAgeSeconds} s after wsu:Created`);
  return expires;
}

/**
 * The one element a same-document reference ("#id") names by wsu:Id; the id's syntax is checked before it goes into
 * XPath.
 */
function byWsuId(doc: XmlDocument, uri: string, what: string): XmlElement {
  if (!/^#[\w.-]+$/.test(uri)) refuse(`${what} "${uri}" must name an element by wsu:Id ("#id")`);
  const id = uri.slice(1);
  const found = doc.find(`//*[@wsu:Id='${id}']`, { wsu: ns.wsu });
  if (found.length !== 1 || !(found[0] instanceof XmlElement))
    refuse(`wsu:Id "${id}" must name exactly one element; ${found.length} do`);
  return found[0];
}

function expect(element: XmlElement, names: string[]): XmlElement[] {
  const list = elementChildren(element);
  const got = list.map((c) => c.name).join(', ');
  if (list.length !== names.length || list.some((c, i) => !is(c, ns.ds, names[i] as string)))
    refuse(`ds:${element.name} must hold ${names.join(', ')}; it holds ${got || 'nothing'}`);
  return list;
}

function child(element: XmlElement, namespace: string, name: string): XmlElement | undefined {
  return elementChildren(element).find((c) => is(c, namespace, name));
}

function is(node: XmlElement, namespace: string, name: string): boolean {
  return node.namespaceUri === namespace && node.name === name;
}

function refuse(problem: string): never {
  throw new NotAuthenticated(`WS-Security: ${problem}`);
}
