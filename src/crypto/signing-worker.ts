/**
 * A worker thread of the SigningPool: signs agreements with the key and chain it was started
 * with (workerData, as PEM), exactly as the server's own thread would (signAgreement).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import { signAgreement } from './xml-signature.js';

const { keyPem, chainPem } = workerData as { keyPem: string; chainPem: string[] };
const credentials = { key: createPrivateKey(keyPem), chain: chainPem.map((pem) => new X509Certificate(pem)) };

export default function sign(document: string): string {
  return signAgreement(document, credentials);
}
