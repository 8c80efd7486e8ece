import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject, X509Certificate } from 'node:crypto';
import { certificatePem, certificatesFromPem, privateKeyFromPem, privateKeyPem } from './pem.js';

/** A certificate with its private key and the chain of its issuers (leaf first, without the leaf). */
export interface Credential {
  certificate: X509Certificate;
  privateKey: KeyObject;
  /**
   * The issuing certificates after the leaf, as the file listed them (for a proxy: the issuer proxy or user
   * certificate, ...).
   */
  chain: X509Certificate[];
}

/**
 * A credential from PEM text: the first CERTIFICATE is the leaf, the others its chain; the key
 * comes from `keyPem`, else from `certPem` itself (a Globus proxy file holds both).
 * Throws an Error naming `source` when a part is missing or the key does not match.
 */
export function credentialFromPem(
  certPem: string,
  keyPem: string | undefined,
  options: { source?: string; keySource?: string; passphrase?: string } = {},
): Credential {
  const source = options.source ?? 'the certificate file';
  const [certificate, ...chain] = certificatesFromPem(certPem, source);
  if (!certificate) throw new Error(`${source} holds no CERTIFICATE block`);
  const keySource = keyPem !== undefined ? (options.keySource ?? 'the key file') : source;
  const privateKey = privateKeyFromPem(keyPem ?? certPem, keySource, options.passphrase);
  if (!privateKey) throw new Error(`${keySource} holds no PRIVATE KEY block`);
  if (!certificate.checkPrivateKey(privateKey))
    throw new Error(`the private key in ${keySource} does not belong to the certificate in ${source}`);
  return { certificate, privateKey, chain };
}

/**
 * A credential from files: `certFile` (certificate, then its chain), `keyFile` (default: the key inside `certFile`).
 */
export function loadCredential(certFile: string, keyFile?: string, passphrase?: string): Credential {
  const certPem = readText(certFile);
  const keyPem = keyFile === undefined ? undefined : readText(keyFile);
  return credentialFromPem(certPem, keyPem, {
    source: certFile,
    ...(keyFile !== undefined ? { keySource: keyFile } : {}),
    ...(passphrase !== undefined ? { passphrase } : {}),
  });
}

/** The Globus proxy file layout: the proxy certificate, its private key, then the issuer chain (leaf first). */
export function proxyFilePem(credential: Credential): string {
  return [
    certificatePem(credential.certificate),
    privateKeyPem(credential.privateKey),
    ...credential.chain.map(certificatePem),
  ].join('');
}

/**
 * Writes `text` to `file` readable by its owner only (0600), replacing it atomically: the
 * text goes to a new temporary file first, so a key never sits in a file others can read.
 */
export function writePrivateFile(file: string, text: string): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const temporary = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    fs.writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    fs.chmodSync(temporary, 0o600); // exactly 0600, whatever the umask
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `no file ${file}` : `cannot read ${file}: ${code ?? (error as Error).message}`);
  }
}
