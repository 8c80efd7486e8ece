import type { KeyObject, X509Certificate } from 'node:crypto';
import type { Name } from '@peculiar/asn1-x509';
import { createCa, issueEndEntity, type Issued } from '../../../src/crypto/certificate-authority.js';
import { buildCertificate, randomSerial } from '../../../src/crypto/certificate-builder.js';
import { certificateFacts } from '../../../src/crypto/certificate-facts.js';
import { appendCommonName, nameFromParts } from '../../../src/crypto/distinguished-name.js';
import { generateKeyPair, type KeyType } from '../../../src/crypto/keys.js';
import { proxyCertInfoExtension } from '../../../src/crypto/proxy.js';
import { x509 } from '../../../src/crypto/x509-library.js';

export const hour = 3600_000;

export interface TestPki {
  ca: Issued;
  alice: Issued;
  now: Date;
}

/** A CA (valid 30 days) and alice's user certificate (valid 10 days), both from `now`. */
export async function testPki(keyType: KeyType = 'ec', now = new Date(), caName = 'Test CA'): Promise<TestPki> {
  const ca = await createCa({
    subject: nameFromParts([
      ['C', 'DE'],
      ['O', 'Grid'],
      ['CN', caName],
    ]),
    keyType,
    days: 30,
    now,
  });
  const alice = await issueEndEntity({
    ca,
    subject: nameFromParts([
      ['C', 'DE'],
      ['O', 'Grid'],
      ['CN', 'alice'],
    ]),
    keyType,
    days: 10,
    now,
    purpose: 'client',
  });
  return { ca, alice, now };
}

/**
 * One thing wrong with a proxy (or none): the test helper that builds proxies breaking one
 * RFC 3820 rule at a time. Everything not named here is as issueProxy makes it.
 */
export interface ProxyFlaw {
  /** Replace the subject (default: the issuer's subject plus CN=<serial>). */
  subject?: Name;
  /** Sign with this key instead of the issuer's. */
  signWith?: KeyObject;
  notBefore?: Date;
  notAfter?: Date;
  pathLength?: number;
  /** Add basicConstraints with this cA value. */
  basicConstraintsCa?: boolean;
  /** 'absent': no ProxyCertInfo; 'non-critical': ProxyCertInfo not marked critical. */
  proxyCertInfo?: 'absent' | 'non-critical';
  policyLanguage?: string;
  keyUsage?: number;
  /** Further extensions (a subjectAltName, an unknown critical one, ...). */
  extraExtensions?: x509.Extension[];
}

/** A proxy of `issuer`, valid from its issuer's notBefore for 12 hours unless the flaw says otherwise. */
export async function makeProxy(issuer: Issued, flaw: ProxyFlaw = {}): Promise<Issued> {
  const issuerFacts = certificateFacts(issuer.certificate);
  const keys = await generateKeyPair('ec');
  const serial = randomSerial();
  const extensions: x509.Extension[] = [
    new x509.KeyUsagesExtension(flaw.keyUsage ?? x509.KeyUsageFlags.digitalSignature, true),
  ];
  if (flaw.proxyCertInfo !== 'absent') {
    extensions.push(
      proxyCertInfoExtension({
        pathLength: flaw.pathLength,
        critical: flaw.proxyCertInfo !== 'non-critical',
        ...(flaw.policyLanguage ? { policyLanguage: flaw.policyLanguage } : {}),
      }),
    );
  }
  if (flaw.basicConstraintsCa !== undefined)
    extensions.push(new x509.BasicConstraintsExtension(flaw.basicConstraintsCa, undefined, true));
  extensions.push(...(flaw.extraExtensions ?? []));
  const notBefore = flaw.notBefore ?? issuerFacts.notBefore;
  const certificate = await buildCertificate({
    subject: flaw.subject ?? appendCommonName(issuerFacts.subject, serial.decimal),
    issuer: issuer.certificate,
    signingKey: flaw.signWith ?? issuer.privateKey,
    subjectKey: keys.publicKey,
    serialHex: serial.hex,
    notBefore,
    notAfter: flaw.notAfter ?? new Date(Math.min(notBefore.getTime() + 12 * hour, issuerFacts.notAfter.getTime())),
    extensions,
  });
  return { certificate, privateKey: keys.privateKey };
}

/** The subject of `certificate`, parsed. */
export function subjectOf(certificate: X509Certificate): Name {
  return certificateFacts(certificate).subject;
}
