import crypto, { type KeyObject, type X509Certificate } from 'node:crypto';
import { XmlElement, type XmlDocument } from 'libxml2-wasm';
import { canonicalXml } from '../xml/canonical.js';
import { withXml } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { algorithm, sha256, signatureMethodFor, signBytes } from './xml-signature-algorithms.js';
import { wss } from './ws-security.js';

export interface SecureEnvelopeOptions {
  soapNamespace: string;
  /** Header elements (XML text, one element each, without wsu:Id); all are signed. */
  headers: string[];
  body: string;
  /** The signer: its key and certificate chain, leaf first (a proxy, then its issuers; no root CA). */
  key: KeyObject;
  chain: X509Certificate[];
  now: Date;
  /** How long the message stays valid (wsu:Expires), seconds. */
  ttlSeconds?: number;
}

/** The digests cover the exact text, whitespace included. */
const keep = { keepBlanks: true };

/**
 * A SOAP envelope signed with WS-Security as src/crypto/ws-security.ts verifies it: every
 * header, the Body and a Timestamp referenced by wsu:Id and digested in exclusive canonical
 * form; the certificate chain in BinarySecurityTokens.
 */
export function secureEnvelope(options: SecureEnvelopeOptions): string {
  const method = signatureMethodFor(options.key);
  if (typeof method !== 'string') throw new Error(`cannot sign with this key: ${method.refused}`);
  const ids = options.headers.map((_, i) => `h${i + 1}`);
  const headers = options.headers.map((h, i) => h.replace(/^<([\w.:-]+)/, `<$1 wsu:Id="${ids[i]}"`));
  const created = options.now;
  const expires = new Date(created.getTime() + (options.ttlSeconds ?? 300) * 1000);
  const tokens = options.chain.map(
    (c, i) =>
      `<wsse:BinarySecurityToken wsu:Id="x509-${i}" ValueType="${wss.x509v3}" EncodingType="${wss.base64}">` +
      `${c.raw.toString('base64')}</wsse:BinarySecurityToken>`,
  );
  const timestamp =
    `<wsu:Timestamp wsu:Id="ts"><wsu:Created>${created.toISOString()}</wsu:Created>` +
    `<wsu:Expires>${expires.toISOString()}</wsu:Expires></wsu:Timestamp>`;
  const referenced = [...ids, 'ts', 'body'];
  const signedInfo = (digests: string[]): string =>
    `<ds:SignedInfo><ds:CanonicalizationMethod Algorithm="${algorithm.excC14n}"/><ds:SignatureMethod ` +
    `Algorithm="${method}"/>` +
    referenced
      .map(
        (id, i) =>
          `<ds:Reference URI="#${id}"><ds:Transforms><ds:Transform Algorithm="${algorithm.excC14n}"/></ds:Transforms>` +
          `<ds:DigestMethod Algorithm="${algorithm.sha256}"/><ds:DigestValue>${digests[i] ?? ''}` +
          `</ds:DigestValue></ds:Reference>`,
      )
      .join('') +
    '</ds:SignedInfo>';
  const envelope = (digests: string[], signatureValue: string): string =>
    `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${options.soapNamespace}" xmlns:wsu="` +
    `${ns.wsu}"><soap:Header>` +
    headers.join('') +
    `<wsse:Security xmlns:wsse="${ns.wsse}" soap:mustUnderstand="1">${tokens.join('')}${timestamp}` +
    `<ds:Signature xmlns:ds="${ns.ds}">${signedInfo(digests)}<ds:SignatureValue>${signatureValue}</ds:SignatureValue>` +
    `<ds:KeyInfo><wsse:SecurityTokenReference><wsse:Reference URI="#x509-0" ValueType="${wss.x509v3}"/>` +
    `</wsse:SecurityTokenReference></ds:KeyInfo></ds:Signature>` +
    `</wsse:Security></soap:Header><soap:Body wsu:Id="body">${options.body}</soap:Body></soap:Envelope>`;

  const digest = (doc: XmlDocument, id: string): string => {
    const [element] = doc.find(`//*[@wsu:Id='${id}']`, { wsu: ns.wsu });
    if (!(element instanceof XmlElement)) throw new Error(`no element with wsu:Id ${id}`);
    return sha256(canonicalXml(element, 'exclusive')).toString('base64');
  };
  const digests = withXml(envelope([], ''), 'SOAP message', (doc) => referenced.map((id) => digest(doc, id)), keep);
  const signature = withXml(
    envelope(digests, ''),
    'SOAP message',
    (doc) => {
      const info = doc.get('//ds:SignedInfo', { ds: ns.ds });
      if (!(info instanceof XmlElement)) throw new Error('no ds:SignedInfo');
      return signBytes(method, options.key, Buffer.from(canonicalXml(info, 'exclusive'), 'utf8')).toString('base64');
    },
    keep,
  );
  return envelope(digests, signature);
}

/** A fresh wsa:MessageID value. */
export function messageId(): string {
  return `urn:uuid:${crypto.randomUUID()}`;
}
