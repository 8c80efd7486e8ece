import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

/** One `-----BEGIN LABEL----- ... -----END LABEL-----` block, as text (headers included). */
export interface PemBlock {
  label: string;
  text: string;
}

const blockPattern = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The PEM blocks of `pem` in order; text between blocks (comments in CA bundles) is ignored. */
export function pemBlocks(pem: string): PemBlock[] {
  return [...pem.matchAll(blockPattern)].map((match) => ({ label: match[1] ?? '', text: `${match[0]}\n` }));
}

/** Every CERTIFICATE block of `pem`, in order (leaf first in a chain file). `source` names the text in errors. */
export function certificatesFromPem(pem: string, source = 'PEM text'): X509Certificate[] {
  const blocks = pemBlocks(pem);
  const certificates: X509Certificate[] = [];
  blocks.forEach((block, index) => {
    if (block.label !== 'CERTIFICATE') return;
    try {
      certificates.push(new X509Certificate(block.text));
    } catch (error) {
      throw new Error(
        `${source}: PEM block ${index + 1} (CERTIFICATE) is not a valid X.509 certificate: ${(error as Error).message}`,
      );
    }
  });
  return certificates;
}

/**
 * The first private key block of `pem` (PKCS#8 `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`,
 * PKCS#1 `RSA PRIVATE KEY` or SEC1 `EC PRIVATE KEY`); undefined when there is none.
 */
export function privateKeyFromPem(pem: string, source = 'PEM text', passphrase?: string): KeyObject | undefined {
  const block = pemBlocks(pem).find((b) => b.label.endsWith('PRIVATE KEY'));
  if (!block) return undefined;
  const encrypted = block.label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type: *4,ENCRYPTED/.test(block.text);
  if (encrypted && passphrase === undefined)
    throw new Error(`${source}: the private key is encrypted; a passphrase is needed`);
  try {
    return createPrivateKey(passphrase === undefined ? block.text : { key: block.text, passphrase });
  } catch (error) {
    const reason = encrypted ? 'wrong passphrase or damaged key' : (error as Error).message;
    throw new Error(`${source}: cannot read the private key (${block.label}): ${reason}`);
  }
}

/** The certificate in PEM (Node gives it with a trailing newline). */
export function certificatePem(certificate: X509Certificate): string {
  return certificate.toString();
}

/** An unencrypted PKCS#8 PEM of the key. */
export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}
