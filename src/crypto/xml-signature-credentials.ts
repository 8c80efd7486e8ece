import type { KeyObject, X509Certificate } from 'node:crypto';
import { signatureMethodFor, type SignatureMethod } from './xml-signature-algorithms.js';
import { invalid, type SignatureRole } from './xml-signature-structure.js';

/** The key and certificates a party signs with: the key's certificate first, then its issuers. */
export interface SigningCredentials {
  key: KeyObject;
  chain: X509Certificate[];
}

/**
 * The signing key or its certificates cannot make an agreement signature (a configuration error, not the document's
 * fault).
 */
export class SigningCredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningCredentialsError';
  }
}

function selfSigned(certificate: X509Certificate): boolean {
  return certificate.checkIssued(certificate) && certificate.verify(certificate.publicKey);
}

/**
 * Checks the signer's credentials and returns the signature method and the certificates
 * for ds:KeyInfo: the key is private, RSA 2048+ or EC P-256, and belongs to the first
 * certificate; each certificate is issued by the next (leaf first). A self-signed root at
 * the end is left out: verifiers must trust the root they hold, never one the document brings.
 */
export function checkSigningCredentials({ key, chain }: SigningCredentials): {
  method: SignatureMethod;
  keyInfoChain: X509Certificate[];
} {
  // A server signs every agreement with the same credentials: checking them once is enough.
  const known = checked.get(chain);
  if (known?.key === key) return known.result;
  const result = checkedCredentials(key, chain);
  checked.set(chain, { key, result });
  return result;
}

const checked = new WeakMap<
  X509Certificate[],
  { key: KeyObject; result: { method: SignatureMethod; keyInfoChain: X509Certificate[] } }
>();

function checkedCredentials(
  key: KeyObject,
  chain: X509Certificate[],
): { method: SignatureMethod; keyInfoChain: X509Certificate[] } {
  if (key.type !== 'private') throw new SigningCredentialsError(`signing needs a private key, not a ${key.type} key`);
  const method = signatureMethodFor(key);
  if (typeof method !== 'string') throw new SigningCredentialsError(`the signing key is refused: ${method.refused}`);
  const [leaf] = chain;
  if (!leaf)
    throw new SigningCredentialsError(
      "the signer's certificate chain is empty; it must start with the key's certificate",
    );
  if (!leaf.checkPrivateKey(key))
    throw new SigningCredentialsError(
      `the signing key does not belong to the first certificate of the chain (${leaf.subject.replace(/\n/g, ', ')})`,
    );
  chain.slice(1).forEach((issuer, i) => {
    if (!(chain[i] as X509Certificate).checkIssued(issuer)) {
      throw new SigningCredentialsError(
        `certificate ${i + 1} of the chain is not issued by certificate ${i + 2}: give the chain leaf first`,
      );
    }
  });
  return { method, keyInfoChain: [leaf, ...chain.slice(1).filter((c) => !selfSigned(c))] };
}

/**
 * The certificates of a ds:X509Data ordered leaf first: the leaf is the one certificate that
 * issued none of the others, then each next one is the issuer of the previous. Certificates
 * that are not on that path are refused (the order in X509Data carries no meaning).
 */
export function orderChain(certificates: X509Certificate[], role: SignatureRole): X509Certificate[] {
  const issuesAnother = (c: X509Certificate) => certificates.some((other) => other !== c && other.checkIssued(c));
  const leaves = certificates.filter((c) => !issuesAnother(c));
  if (leaves.length !== 1)
    invalid(
      `${role}: structure`,
      `ds:X509Data does not hold one certificate chain (${leaves.length} certificates issued none of the others)`,
    );
  const chain = [leaves[0] as X509Certificate];
  const rest = certificates.filter((c) => c !== leaves[0]);
  for (;;) {
    const current = chain[chain.length - 1] as X509Certificate;
    const index = rest.findIndex((c) => current.checkIssued(c));
    if (index < 0) break;
    chain.push(...rest.splice(index, 1));
  }
  if (rest.length > 0)
    invalid(`${role}: structure`, `ds:X509Data holds ${rest.length} certificate(s) outside the signer's chain`);
  return chain;
}
