import { randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import type { Name } from '@peculiar/asn1-x509';
import { nameDer, subjectName } from './distinguished-name.js';
import { publicKeyDer, signingAlgorithm, webCryptoSigningKey } from './keys.js';
import { x509 } from './x509-library.js';

/** Everything a certificate says, spelled out: the builder adds nothing of its own. */
export interface CertificateSpec {
  subject: Name;
  /** The issuing certificate; absent for a self-signed certificate (issuer = subject). */
  issuer?: X509Certificate;
  /** The key that signs: the issuer's private key (the subject's own, when self-signed). */
  signingKey: KeyObject;
  /** The subject's key (a private key gives its public half). */
  subjectKey: KeyObject;
  /** Positive serial number as hex digits; see randomSerial(). */
  serialHex: string;
  notBefore: Date;
  notAfter: Date;
  extensions: x509.Extension[];
}

/** Signs a version 3 certificate as `spec` describes (SHA-256 for RSA and P-256 keys). */
export async function buildCertificate(spec: CertificateSpec): Promise<X509Certificate> {
  const issuerName = spec.issuer ? subjectName(spec.issuer) : spec.subject;
  const created = await x509.X509CertificateGenerator.create({
    serialNumber: spec.serialHex,
    subject: new x509.Name(arrayBuffer(nameDer(spec.subject))),
    issuer: new x509.Name(arrayBuffer(nameDer(issuerName))),
    notBefore: spec.notBefore,
    notAfter: spec.notAfter,
    publicKey: arrayBuffer(publicKeyDer(spec.subjectKey)),
    signingKey: await webCryptoSigningKey(spec.signingKey),
    signingAlgorithm: signingAlgorithm(spec.signingKey),
    extensions: spec.extensions,
  });
  return new X509Certificate(Buffer.from(created.rawData));
}

/**
 * A random positive serial number of 63 bits: unique in practice, and small enough to
 * be written in decimal as a proxy's CN. Returned as hex (for the certificate) and decimal.
 */
export function randomSerial(): { hex: string; decimal: string } {
  const bytes = randomBytes(8);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  if (bytes.every((b) => b === 0)) bytes[7] = 1;
  const value = bytes.readBigUInt64BE();
  return { hex: value.toString(16).padStart(2, '0'), decimal: value.toString(10) };
}

/** A copy of the bytes as a plain ArrayBuffer (the type the generator's parameters take). */
function arrayBuffer(bytes: Buffer): ArrayBuffer {
  return new Uint8Array(bytes).buffer;
}
