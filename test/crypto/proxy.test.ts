import { beforeAll, describe, expect, it } from 'vitest';
import { certificateFacts, extensionOids } from '../../src/crypto/certificate-facts.js';
import { appendCommonName, gridDn, nameDer } from '../../src/crypto/distinguished-name.js';
import { generateKeyPair, type KeyType } from '../../src/crypto/keys.js';
import {
  decodeProxyCertInfo,
  encodeProxyCertInfo,
  inheritAllOid,
  proxyCertInfoOid,
} from '../../src/crypto/proxy-cert-info.js';
import { clockSkewMs, issueProxy, ProxyIssueError } from '../../src/crypto/proxy.js';
import { TrustStore } from '../../src/crypto/trust-store.js';
import { x509 } from '../../src/crypto/x509-library.js';
import { opensslVerify, opensslX509 } from './support/openssl.js';
import { hour, testPki, type TestPki } from './support/pki.js';

describe.each<KeyType>(['rsa', 'ec'])('issueProxy with %s keys', (keyType) => {
  let pki: TestPki;
  beforeAll(async () => {
    pki = await testPki(keyType);
  });

  it('makes an RFC 3820 proxy: one CN (its serial number) added, ProxyCertInfo critical inheritAll, no CA flag', async () => {
    const now = new Date(pki.now.getTime() + hour);
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 12,
      now,
    });
    const facts = certificateFacts(proxy.certificate);
    const alice = certificateFacts(pki.alice.certificate);

    const serialDecimal = BigInt(`0x${proxy.certificate.serialNumber}`).toString(10);
    expect(nameDer(facts.subject).equals(nameDer(appendCommonName(alice.subject, serialDecimal)))).toBe(true);
    expect(facts.dn).toBe(`/C=DE/O=Grid/CN=alice/CN=${serialDecimal}`);
    expect(nameDer(facts.issuer).equals(nameDer(alice.subject))).toBe(true);

    const parsed = new x509.X509Certificate(new Uint8Array(proxy.certificate.raw));
    const pci = parsed.getExtension(proxyCertInfoOid);
    expect(pci?.critical).toBe(true);
    expect(decodeProxyCertInfo(pci?.value ?? new ArrayBuffer(0))).toEqual({ policyLanguage: inheritAllOid });
    const usage = parsed.getExtension(x509.KeyUsagesExtension);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(parsed.getExtension(x509.BasicConstraintsExtension)?.ca ?? false).toBe(false);
    expect(proxy.certificate.ca).toBe(false);

    expect(facts.notBefore.getTime()).toBe(Math.floor((now.getTime() - clockSkewMs) / 1000) * 1000);
    expect(facts.notAfter.getTime()).toBe(Math.ceil((now.getTime() + 12 * hour) / 1000) * 1000);
    expect(proxy.certificate.checkPrivateKey(proxy.privateKey)).toBe(true);
    expect(proxy.privateKey.asymmetricKeyType).toBe(keyType);
    expect(proxy.certificate.verify(pki.alice.certificate.publicKey)).toBe(true);
  });

  it('OpenSSL accepts the proxy and a proxy of it (openssl verify -allow_proxy_certs)', async () => {
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 12,
      now: pki.now,
    });
    const second = await issueProxy({
      issuerCert: proxy.certificate,
      issuerKey: proxy.privateKey,
      hours: 1,
      pathLength: 0,
      now: pki.now,
    });
    const first = opensslVerify({
      ca: [pki.ca.certificate],
      untrusted: [pki.alice.certificate],
      leaf: proxy.certificate,
      at: pki.now,
    });
    expect(first).toMatchObject({ ok: true });
    const both = opensslVerify({
      ca: [pki.ca.certificate],
      untrusted: [proxy.certificate, pki.alice.certificate],
      leaf: second.certificate,
      at: pki.now,
    });
    expect(both).toMatchObject({ ok: true });
    const text = opensslX509(second.certificate, ['-text']);
    expect(text).toMatch(
      /Proxy Certificate Information: critical\s+Path Length Constraint: 0+\s+Policy Language: Inherit all/,
    );
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\n/);
  });

  it('lasts at least its hours from the moment of issue, even from an issuer made the same second (whole-second X.509 times)', async () => {
    const now = new Date(certificateFacts(pki.alice.certificate).notBefore.getTime() + 700);
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 12,
      now,
    });
    const facts = certificateFacts(proxy.certificate);
    expect(facts.notBefore.getTime()).toBeLessThanOrEqual(now.getTime());
    expect(facts.notAfter.getTime()).toBeGreaterThanOrEqual(now.getTime() + 12 * hour);
  });

  it('never outlives its issuer, and starts no earlier than it', async () => {
    const aliceFacts = certificateFacts(pki.alice.certificate);
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 24 * 365,
      now: pki.now,
    });
    const facts = certificateFacts(proxy.certificate);
    expect(facts.notAfter.getTime()).toBe(aliceFacts.notAfter.getTime());
    expect(facts.notBefore.getTime()).toBe(aliceFacts.notBefore.getTime());
  });

  it('takes its key type from the issuer unless told', async () => {
    const other: KeyType = keyType === 'rsa' ? 'ec' : 'rsa';
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 1,
      keyType: other,
      now: pki.now,
    });
    expect(proxy.privateKey.asymmetricKeyType).toBe(other);
    if (other === 'rsa') expect(proxy.privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    else expect(proxy.privateKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(
      TrustStore.fromPem(pki.ca.certificate.toString()).validate([proxy.certificate, pki.alice.certificate], pki.now)
        .proxies,
    ).toBe(1);
  });
});

describe('issueProxy', () => {
  let pki: TestPki;
  beforeAll(async () => {
    pki = await testPki('ec');
  });

  it('gives every proxy its own serial number (and so its own CN)', async () => {
    const proxies = await Promise.all(
      Array.from({ length: 8 }, () =>
        issueProxy({ issuerCert: pki.alice.certificate, issuerKey: pki.alice.privateKey, hours: 1, now: pki.now }),
      ),
    );
    const serials = new Set(proxies.map((p) => p.certificate.serialNumber));
    const subjects = new Set(proxies.map((p) => gridDn(p.certificate)));
    expect(serials.size).toBe(8);
    expect(subjects.size).toBe(8);
  });

  it('writes the path length into ProxyCertInfo', async () => {
    const proxy = await issueProxy({
      issuerCert: pki.alice.certificate,
      issuerKey: pki.alice.privateKey,
      hours: 1,
      pathLength: 3,
      now: pki.now,
    });
    expect(certificateFacts(proxy.certificate).proxyCertInfo).toEqual({
      critical: true,
      info: { pathLength: 3, policyLanguage: inheritAllOid },
    });
  });

  it('refuses a CA as issuer, an expired issuer, a proxy with path length 0, a wrong key and bad numbers', async () => {
    const issue = (options: Partial<Parameters<typeof issueProxy>[0]>) =>
      issueProxy({
        issuerCert: pki.alice.certificate,
        issuerKey: pki.alice.privateKey,
        hours: 1,
        now: pki.now,
        ...options,
      });
    await expect(issue({ issuerCert: pki.ca.certificate, issuerKey: pki.ca.privateKey })).rejects.toThrow(
      '/C=DE/O=Grid/CN=Test CA is a CA certificate; proxies are issued from end-entity (user) certificates or other proxies (RFC 3820 3.1)',
    );
    await expect(issue({ now: new Date(pki.now.getTime() + 11 * 24 * hour) })).rejects.toThrow(
      /^\/C=DE\/O=Grid\/CN=alice expired at /,
    );
    const limited = await issue({ pathLength: 0 });
    await expect(issue({ issuerCert: limited.certificate, issuerKey: limited.privateKey })).rejects.toThrow(
      'is a proxy with pCPathLenConstraint 0: it may not issue further proxies',
    );
    const stranger = await generateKeyPair('ec');
    await expect(issue({ issuerKey: stranger.privateKey })).rejects.toThrow(
      'the private key does not belong to the certificate /C=DE/O=Grid/CN=alice',
    );
    await expect(issue({ hours: 0 })).rejects.toBeInstanceOf(ProxyIssueError);
    await expect(issue({ pathLength: -1 })).rejects.toThrow(
      'the proxy path length must be a whole number, 0 or more, got -1',
    );
  });
});

describe('ProxyCertInfo encoding', () => {
  it('round-trips with and without a path length', () => {
    for (const info of [
      { policyLanguage: inheritAllOid },
      { pathLength: 0, policyLanguage: inheritAllOid },
      { pathLength: 200, policyLanguage: '1.2.3', policy: new Uint8Array([1, 2]) },
    ]) {
      expect(decodeProxyCertInfo(encodeProxyCertInfo(info))).toEqual(info);
    }
  });

  it('is DER as RFC 3820 lays it out: SEQUENCE { INTEGER 2, SEQUENCE { OID inheritAll } }', () => {
    const der = Buffer.from(encodeProxyCertInfo({ pathLength: 2, policyLanguage: inheritAllOid }));
    expect(der.toString('hex')).toBe('300f020102300a06082b06010505071501');
  });

  it('refuses malformed values, naming what is wrong', () => {
    expect(() => decodeProxyCertInfo(new Uint8Array([0x04, 0x00]))).toThrow('ProxyCertInfo is not a SEQUENCE');
    expect(() => decodeProxyCertInfo(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))).toThrow(
      'ProxyCertInfo has no proxyPolicy SEQUENCE',
    );
    expect(() => decodeProxyCertInfo(new Uint8Array([0x30, 0x05]))).toThrow('ProxyCertInfo is not a single DER value');
  });

  it('the extension OID is id-pe-proxyCertInfo', () => {
    expect(extensionOids.proxyCertInfo).toBe('1.3.6.1.5.5.7.1.14');
  });
});
