import type { X509Certificate } from 'node:crypto';
import type { Name } from '@peculiar/asn1-x509';
import { gridDn, parseCertificate, sameName } from './distinguished-name.js';
import { decodeProxyCertInfo, proxyCertInfoOid, type ProxyCertInfo } from './proxy-cert-info.js';
import { x509 } from './x509-library.js';

export const extensionOids = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  certificatePolicies: '2.5.29.32',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  proxyCertInfo: proxyCertInfoOid,
  /** The ProxyCertInfo OID of the pre-RFC draft (Globus Toolkit 3 proxies). */
  draftProxyCertInfo: '1.3.6.1.4.1.3536.1.222',
} as const;

/** keyUsage bits as @peculiar/x509 numbers them. */
export const keyUsageBits = x509.KeyUsageFlags;

/** What path validation needs to know about one certificate, parsed once. */
export interface CertificateFacts {
  certificate: X509Certificate;
  subject: Name;
  issuer: Name;
  /** The subject in OpenSSL oneline form, for messages and identities. */
  dn: string;
  issuerDn: string;
  notBefore: Date;
  notAfter: Date;
  /** Absent when the certificate has no basicConstraints extension. */
  basicConstraints?: { ca: boolean; pathLength?: number };
  /** keyUsage bits (x509.KeyUsageFlags); absent when the certificate has no keyUsage extension. */
  keyUsage?: number;
  /** The ProxyCertInfo extension, when present: whether it is critical, and its content or why it cannot be read. */
  proxyCertInfo?: { critical: boolean; info?: ProxyCertInfo; malformed?: string };
  extensions: { oid: string; critical: boolean }[];
  isCa: boolean;
}

/** Parses `certificate`; throws an Error naming what cannot be read. */
export function certificateFacts(certificate: X509Certificate): CertificateFacts {
  const key = certificate.fingerprint256;
  const known = factsByFingerprint.get(key);
  if (known) return known;
  const facts = readCertificateFacts(certificate);
  if (factsByFingerprint.size >= factsCacheSize)
    factsByFingerprint.delete(factsByFingerprint.keys().next().value as string);
  factsByFingerprint.set(key, facts);
  return facts;
}

/**
 * Reading a certificate's ASN.1 in JavaScript costs milliseconds, and every TLS request and
 * signature check presents the same few chains again: facts are kept by the DER's SHA-256.
 */
const factsByFingerprint = new Map<string, CertificateFacts>();
const factsCacheSize = 2000;

function readCertificateFacts(certificate: X509Certificate): CertificateFacts {
  const parsed = parseCertificate(certificate);
  const cert = new x509.X509Certificate(new Uint8Array(certificate.raw));
  const subject = parsed.tbsCertificate.subject;
  const issuer = parsed.tbsCertificate.issuer;
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  const usage = cert.getExtension(x509.KeyUsagesExtension);
  const proxyExtension = cert.getExtension(proxyCertInfoOid);
  let proxyCertInfo: CertificateFacts['proxyCertInfo'];
  if (proxyExtension) {
    try {
      proxyCertInfo = { critical: proxyExtension.critical, info: decodeProxyCertInfo(proxyExtension.value) };
    } catch (error) {
      proxyCertInfo = { critical: proxyExtension.critical, malformed: (error as Error).message };
    }
  }
  return {
    certificate,
    subject,
    issuer,
    dn: gridDn(subject),
    issuerDn: gridDn(issuer),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    ...(basic
      ? {
          basicConstraints: {
            ca: basic.ca,
            ...(basic.pathLength !== undefined ? { pathLength: basic.pathLength } : {}),
          },
        }
      : {}),
    ...(usage ? { keyUsage: usage.usages } : {}),
    ...(proxyCertInfo ? { proxyCertInfo } : {}),
    extensions: cert.extensions.map((e) => ({ oid: e.type, critical: e.critical })),
    isCa: basic?.ca === true,
  };
}

/** Whether the certificate names itself as its issuer (self-issued, RFC 5280 6.1). */
export function isSelfIssued(facts: CertificateFacts): boolean {
  return sameName(facts.subject, facts.issuer);
}

export function hasKeyUsage(facts: CertificateFacts, bit: number): boolean {
  return facts.keyUsage !== undefined && (facts.keyUsage & bit) !== 0;
}
