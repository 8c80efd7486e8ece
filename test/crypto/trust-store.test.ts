import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueEndEntity, type Issued } from '../../src/crypto/certificate-authority.js';
import { buildCertificate, randomSerial } from '../../src/crypto/certificate-builder.js';
import { certificateFacts } from '../../src/crypto/certificate-facts.js';
import { CertificateRejected } from '../../src/crypto/certificate-rejected.js';
import { appendCommonName, gridDn, nameFromParts } from '../../src/crypto/distinguished-name.js';
import { generateKeyPair } from '../../src/crypto/keys.js';
import { independentOid } from '../../src/crypto/proxy-cert-info.js';
import { issueProxy } from '../../src/crypto/proxy.js';
import { maxChainLength, TrustStore } from '../../src/crypto/trust-store.js';
import { x509 } from '../../src/crypto/x509-library.js';
import { opensslVerify } from './support/openssl.js';
import { temporaryDirectories } from './support/temp-dirs.js';
import { hour, makeProxy, subjectOf, testPki, type ProxyFlaw, type TestPki } from './support/pki.js';

/** The CertificateRejected that `action` throws (fails the test when it throws nothing or something else). */
function rejection(action: () => unknown): CertificateRejected {
  try {
    action();
  } catch (error) {
    if (error instanceof CertificateRejected) return error;
    throw error;
  }
  throw new Error('expected a CertificateRejected, but the chain was accepted');
}

const tempDir = temporaryDirectories('wsag-trust-');

describe('TrustStore.validate: valid chains', () => {
  let pki: TestPki;
  let store: TrustStore;
  beforeAll(async () => {
    pki = await testPki('ec');
    store = TrustStore.fromPem(pki.ca.certificate.toString());
  });

  it('the user certificate alone: its subject is the identity, no proxies', () => {
    const result = store.validate([pki.alice.certificate], pki.now);
    expect(result.identity).toBe('/C=DE/O=Grid/CN=alice');
    expect(result.proxies).toBe(0);
    expect(result.endEntity.raw.equals(pki.alice.certificate.raw)).toBe(true);
  });

  it("a proxy: the identity is still the end entity's", async () => {
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 12,
      now: pki.now,
    });
    const result = store.validate([proxy.certificate, pki.alice.certificate], new Date(pki.now.getTime() + hour));
    expect(result).toMatchObject({ identity: '/C=DE/O=Grid/CN=alice', proxies: 1 });
    expect(result.endEntity.raw.equals(pki.alice.certificate.raw)).toBe(true);
  });

  it('a proxy of a proxy, and one more below a path length of 1', async () => {
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 12,
      pathLength: 1,
      now: pki.now,
    });
    const second = await issueProxy({
      issuerCert: proxy.certificate,
      issuerKey: proxy.privateKey,
      hours: 6,
      now: pki.now,
    });
    const result = store.validate([second.certificate, proxy.certificate, pki.alice.certificate], pki.now);
    expect(result).toMatchObject({ identity: '/C=DE/O=Grid/CN=alice', proxies: 2 });
  });

  it('the chain may end with the trusted root itself', () => {
    expect(store.validate([pki.alice.certificate, pki.ca.certificate], pki.now).identity).toBe('/C=DE/O=Grid/CN=alice');
  });

  it('an intermediate CA in the chain, and RSA keys', async () => {
    const rsa = await testPki('rsa', pki.now);
    const intermediate = await issueIntermediate(rsa.ca, 'Intermediate CA');
    const bob = await issueEndEntity({
      ca: intermediate,
      subject: nameFromParts([
        ['O', 'Grid'],
        ['CN', 'bob'],
      ]),
      keyType: 'rsa',
      days: 5,
      now: pki.now,
      purpose: 'client',
    });
    const proxy = await issueProxy({ issuerCert: bob.certificate, issuerKey: bob.privateKey, hours: 2, now: pki.now });
    const rsaStore = TrustStore.fromPem(rsa.ca.certificate.toString());
    expect(rsaStore.validate([proxy.certificate, bob.certificate, intermediate.certificate], pki.now)).toMatchObject({
      identity: '/O=Grid/CN=bob',
      proxies: 1,
    });
  });

  it('a store from a file with several CAs and text between them', async () => {
    const other = await testPki('ec', pki.now);
    const file = path.join(tempDir(), 'bundle.pem');
    fs.writeFileSync(
      file,
      `# other CA\n${other.ca.certificate.toString()}\n# our CA\n${pki.ca.certificate.toString()}`,
    );
    const bundle = TrustStore.fromFile(file);
    expect(bundle.certificates).toHaveLength(2);
    expect(bundle.validate([pki.alice.certificate], pki.now).identity).toBe('/C=DE/O=Grid/CN=alice');
    expect(bundle.validate([other.alice.certificate], pki.now).identity).toBe('/C=DE/O=Grid/CN=alice');
  });

  it('refuses an empty bundle and a missing file, naming them', () => {
    expect(() => TrustStore.fromPem('no certificates here', 'ca.pem')).toThrow('ca.pem holds no CERTIFICATE');
    expect(() => TrustStore.fromFile('/nonexistent/ca.pem')).toThrow(
      'cannot read the CA bundle /nonexistent/ca.pem: ENOENT',
    );
  });
});

describe('TrustStore.validate: each broken rule is named (and OpenSSL agrees where it has an opinion)', () => {
  let pki: TestPki;
  let store: TrustStore;
  beforeAll(async () => {
    pki = await testPki('ec');
    store = TrustStore.fromPem(pki.ca.certificate.toString());
  });

  /** A proxy of alice with one flaw: what our validator says, and whether OpenSSL accepts it. */
  async function flawedProxy(flaw: ProxyFlaw, at = pki.now) {
    const proxy = await makeProxy(pki.alice, flaw);
    const error = rejection(() => store.validate([proxy.certificate, pki.alice.certificate], at));
    const openssl = opensslVerify({
      ca: [pki.ca.certificate],
      untrusted: [pki.alice.certificate],
      leaf: proxy.certificate,
      at,
    });
    return { proxy, error, openssl };
  }

  it('the flawless proxy from the same helper passes both (the baseline the other cases break)', async () => {
    const proxy = await makeProxy(pki.alice);
    expect(store.validate([proxy.certificate, pki.alice.certificate], pki.now).proxies).toBe(1);
    expect(
      opensslVerify({
        ca: [pki.ca.certificate],
        untrusted: [pki.alice.certificate],
        leaf: proxy.certificate,
        at: pki.now,
      }).ok,
    ).toBe(true);
  });

  it("a subject that does not extend its issuer's by one CN (RFC 3820 3.4)", async () => {
    const subject = nameFromParts([
      ['C', 'DE'],
      ['O', 'Grid'],
      ['CN', 'mallory'],
      ['CN', '12345'],
    ]);
    const { error, openssl } = await flawedProxy({ subject });
    expect(error.rule).toBe('proxy-subject');
    expect(error.message).toBe(
      "proxy /C=DE/O=Grid/CN=mallory/CN=12345: subject does not extend its issuer's subject /C=DE/O=Grid/CN=alice by one CN (RFC 3820 3.4)",
    );
    expect(openssl.ok).toBe(false);
    expect(openssl.output).toMatch(/proxy subject name violation/i);
  });

  it('a subject with two CNs added, or a last RDN that is not a CN', async () => {
    const two = await flawedProxy({
      subject: appendCommonName(appendCommonName(subjectOf(pki.alice.certificate), '1'), '2'),
    });
    expect(two.error.rule).toBe('proxy-subject');
    const notCn = await flawedProxy({
      subject: nameFromParts([
        ['C', 'DE'],
        ['O', 'Grid'],
        ['CN', 'alice'],
        ['OU', '12345'],
      ]),
    });
    expect(notCn.error.rule).toBe('proxy-subject');
    expect(two.openssl.ok).toBe(false);
    expect(notCn.openssl.ok).toBe(false);
  });

  it('an expired proxy: validated after its notAfter', async () => {
    const proxy = await makeProxy(pki.alice, { notAfter: new Date(pki.now.getTime() + hour) });
    const at = new Date(pki.now.getTime() + 2 * hour);
    const error = rejection(() => store.validate([proxy.certificate, pki.alice.certificate], at));
    expect(error.rule).toBe('validity');
    expect(error.subject).toBe(gridDn(proxy.certificate));
    expect(error.message).toMatch(
      new RegExp(
        `^proxy ${escape(gridDn(proxy.certificate))}: has expired at ${escape(at.toISOString())}: valid from .* \\(RFC 5280 6\\.1\\.3 \\(a\\)\\(2\\)\\)$`,
      ),
    );
    const openssl = opensslVerify({
      ca: [pki.ca.certificate],
      untrusted: [pki.alice.certificate],
      leaf: proxy.certificate,
      at,
    });
    expect(openssl.ok).toBe(false);
    expect(openssl.output).toMatch(/certificate has expired/);
  });

  it("a proxy signed by a different key than its issuer's", async () => {
    const stranger = await generateKeyPair('ec');
    const { error, openssl } = await flawedProxy({ signWith: stranger.privateKey });
    expect(error.rule).toBe('signature');
    expect(error.message).toContain(
      'its signature does not verify with the public key of its issuer /C=DE/O=Grid/CN=alice',
    );
    expect(openssl.ok).toBe(false);
    expect(openssl.output).toMatch(/signature failure/i);
  });

  it('a proxy beyond a path length constraint (pCPathLenConstraint 0 above it)', async () => {
    const limited = await makeProxy(pki.alice, { pathLength: 0 });
    const below = await makeProxy(limited);
    const error = rejection(() =>
      store.validate([below.certificate, limited.certificate, pki.alice.certificate], pki.now),
    );
    expect(error.rule).toBe('proxy-path-length');
    expect(error.message).toBe(
      `proxy ${gridDn(below.certificate)}: is proxy number 1 below ${gridDn(limited.certificate)}, whose pCPathLenConstraint allows 0 proxy certificate(s) below it (RFC 3820 3.8.1)`,
    );
    const openssl = opensslVerify({
      ca: [pki.ca.certificate],
      untrusted: [limited.certificate, pki.alice.certificate],
      leaf: below.certificate,
      at: pki.now,
    });
    expect(openssl.ok).toBe(false);
    expect(openssl.output).toMatch(/path length/i);
  });

  it('a path length of 1 two levels up stops the third proxy', async () => {
    const first = await makeProxy(pki.alice, { pathLength: 1 });
    const second = await makeProxy(first);
    const third = await makeProxy(second);
    expect(store.validate([second.certificate, first.certificate, pki.alice.certificate], pki.now).proxies).toBe(2);
    const error = rejection(() =>
      store.validate([third.certificate, second.certificate, first.certificate, pki.alice.certificate], pki.now),
    );
    expect(error.rule).toBe('proxy-path-length');
    expect(error.subject).toBe(gridDn(third.certificate));
  });

  it('a proxy without ProxyCertInfo', async () => {
    const { error, openssl } = await flawedProxy({ proxyCertInfo: 'absent' });
    expect(error.rule).toBe('proxy-cert-info');
    expect(error.message).toMatch(
      /: has no ProxyCertInfo extension \(1\.3\.6\.1\.5\.5\.7\.1\.14\), yet it is issued by \/C=DE\/O=Grid\/CN=alice, which is not a CA .*\(RFC 3820 3\.8\)$/,
    );
    // To OpenSSL it is an ordinary certificate whose issuer is no CA.
    expect(openssl.ok).toBe(false);
  });

  it('a proxy whose ProxyCertInfo is not critical (OpenSSL does not check this)', async () => {
    const { error } = await flawedProxy({ proxyCertInfo: 'non-critical' });
    expect(error.rule).toBe('proxy-cert-info');
    expect(error.message).toContain('its ProxyCertInfo extension is not marked critical (RFC 3820 3.8)');
  });

  it('a proxy with cA=true', async () => {
    const { error, openssl } = await flawedProxy({ basicConstraintsCa: true });
    expect(error.rule).toBe('proxy-ca-flag');
    expect(error.message).toContain(
      ': has basicConstraints cA=true; a proxy certificate must not be a CA (RFC 3820 3.7)',
    );
    expect(openssl.ok).toBe(false);
  });

  it('a proxy with cA=true in the middle of a chain is named, not the one below it', async () => {
    const middle = await makeProxy(pki.alice, { basicConstraintsCa: true });
    const below = await makeProxy(middle);
    const error = rejection(() =>
      store.validate([below.certificate, middle.certificate, pki.alice.certificate], pki.now),
    );
    expect(error.rule).toBe('proxy-ca-flag');
    expect(error.subject).toBe(gridDn(middle.certificate));
  });

  it('a proxy issued directly by a CA', async () => {
    const subject = appendCommonName(subjectOf(pki.ca.certificate), '777');
    const proxy = await makeProxy(pki.ca, { subject });
    const error = rejection(() => store.validate([proxy.certificate], pki.now));
    expect(error.rule).toBe('proxy-issuer-ca');
    expect(error.message).toContain(
      `proxy ${gridDn(proxy.certificate)}: issued by the CA /C=DE/O=Grid/CN=Test CA; a proxy must be issued by an end entity or another proxy, never by a CA (RFC 3820 3.1)`,
    );
  });

  it('a proxy policy other than inheritAll (an independent proxy)', async () => {
    const { error } = await flawedProxy({ policyLanguage: independentOid });
    expect(error.rule).toBe('proxy-policy');
    expect(error.message).toContain(`its proxy policy language ${independentOid} is not accepted`);
  });

  it('a proxy whose keyUsage allows signing certificates', async () => {
    const { error } = await flawedProxy({
      keyUsage: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign,
    });
    expect(error.rule).toBe('proxy-key-usage');
  });

  it('a proxy with a subjectAltName', async () => {
    const { error, openssl } = await flawedProxy({
      extraExtensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'evil.example' }])],
    });
    expect(error.rule).toBe('proxy-alt-name');
    expect(openssl.ok).toBe(false);
  });

  it('a proxy that outlives its issuer', async () => {
    const aliceEnd = certificateFacts(pki.alice.certificate).notAfter.getTime();
    const { error } = await flawedProxy({ notAfter: new Date(aliceEnd + hour) });
    expect(error.rule).toBe('proxy-validity');
    expect(error.message).toContain("is not within its issuer /C=DE/O=Grid/CN=alice's");
  });

  it('a proxy with an unknown critical extension', async () => {
    const { error, openssl } = await flawedProxy({
      extraExtensions: [new x509.Extension('1.2.3.4.5', true, new Uint8Array([5, 0]))],
    });
    expect(error.rule).toBe('critical-extension');
    expect(error.message).toContain(
      'has the critical extension 1.2.3.4.5, which this server does not process (RFC 5280 4.2)',
    );
    expect(openssl.ok).toBe(false);
  });

  it('a chain to an unknown CA', async () => {
    const stranger = await testPki('ec', pki.now, 'Other CA');
    const error = rejection(() => store.validate([stranger.alice.certificate], pki.now));
    expect(error.rule).toBe('untrusted-ca');
    expect(error.message).toBe(
      'certificate /C=DE/O=Grid/CN=alice: its issuer /C=DE/O=Grid/CN=Other CA is not a trusted CA (that CA is not in the trust store), so the chain does not lead to a trusted CA',
    );
    expect(opensslVerify({ ca: [pki.ca.certificate], untrusted: [], leaf: stranger.alice.certificate }).ok).toBe(false);
  });

  it("a CA with our CA's name but another key, even when the chain brings it along: never trusted for being presented", async () => {
    const impostor = await testPki('ec', pki.now);
    const error = rejection(() => store.validate([impostor.alice.certificate], pki.now));
    expect(error.rule).toBe('untrusted-ca');
    expect(error.message).toContain('is not a trusted CA (the trusted CA of that name did not sign it (another key))');
    const withRoot = rejection(() => store.validate([impostor.alice.certificate, impostor.ca.certificate], pki.now));
    expect(withRoot.rule).toBe('untrusted-ca');
    expect(withRoot.subject).toBe('/C=DE/O=Grid/CN=Test CA');
    const openssl = opensslVerify({
      ca: [pki.ca.certificate],
      untrusted: [impostor.ca.certificate],
      leaf: impostor.alice.certificate,
    });
    expect(openssl.ok).toBe(false);
  });

  it('an empty chain, and one longer than the limit', () => {
    expect(rejection(() => store.validate([], pki.now)).rule).toBe('chain-empty');
    const long = rejection(() =>
      store.validate(
        Array.from({ length: maxChainLength + 1 }, () => pki.alice.certificate),
        pki.now,
      ),
    );
    expect(long.rule).toBe('chain-length');
    expect(long.message).toBe(
      `the chain has ${maxChainLength + 1} certificates; at most ${maxChainLength} are accepted`,
    );
  });

  it('certificates out of order', async () => {
    const proxy = await makeProxy(pki.alice);
    const error = rejection(() => store.validate([pki.alice.certificate, proxy.certificate], pki.now));
    expect(error.rule).toBe('chain-order');
  });

  it('an end-entity certificate that has expired or is not yet valid', async () => {
    const later = new Date(pki.now.getTime() + 11 * 24 * hour);
    const expired = rejection(() => store.validate([pki.alice.certificate], later));
    expect(expired.rule).toBe('validity');
    expect(expired.message).toMatch(/^certificate \/C=DE\/O=Grid\/CN=alice: has expired at /);
    const future = await issueEndEntity({
      ca: pki.ca,
      subject: nameFromParts([['CN', 'erin']]),
      keyType: 'ec',
      days: 1,
      now: new Date(pki.now.getTime() + 2 * hour),
      purpose: 'client',
    });
    const early = rejection(() => store.validate([future.certificate], new Date(pki.now.getTime() + hour)));
    expect(early.rule).toBe('validity');
    expect(early.message).toMatch(/^certificate \/CN=erin: is not yet valid at /);
    // The CA itself is checked too.
    const beforeCa = rejection(() => store.validate([pki.alice.certificate], new Date(pki.now.getTime() - hour)));
    expect(beforeCa.message).toMatch(/^trusted CA certificate \/C=DE\/O=Grid\/CN=Test CA: is not yet valid at /);
  });

  it('a CA certificate presented as the caller, and the trusted root itself', async () => {
    const intermediate = await issueIntermediate(pki.ca, 'Sub CA');
    expect(rejection(() => store.validate([intermediate.certificate], pki.now)).rule).toBe('end-entity');
    expect(rejection(() => store.validate([pki.ca.certificate], pki.now)).rule).toBe('end-entity');
  });

  it('an intermediate whose keyUsage lacks keyCertSign, and a CA path length exceeded', async () => {
    const noSign = await issueIntermediate(pki.ca, 'No-sign CA', { keyUsage: x509.KeyUsageFlags.cRLSign });
    const user = await issueEndEntity({
      ca: noSign,
      subject: nameFromParts([['CN', 'carol']]),
      keyType: 'ec',
      days: 1,
      now: pki.now,
      purpose: 'client',
    });
    const keyUsage = rejection(() => store.validate([user.certificate, noSign.certificate], pki.now));
    expect(keyUsage.rule).toBe('ca-key-usage');
    expect(keyUsage.message).toBe(
      'certificate /CN=carol: its issuer /C=DE/O=Grid/CN=No-sign CA has a keyUsage without keyCertSign (RFC 5280 6.1.4 (n))',
    );

    const limitedRoot = await createCa({
      subject: nameFromParts([['CN', 'Limited Root']]),
      keyType: 'ec',
      days: 2,
      now: pki.now,
    });
    // createCa sets no path length: make an intermediate with pathLength 0, then one more CA under it.
    const level1 = await issueIntermediate(limitedRoot, 'Level 1', { pathLength: 0 });
    const level2 = await issueIntermediate(level1, 'Level 2');
    const dave = await issueEndEntity({
      ca: level2,
      subject: nameFromParts([['CN', 'dave']]),
      keyType: 'ec',
      days: 1,
      now: pki.now,
      purpose: 'client',
    });
    const limitedStore = TrustStore.fromPem(limitedRoot.certificate.toString());
    const pathLength = rejection(() =>
      limitedStore.validate([dave.certificate, level2.certificate, level1.certificate], pki.now),
    );
    expect(pathLength.rule).toBe('ca-path-length');
    expect(pathLength.subject).toBe('/C=DE/O=Grid/CN=Level 2');
  });
});

/** An intermediate CA under `parent` (keyCertSign unless told; optional pathLenConstraint). */
async function issueIntermediate(
  parent: Issued,
  cn: string,
  options: { keyUsage?: number; pathLength?: number } = {},
): Promise<Issued> {
  const keys = await generateKeyPair('ec');
  const now = certificateFacts(parent.certificate).notBefore;
  const certificate = await buildCertificate({
    subject: nameFromParts([
      ['C', 'DE'],
      ['O', 'Grid'],
      ['CN', cn],
    ]),
    issuer: parent.certificate,
    signingKey: parent.privateKey,
    subjectKey: keys.publicKey,
    serialHex: randomSerial().hex,
    notBefore: now,
    notAfter: new Date(now.getTime() + 48 * hour),
    extensions: [
      new x509.BasicConstraintsExtension(true, options.pathLength, true),
      new x509.KeyUsagesExtension(
        options.keyUsage ?? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
    ],
  });
  return { certificate, privateKey: keys.privateKey };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
