/**
 * A certificate chain failed validation. `rule` names the rule in a stable, short form
 * (e.g. `proxy-subject`, `signature`, `untrusted-ca`); the message names the certificate's
 * subject, what is wrong, and the rule's source (RFC 5280 or RFC 3820 section).
 */
export class CertificateRejected extends Error {
  override readonly name = 'CertificateRejected';

  constructor(
    readonly rule: string,
    /** The subject (OpenSSL oneline form) of the certificate that failed, when there is one. */
    readonly subject: string | undefined,
    message: string,
  ) {
    super(message);
  }
}
