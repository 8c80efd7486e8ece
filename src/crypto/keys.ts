import { createPublicKey, generateKeyPair as generateNodeKeyPair, webcrypto, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

/** The key types wsag-server creates: RSA 2048 or ECDSA on P-256. */
export type KeyType = 'rsa' | 'ec';
export const keyTypes: readonly KeyType[] = ['rsa', 'ec'];

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

const generate = promisify(generateNodeKeyPair);

export async function generateKeyPair(type: KeyType): Promise<KeyPair> {
  return type === 'rsa' ? generate('rsa', { modulusLength: 2048 }) : generate('ec', { namedCurve: 'P-256' });
}

/** The type of a key, for proxies that take their issuer's (RSA keys of any size, EC keys on any curve count). */
export function keyTypeOf(key: KeyObject): KeyType {
  if (key.asymmetricKeyType === 'rsa') return 'rsa';
  if (key.asymmetricKeyType === 'ec') return 'ec';
  throw new Error(
    `unsupported key type ${key.asymmetricKeyType ?? 'unknown'}: wsag-server signs with RSA or ECDSA keys`,
  );
}

/**
 * The WebCrypto algorithm a key signs certificates with: RSASSA-PKCS1-v1_5 or ECDSA, with the hash that fits the key.
 */
export function signingAlgorithm(key: KeyObject): RsaHashedImportParams | (EcKeyImportParams & { hash: string }) {
  if (keyTypeOf(key) === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const byCurve: Record<string, { namedCurve: string; hash: string }> = {
    prime256v1: { namedCurve: 'P-256', hash: 'SHA-256' },
    secp384r1: { namedCurve: 'P-384', hash: 'SHA-384' },
    secp521r1: { namedCurve: 'P-521', hash: 'SHA-512' },
  };
  const params = curve === undefined ? undefined : byCurve[curve];
  if (!params) throw new Error(`unsupported elliptic curve ${curve ?? 'unknown'}: use P-256, P-384 or P-521`);
  return { name: 'ECDSA', ...params };
}

/** The private key as a WebCrypto key that can sign (what the certificate generator needs). */
export async function webCryptoSigningKey(key: KeyObject): Promise<CryptoKey> {
  const der = key.export({ type: 'pkcs8', format: 'der' });
  return (await webcrypto.subtle.importKey('pkcs8', der, signingAlgorithm(key), false, ['sign'])) as CryptoKey;
}

/** The SubjectPublicKeyInfo DER of a key (private keys give their public half). */
export function publicKeyDer(key: KeyObject): Buffer {
  return (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'der' });
}
