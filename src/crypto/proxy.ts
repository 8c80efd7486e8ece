import type { KeyObject, X509Certificate } from 'node:crypto';
import { buildCertificate, randomSerial } from './certificate-builder.js';
import { certificateFacts, hasKeyUsage, keyUsageBits } from './certificate-facts.js';
import { appendCommonName } from './distinguished-name.js';
import { generateKeyPair, keyTypeOf, type KeyType } from './keys.js';
import { encodeProxyCertInfo, inheritAllOid, proxyCertInfoOid } from './proxy-cert-info.js';
import { x509 } from './x509-library.js';

export interface IssueProxyOptions {
  /** The user's end-entity certificate, or a proxy (for a proxy of a proxy). */
  issuerCert: X509Certificate;
  issuerKey: KeyObject;
  /** Lifetime in hours (fractions allowed); cut at the issuer's notAfter. */
  hours: number;
  /** pCPathLenConstraint: how many proxies may be issued below this one (0: none); absent: no limit. */
  pathLength?: number;
  /** The new key's type; default: the issuer key's type. */
  keyType?: KeyType;
  /** The time of issue (default: now). */
  now?: Date;
}

export interface IssuedProxy {
  certificate: X509Certificate;
  privateKey: KeyObject;
}

/**
 * Proxies start a little in the past, so a relying party whose clock is slightly behind accepts them (as Globus does).
 */
export const clockSkewMs = 5 * 60 * 1000;

/** Why a proxy cannot be issued: the issuer is a CA, expired, limited by a path length, or the options are wrong. */
export class ProxyIssueError extends Error {
  override readonly name = 'ProxyIssueError';
}

/**
 * Issues an RFC 3820 proxy certificate with a new key: subject = the issuer's subject plus
 * CN=<serial number in decimal> (as Globus does), ProxyCertInfo critical with
 * id-ppl-inheritAll, keyUsage digitalSignature, no CA flag, valid from five minutes ago
 * (never before the issuer) for `hours`, never past the issuer's notAfter.
 */
export async function issueProxy(options: IssueProxyOptions): Promise<IssuedProxy> {
  const { issuerCert, issuerKey, hours, pathLength } = options;
  const now = options.now ?? new Date();
  if (!Number.isFinite(hours) || hours <= 0)
    throw new ProxyIssueError(`the proxy lifetime must be a positive number of hours, got ${hours}`);
  if (pathLength !== undefined && (!Number.isInteger(pathLength) || pathLength < 0)) {
    throw new ProxyIssueError(`the proxy path length must be a whole number, 0 or more, got ${pathLength}`);
  }
  const issuer = certificateFacts(issuerCert);
  if (!issuerCert.checkPrivateKey(issuerKey))
    throw new ProxyIssueError(`the private key does not belong to the certificate ${issuer.dn}`);
  if (issuer.isCa)
    throw new ProxyIssueError(
      `${issuer.dn} is a CA certificate; proxies are issued from end-entity (user) certificates or other ` +
        `proxies (RFC 3820 3.1)`,
    );
  if (issuer.keyUsage !== undefined && !hasKeyUsage(issuer, keyUsageBits.digitalSignature)) {
    throw new ProxyIssueError(
      `${issuer.dn} has a keyUsage without digitalSignature, so it cannot sign proxies (RFC 3820 3.1)`,
    );
  }
  if (now > issuer.notAfter) throw new ProxyIssueError(`${issuer.dn} expired at ${issuer.notAfter.toISOString()}`);
  if (now < issuer.notBefore)
    throw new ProxyIssueError(`${issuer.dn} is not valid before ${issuer.notBefore.toISOString()}`);
  const issuerLimit = issuer.proxyCertInfo?.info?.pathLength;
  if (issuerLimit === 0)
    throw new ProxyIssueError(
      `${issuer.dn} is a proxy with pCPathLenConstraint 0: it may not issue further proxies (RFC 3820 3.8.1)`,
    );

  const keys = await generateKeyPair(options.keyType ?? keyTypeOf(issuerKey));
  const serial = randomSerial();
  // X.509 times hold whole seconds: round outward, so the proxy lasts at least `hours` from now.
  const notBefore = new Date(
    Math.max(Math.floor((now.getTime() - clockSkewMs) / 1000) * 1000, issuer.notBefore.getTime()),
  );
  const notAfter = new Date(
    Math.min(Math.ceil((now.getTime() + hours * 3600_000) / 1000) * 1000, issuer.notAfter.getTime()),
  );
  const certificate = await buildCertificate({
    subject: appendCommonName(issuer.subject, serial.decimal),
    issuer: issuerCert,
    signingKey: issuerKey,
    subjectKey: keys.publicKey,
    serialHex: serial.hex,
    notBefore,
    notAfter,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      proxyCertInfoExtension({ pathLength, critical: true }),
    ],
  });
  return { certificate, privateKey: keys.privateKey };
}

/** The ProxyCertInfo extension (critical unless a test says otherwise), with id-ppl-inheritAll unless told. */
export function proxyCertInfoExtension(
  options: { pathLength?: number | undefined; critical?: boolean; policyLanguage?: string } = {},
): x509.Extension {
  const value = encodeProxyCertInfo({
    ...(options.pathLength !== undefined ? { pathLength: options.pathLength } : {}),
    policyLanguage: options.policyLanguage ?? inheritAllOid,
  });
  return new x509.Extension(proxyCertInfoOid, options.critical ?? true, value);
}
