/**
 * A thread of DocumentThreads: signs agreements with the key and chain it was started with
 * (workerData, as PEM) and reads the offers of CreateAgreement requests, exactly as the
 * server's own thread would. Each task is one exported function (piscina's `name`).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import { WsagError } from '../domain/errors.js';
import { signAgreement, type SigningCredentials } from '../crypto/xml-signature.js';
import { readAgreementOfferInput, type AgreementOfferInput } from '../soap/agreement-offer-input.js';
import { readEnvelope } from '../soap/envelope.js';
import { parseXml } from '../xml/libxml.js';
import type { XmlOfferParts } from '../xml/offer-reader.js';

export interface DocumentWorkerData {
  signing?: { keyPem: string; chainPem: string[] };
}

/** An offer read, or the fault reading it raised (classes do not cross threads: code and message do). */
export type OfferReading = { parts: XmlOfferParts } | { fault: { code: string; message: string } };

const { signing } = workerData as DocumentWorkerData;
const credentials: SigningCredentials | undefined = signing && {
  key: createPrivateKey(signing.keyPem),
  chain: signing.chainPem.map((pem) => new X509Certificate(pem)),
};

export function sign(document: string): string {
  if (!credentials) throw new Error('this document thread was started without signing credentials');
  return signAgreement(document, credentials);
}

/** `text` passed the raw guard and parsed on the server's thread; it is parsed again here. */
export function readAgreementOffer({ text, input }: { text: string; input: AgreementOfferInput }): OfferReading {
  const doc = parseXml(text, 'SOAP message');
  try {
    return { parts: readAgreementOfferInput(readEnvelope(doc).body, input).toParts() };
  } catch (error) {
    if (error instanceof WsagError) return { fault: { code: error.code, message: error.message } };
    throw error;
  } finally {
    doc.dispose();
  }
}
