import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TrustStore } from '../../src/crypto/trust-store.js';
import type { ValidateChain } from '../../src/crypto/xml-signature.js';

/** A party's key and certificates (leaf first, without the root), and the PEM files they came from. */
export interface Party {
  key: KeyObject;
  chain: X509Certificate[];
  keyFile: string;
  certFile: string;
}

/**
 * A throwaway PKI made with the openssl CLI (CAs valid for ten years, the others for 30 days): a test CA; an intermediate CA under it; the
 * provider with an RSA key (issued by the CA) and with an EC P-256 key (issued by the
 * intermediate); the initiator with an EC P-256 key (issued by the CA); a stranger whose RSA
 * certificate comes from a CA nobody trusts.
 */
export interface TestPki {
  dir: string;
  caFile: string;
  ca: X509Certificate;
  strangerCaFile: string;
  provider: Party;
  providerEc: Party;
  initiator: Party;
  stranger: Party;
  remove(): void;
}

type KeySpec = 'rsa' | 'ec';

export function createTestPki(): TestPki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-xmldsig-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const newKey = (spec: KeySpec) =>
    spec === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];

  const rootCa = (name: string, cn: string) =>
    openssl(
      'req',
      '-x509',
      ...newKey('rsa'),
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '3650',
      '-subj',
      `/O=wsag-server tests/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
  const issue = (name: string, cn: string, spec: KeySpec, issuer: string, isCa = false) => {
    fs.writeFileSync(
      file(`${name}.ext`),
      isCa
        ? 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n'
        : 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n',
    );
    openssl(
      'req',
      ...newKey(spec),
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/O=wsag-server tests/CN=${cn}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}.pem`,
      '-CAkey',
      `${issuer}.key`,
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      '-days',
      '30',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  };
  const certificate = (name: string) => new X509Certificate(fs.readFileSync(file(`${name}.pem`)));
  const party = (name: string, issuers: string[] = []): Party => ({
    key: createPrivateKey(fs.readFileSync(file(`${name}.key`))),
    chain: [certificate(name), ...issuers.map(certificate)],
    keyFile: file(`${name}.key`),
    certFile: file(`${name}.pem`),
  });

  rootCa('ca', 'Test CA');
  issue('intermediate', 'Test Intermediate CA', 'rsa', 'ca', true);
  issue('provider', 'provider.example.org', 'rsa', 'ca');
  issue('provider-ec', 'provider-ec.example.org', 'ec', 'intermediate');
  issue('initiator', 'alice', 'ec', 'ca');
  rootCa('stranger-ca', 'Stranger CA');
  issue('stranger', 'mallory', 'rsa', 'stranger-ca');

  return {
    dir,
    caFile: file('ca.pem'),
    ca: certificate('ca'),
    strangerCaFile: file('stranger-ca.pem'),
    provider: party('provider'),
    providerEc: party('provider-ec', ['intermediate']),
    initiator: party('initiator'),
    stranger: party('stranger'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** The verifier's chain check: the project's trust store holding the test CA alone. */
export function trustingTestCa(pki: TestPki): ValidateChain {
  const store = TrustStore.fromFile(pki.caFile);
  return (chain, at) => store.validate(chain, at);
}
