import { CertificateRejected } from './certificate-rejected.js';
import { extensionOids, type CertificateFacts } from './certificate-facts.js';

// The checks every certificate of a path passes, CA, end entity or proxy; `role` names it in messages.

/**
 * Critical extensions the validator understands (RFC 5280 4.2: any other critical extension rejects the certificate).
 */
const understoodCritical = new Set<string>([
  extensionOids.basicConstraints,
  extensionOids.keyUsage,
  extensionOids.extKeyUsage,
  extensionOids.subjectAltName,
  extensionOids.issuerAltName,
  extensionOids.subjectKeyIdentifier,
  extensionOids.authorityKeyIdentifier,
  extensionOids.certificatePolicies,
  extensionOids.proxyCertInfo,
]);

/** Signed with the issuer's key (RFC 5280 6.1.3 (a)(1)). */
export function checkSignature(current: CertificateFacts, issuer: CertificateFacts, role: string): void {
  if (!current.certificate.verify(issuer.certificate.publicKey)) {
    throw new CertificateRejected(
      'signature',
      current.dn,
      `${role} ${current.dn}: its signature does not verify with the public key of its issuer ${issuer.dn} ` +
        `(RFC 5280 6.1.3 (a)(1))`,
    );
  }
}

/** Valid at `at` (RFC 5280 6.1.3 (a)(2)). */
export function checkValidity(current: CertificateFacts, role: string, at: Date): void {
  if (at < current.notBefore || at > current.notAfter) {
    const state = at > current.notAfter ? 'has expired' : 'is not yet valid';
    throw new CertificateRejected(
      'validity',
      current.dn,
      `${role} ${current.dn}: ${state} at ${at.toISOString()}: valid from ${current.notBefore.toISOString()} ` +
        `to ${current.notAfter.toISOString()} (RFC 5280 6.1.3 (a)(2))`,
    );
  }
}

/** No extension twice, no critical extension the validator does not understand (RFC 5280 4.2). */
export function checkExtensions(current: CertificateFacts, role: string): void {
  const seen = new Set<string>();
  for (const extension of current.extensions) {
    if (seen.has(extension.oid)) {
      throw new CertificateRejected(
        'duplicate-extension',
        current.dn,
        `${role} ${current.dn}: has the extension ${extension.oid} more than once (RFC 5280 4.2)`,
      );
    }
    seen.add(extension.oid);
    if (extension.critical && !understoodCritical.has(extension.oid)) {
      throw new CertificateRejected(
        'critical-extension',
        current.dn,
        `${role} ${current.dn}: has the critical extension ${extension.oid}, which this server does not ` +
          `process (RFC 5280 4.2)`,
      );
    }
  }
}
