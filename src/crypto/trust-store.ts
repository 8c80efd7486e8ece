import fs from 'node:fs';
import type { X509Certificate } from 'node:crypto';
import { CertificateRejected } from './certificate-rejected.js';
import {
  certificateFacts,
  hasKeyUsage,
  isSelfIssued,
  keyUsageBits,
  type CertificateFacts,
} from './certificate-facts.js';
import { sameName } from './distinguished-name.js';
import { checkExtensions, checkSignature, checkValidity } from './path-checks.js';
import { certificatesFromPem } from './pem.js';
import { validateProxies } from './proxy-rules.js';

/** A chain that passed validation: who it speaks for, and how. */
export interface ValidatedChain {
  /** The end-entity certificate's subject in OpenSSL oneline form (`/C=DE/O=Grid/CN=Alice`), as in grid-mapfiles. */
  identity: string;
  endEntity: X509Certificate;
  /** How many proxy certificates stand between the caller and the end entity (0: the end-entity certificate itself). */
  proxies: number;
}

/** Longer chains are refused before any signature is checked: each check costs, and real chains are short. */
export const maxChainLength = 16;

/**
 * The trusted CA certificates, and the validation of callers' certificate chains against
 * them: ordinary X.509 path validation of the end-entity certificate (RFC 5280 6.1, without
 * policies, name constraints or revocation), then the RFC 3820 rules for the proxies below it.
 * Every certificate in the store is a trust anchor; a certificate is never trusted because it
 * is in the presented chain.
 */
export class TrustStore {
  private readonly anchors: CertificateFacts[];

  private constructor(certificates: X509Certificate[]) {
    this.anchors = certificates.map((c) => certificateFacts(c));
  }

  /** A store of every CERTIFICATE in `pem` (a CA bundle); other blocks and text between blocks are ignored. */
  static fromPem(pem: string, source = 'the CA bundle'): TrustStore {
    const certificates = certificatesFromPem(pem, source);
    if (certificates.length === 0)
      throw new Error(`${source} holds no CERTIFICATE: a trust store needs at least one CA certificate in PEM`);
    return new TrustStore(certificates);
  }

  static fromFile(file: string): TrustStore {
    let pem: string;
    try {
      pem = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(
        `cannot read the CA bundle ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    return TrustStore.fromPem(pem, file);
  }

  /** The trusted certificates, in the order they were loaded. */
  get certificates(): X509Certificate[] {
    return this.anchors.map((a) => a.certificate);
  }

  /**
   * Validates `chain` (leaf first: proxies, then the end-entity certificate, then any
   * intermediate CAs; the root may follow) at time `at`. Throws CertificateRejected naming
   * the certificate and the rule that failed.
   */
  validate(chain: X509Certificate[], at: Date): ValidatedChain {
    if (chain.length === 0) throw new CertificateRejected('chain-empty', undefined, 'no certificate presented');
    if (chain.length > maxChainLength) {
      throw new CertificateRejected(
        'chain-length',
        undefined,
        `the chain has ${chain.length} certificates; at most ${maxChainLength} are accepted`,
      );
    }
    const presented = chain.map((certificate, index) => {
      try {
        return certificateFacts(certificate);
      } catch (error) {
        throw new CertificateRejected(
          'malformed',
          undefined,
          `certificate ${index + 1} of the chain cannot be read: ${(error as Error).message}`,
        );
      }
    });
    const { path, anchor } = this.buildPath(presented);

    // The end entity is the lowest certificate below the CAs: every certificate under it can
    // only have been signed with an end entity's (or a proxy's) key, so it is judged as a proxy.
    let endEntityIndex = path.length - 1;
    while (endEntityIndex > 0 && (path[endEntityIndex] as CertificateFacts).isCa) endEntityIndex--;
    const endEntity = path[endEntityIndex] as CertificateFacts;
    if (endEntity.isCa) {
      throw new CertificateRejected(
        'end-entity',
        endEntity.dn,
        `certificate ${endEntity.dn}: is a CA certificate (basicConstraints cA=true), not an end entity; ` +
          `callers present end-entity or proxy certificates`,
      );
    }

    this.validateCaPath(path.slice(endEntityIndex), anchor, at);
    if (endEntity.proxyCertInfo) {
      throw new CertificateRejected(
        'proxy-issuer-ca',
        endEntity.dn,
        `proxy ${endEntity.dn}: issued by the CA ${endEntity.issuerDn}; a proxy must be issued by an end ` +
          `entity or another proxy, never by a CA (RFC 3820 3.1)`,
      );
    }
    validateProxies(path.slice(0, endEntityIndex), endEntity, at);
    return { identity: endEntity.dn, endEntity: endEntity.certificate, proxies: endEntityIndex };
  }

  /**
   * The certificates from the leaf up to (not including) the trust anchor, and the anchor:
   * the chain is followed while each certificate's issuer is the next one; it ends at the
   * first certificate that is itself in the store, or at one whose issuer is.
   */
  private buildPath(presented: CertificateFacts[]): { path: CertificateFacts[]; anchor: CertificateFacts } {
    const path: CertificateFacts[] = [];
    for (let i = 0; i < presented.length; i++) {
      const current = presented[i] as CertificateFacts;
      const trusted = this.anchors.find((a) => a.certificate.raw.equals(current.certificate.raw));
      if (trusted) {
        if (path.length === 0) {
          throw new CertificateRejected(
            'end-entity',
            current.dn,
            `certificate ${current.dn}: is a trusted CA certificate itself, not an end entity; callers ` +
              `present end-entity or proxy certificates`,
          );
        }
        return { path, anchor: trusted };
      }
      path.push(current);
      const next = presented[i + 1];
      if (next && !sameName(current.issuer, next.subject)) {
        throw new CertificateRejected(
          'chain-order',
          current.dn,
          `certificate ${current.dn}: its issuer is ${current.issuerDn}, but the next certificate in the ` +
            `chain is ${next.dn} (the chain must run leaf first, each certificate followed by its issuer)`,
        );
      }
      if (next) continue;
      const named = this.anchors.filter((a) => sameName(a.subject, current.issuer));
      const issuer = named.find((a) => current.certificate.verify(a.certificate.publicKey));
      if (!issuer) {
        const why =
          named.length > 0
            ? `the trusted CA of that name did not sign it (another key)`
            : 'that CA is not in the trust store';
        throw new CertificateRejected(
          'untrusted-ca',
          current.dn,
          `certificate ${current.dn}: its issuer ${current.issuerDn} is not a trusted CA (${why}), so the ` +
            `chain does not lead to a trusted CA`,
        );
      }
      return { path, anchor: issuer };
    }
    throw new Error('unreachable: the loop returns at the last certificate');
  }

  /**
   * RFC 5280 path validation from the anchor down to the end entity (`caPath` is leaf first: end entity,
   * intermediates).
   */
  private validateCaPath(caPath: CertificateFacts[], anchor: CertificateFacts, at: Date): void {
    checkValidity(anchor, 'trusted CA certificate', at);
    for (let j = caPath.length - 1; j >= 0; j--) {
      const current = caPath[j] as CertificateFacts;
      const issuer = caPath[j + 1] ?? anchor;
      const role = j === 0 ? 'certificate' : 'CA certificate';
      const isAnchor = issuer === anchor;
      // A trusted version 1 root has no extensions at all: being in the store makes it a CA.
      const issuerIsCa =
        issuer.isCa || (isAnchor && issuer.basicConstraints === undefined && issuer.extensions.length === 0);
      if (!issuerIsCa) {
        throw new CertificateRejected(
          'ca-flag',
          current.dn,
          `${role} ${current.dn}: its issuer ${issuer.dn} is not a CA (no basicConstraints cA=true) and ` +
            `cannot issue certificates (RFC 5280 6.1.4 (k))`,
        );
      }
      if (issuer.keyUsage !== undefined && !hasKeyUsage(issuer, keyUsageBits.keyCertSign)) {
        throw new CertificateRejected(
          'ca-key-usage',
          current.dn,
          `${role} ${current.dn}: its issuer ${issuer.dn} has a keyUsage without keyCertSign (RFC 5280 6.1.4 (n))`,
        );
      }
      const pathLength = issuer.basicConstraints?.pathLength;
      const intermediatesBelow = caPath.slice(1, j + 1).filter((c) => !isSelfIssued(c)).length;
      if (pathLength !== undefined && intermediatesBelow > pathLength) {
        throw new CertificateRejected(
          'ca-path-length',
          current.dn,
          `${role} ${current.dn}: its issuer ${issuer.dn} allows ${pathLength} intermediate CA(s) below it ` +
            `(basicConstraints pathLenConstraint), the chain has ${intermediatesBelow} (RFC 5280 6.1.4 (m))`,
        );
      }
      checkSignature(current, issuer, role);
      checkValidity(current, role, at);
      checkExtensions(current, role);
    }
  }
}
