import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { credentialFromPem, proxyFilePem } from '../../src/crypto/credentials.js';
import { certificatesFromPem, pemBlocks, privateKeyFromPem } from '../../src/crypto/pem.js';
import { issueProxy } from '../../src/crypto/proxy.js';
import { testPki } from './support/pki.js';

describe('PEM', () => {
  it('splits a bundle into its blocks and certificates, ignoring text between them', async () => {
    const { ca, alice } = await testPki('ec');
    const bundle = `Bag Attributes: something\n${ca.certificate.toString()}\nsubject=/C=DE/O=Grid/CN=alice\n${alice.certificate.toString()}`;
    expect(pemBlocks(bundle).map((b) => b.label)).toEqual(['CERTIFICATE', 'CERTIFICATE']);
    const certs = certificatesFromPem(bundle);
    expect(certs).toHaveLength(2);
    expect(certs[0]?.raw.equals(ca.certificate.raw)).toBe(true);
    expect(certs[1]?.raw.equals(alice.certificate.raw)).toBe(true);
  });

  it('names the broken block', () => {
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(() => certificatesFromPem(broken, 'user.pem')).toThrow(
      /^user\.pem: PEM block 1 \(CERTIFICATE\) is not a valid X\.509 certificate/,
    );
  });

  it('reads PKCS#8, PKCS#1 and SEC1 keys, and encrypted ones with their passphrase', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pkcs1 = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const sec1 = ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    const encrypted = ec.privateKey
      .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })
      .toString();
    expect(privateKeyFromPem(pkcs1)?.asymmetricKeyType).toBe('rsa');
    expect(privateKeyFromPem(sec1)?.asymmetricKeyType).toBe('ec');
    expect(privateKeyFromPem(encrypted, 'userkey.pem', 'secret')?.equals(ec.privateKey)).toBe(true);
    expect(() => privateKeyFromPem(encrypted, 'userkey.pem')).toThrow(
      'userkey.pem: the private key is encrypted; a passphrase is needed',
    );
    expect(() => privateKeyFromPem(encrypted, 'userkey.pem', 'wrong')).toThrow(
      'userkey.pem: cannot read the private key (ENCRYPTED PRIVATE KEY): wrong passphrase or damaged key',
    );
    expect(privateKeyFromPem('no key')).toBeUndefined();
  });

  it('a proxy file (Globus layout) reads back as the same credential', async () => {
    const { alice, now } = await testPki('ec');
    const proxy = await issueProxy({ issuerCert: alice.certificate, issuerKey: alice.privateKey, hours: 1, now });
    const text = proxyFilePem({ ...proxy, chain: [alice.certificate] });
    expect(pemBlocks(text).map((b) => b.label)).toEqual(['CERTIFICATE', 'PRIVATE KEY', 'CERTIFICATE']);
    const back = credentialFromPem(text, undefined, { source: 'x509up_u1000' });
    expect(back.certificate.raw.equals(proxy.certificate.raw)).toBe(true);
    expect(back.privateKey.equals(proxy.privateKey)).toBe(true);
    expect(back.chain.map((c) => c.raw.equals(alice.certificate.raw))).toEqual([true]);
    expect(() =>
      credentialFromPem(text, alice.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), {
        source: 'proxy.pem',
        keySource: 'alice.key',
      }),
    ).toThrow('the private key in alice.key does not belong to the certificate in proxy.pem');
  });
});
