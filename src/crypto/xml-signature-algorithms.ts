import crypto, { type KeyObject } from 'node:crypto';

/** The XML-DSig namespace. */
export const dsNs = 'http://www.w3.org/2000/09/xmldsig#';

/** The only algorithms an agreement signature may name (an allow-list: anything else is refused). */
export const algorithm = {
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  envelopedSignature: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  ecdsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256',
} as const;

export type SignatureMethod = typeof algorithm.rsaSha256 | typeof algorithm.ecdsaSha256;

export const signatureMethods: readonly string[] = [algorithm.rsaSha256, algorithm.ecdsaSha256];

/** The transforms of the one Reference, in this order. */
export const referenceTransforms: readonly string[] = [algorithm.envelopedSignature, algorithm.excC14n];

const minRsaBits = 2048;
/** node:crypto's name for NIST P-256. */
const p256 = 'prime256v1';

/**
 * The signature method a key is used with: RSA keys of 2048 bits or more sign with
 * rsa-sha256 (PKCS#1 v1.5), EC P-256 keys with ecdsa-sha256. Any other key gives the reason
 * it is refused.
 */
export function signatureMethodFor(key: KeyObject): SignatureMethod | { refused: string } {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    const bits = details.modulusLength ?? 0;
    return bits >= minRsaBits
      ? algorithm.rsaSha256
      : { refused: `an RSA key of ${bits} bits is too short (at least ${minRsaBits})` };
  }
  if (key.asymmetricKeyType === 'ec') {
    return details.namedCurve === p256
      ? algorithm.ecdsaSha256
      : { refused: `EC keys must be on P-256, not ${details.namedCurve ?? 'an unnamed curve'}` };
  }
  return { refused: `${key.asymmetricKeyType ?? 'this'} keys are not accepted (RSA 2048+ or EC P-256)` };
}

/** XML-DSig's ECDSA SignatureValue is r||s (RFC 4050 / XML-DSig 1.1), not DER. */
function keyUse(method: SignatureMethod, key: KeyObject): { key: KeyObject; dsaEncoding?: 'ieee-p1363' } {
  return method === algorithm.ecdsaSha256 ? { key, dsaEncoding: 'ieee-p1363' } : { key };
}

export function signBytes(method: SignatureMethod, privateKey: KeyObject, data: Buffer): Buffer {
  return crypto.sign('sha256', data, keyUse(method, privateKey));
}

export function verifyBytes(method: SignatureMethod, publicKey: KeyObject, data: Buffer, signature: Buffer): boolean {
  return crypto.verify('sha256', data, keyUse(method, publicKey), signature);
}

export function sha256(data: Buffer | string): Buffer {
  return crypto.createHash('sha256').update(data).digest();
}
