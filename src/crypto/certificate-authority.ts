import type { KeyObject, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { Name } from '@peculiar/asn1-x509';
import { buildCertificate, randomSerial } from './certificate-builder.js';
import { certificateFacts } from './certificate-facts.js';
import { generateKeyPair, publicKeyDer, type KeyType } from './keys.js';
import { x509 } from './x509-library.js';

/** A certificate with its private key. */
export interface Issued {
  certificate: X509Certificate;
  privateKey: KeyObject;
}

const day = 24 * 3600_000;

/** A self-signed root CA: basicConstraints cA (critical), keyUsage keyCertSign and cRLSign. */
export async function createCa(options: { subject: Name; keyType: KeyType; days: number; now: Date }): Promise<Issued> {
  const keys = await generateKeyPair(options.keyType);
  const certificate = await buildCertificate({
    subject: options.subject,
    signingKey: keys.privateKey,
    subjectKey: keys.publicKey,
    serialHex: randomSerial().hex,
    notBefore: options.now,
    notAfter: new Date(options.now.getTime() + options.days * day),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await subjectKeyIdentifier(keys.publicKey),
    ],
  });
  return { certificate, privateKey: keys.privateKey };
}

export interface EndEntityOptions {
  ca: Issued;
  subject: Name;
  keyType: KeyType;
  days: number;
  now: Date;
  /** serverAuth for a server (with its DNS names and IP addresses as subjectAltName), clientAuth for a user. */
  purpose: 'server' | 'client';
  /** Host names and IP addresses for a server's subjectAltName. */
  altNames?: string[];
}

/**
 * An end-entity certificate signed by `ca`: not a CA, keyUsage digitalSignature (plus
 * keyEncipherment for RSA keys), extendedKeyUsage for its purpose; never valid past the CA.
 */
export async function issueEndEntity(options: EndEntityOptions): Promise<Issued> {
  const keys = await generateKeyPair(options.keyType);
  const usages =
    x509.KeyUsageFlags.digitalSignature | (options.keyType === 'rsa' ? x509.KeyUsageFlags.keyEncipherment : 0);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(usages, true),
    new x509.ExtendedKeyUsageExtension(
      [options.purpose === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await subjectKeyIdentifier(keys.publicKey),
    await authorityKeyIdentifier(options.ca.certificate),
  ];
  if (options.altNames?.length) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        options.altNames.map((n) => ({ type: isIP(n) ? ('ip' as const) : ('dns' as const), value: n })),
        false,
      ),
    );
  }
  const caNotAfter = certificateFacts(options.ca.certificate).notAfter.getTime();
  const certificate = await buildCertificate({
    subject: options.subject,
    issuer: options.ca.certificate,
    signingKey: options.ca.privateKey,
    subjectKey: keys.publicKey,
    serialHex: randomSerial().hex,
    notBefore: options.now,
    notAfter: new Date(Math.min(options.now.getTime() + options.days * day, caNotAfter)),
    extensions,
  });
  return { certificate, privateKey: keys.privateKey };
}

async function subjectKeyIdentifier(publicKey: KeyObject): Promise<x509.Extension> {
  return x509.SubjectKeyIdentifierExtension.create(new Uint8Array(publicKeyDer(publicKey)).buffer);
}

async function authorityKeyIdentifier(ca: X509Certificate): Promise<x509.Extension> {
  const ski = new x509.X509Certificate(new Uint8Array(ca.raw)).getExtension(x509.SubjectKeyIdentifierExtension);
  return ski
    ? new x509.AuthorityKeyIdentifierExtension(ski.keyId)
    : x509.AuthorityKeyIdentifierExtension.create(new Uint8Array(publicKeyDer(ca.publicKey)).buffer);
}
