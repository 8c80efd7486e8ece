import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDemoPki, DemoPkiConflict } from '../../src/crypto/demo-pki.js';
import { loadCredential } from '../../src/crypto/credentials.js';
import { TrustStore } from '../../src/crypto/trust-store.js';
import { opensslVerify, run } from './support/openssl.js';
import { temporaryDirectories } from './support/temp-dirs.js';

const tempDir = temporaryDirectories('wsag-demo-pki-');

const names = ['ca', 'server', 'alice', 'bob'];

describe('createDemoPki', () => {
  it('makes a CA, a server certificate for the loopback names, and two users, which OpenSSL and the trust store accept', async () => {
    const dir = tempDir();
    const files = await createDemoPki({ dir, keyType: 'ec' });
    expect(files.map((f) => [f.party, f.state])).toEqual(names.map((n) => [n, 'created']));
    for (const name of names) {
      expect(fs.statSync(path.join(dir, `${name}.key`)).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.join(dir, `${name}.pem`)).mode & 0o777).toBe(0o644);
    }
    const ca = loadCredential(path.join(dir, 'ca.pem'), path.join(dir, 'ca.key'));
    const server = loadCredential(path.join(dir, 'server.pem'), path.join(dir, 'server.key'));
    expect(ca.certificate.ca).toBe(true);
    expect(server.certificate.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(server.certificate.checkHost('localhost')).toBe('localhost');
    expect(server.certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.certificate.checkIP('::1')).toBe('::1');

    const store = TrustStore.fromFile(path.join(dir, 'ca.pem'));
    for (const user of ['alice', 'bob']) {
      const credential = loadCredential(path.join(dir, `${user}.pem`), path.join(dir, `${user}.key`));
      expect(store.validate([credential.certificate], new Date()).identity).toBe(
        `/C=DE/O=wsag-demo/OU=users/CN=${user}`,
      );
      expect(opensslVerify({ ca: [ca.certificate], untrusted: [], leaf: credential.certificate }).ok).toBe(true);
    }
    const serverCheck = run([
      'verify',
      '-purpose',
      'sslserver',
      '-CAfile',
      path.join(dir, 'ca.pem'),
      path.join(dir, 'server.pem'),
    ]);
    expect(serverCheck).toMatchObject({ ok: true });
    const aliceAsClient = run([
      'verify',
      '-purpose',
      'sslclient',
      '-CAfile',
      path.join(dir, 'ca.pem'),
      path.join(dir, 'alice.pem'),
    ]);
    expect(aliceAsClient).toMatchObject({ ok: true });
  });

  it('is idempotent: a second run keeps every file as it is', async () => {
    const dir = tempDir();
    await createDemoPki({ dir, keyType: 'ec' });
    const before = names.flatMap((n) => [
      fs.readFileSync(path.join(dir, `${n}.pem`)),
      fs.readFileSync(path.join(dir, `${n}.key`)),
    ]);
    const again = await createDemoPki({ dir, keyType: 'ec' });
    expect(again.every((f) => f.state === 'kept')).toBe(true);
    const after = names.flatMap((n) => [
      fs.readFileSync(path.join(dir, `${n}.pem`)),
      fs.readFileSync(path.join(dir, `${n}.key`)),
    ]);
    expect(after.map((b, i) => b.equals(before[i] as Buffer))).toEqual(before.map(() => true));
  });

  it('makes only what is missing, with the existing CA; --force makes a new CA', async () => {
    const dir = tempDir();
    await createDemoPki({ dir, keyType: 'ec' });
    const caBefore = fs.readFileSync(path.join(dir, 'ca.pem'));
    fs.rmSync(path.join(dir, 'bob.pem'));
    fs.rmSync(path.join(dir, 'bob.key'));
    const files = await createDemoPki({ dir, keyType: 'ec' });
    expect(files.map((f) => f.state)).toEqual(['kept', 'kept', 'kept', 'created']);
    const store = TrustStore.fromFile(path.join(dir, 'ca.pem'));
    expect(
      store.validate([loadCredential(path.join(dir, 'bob.pem'), path.join(dir, 'bob.key')).certificate], new Date())
        .identity,
    ).toContain('CN=bob');

    const forced = await createDemoPki({ dir, keyType: 'ec', force: true });
    expect(forced.every((f) => f.state === 'created')).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'ca.pem')).equals(caBefore)).toBe(false);
  });

  it('refuses half a pair, a missing CA with certificates it issued, and a certificate another CA issued', async () => {
    const dir = tempDir();
    await createDemoPki({ dir, keyType: 'ec' });
    fs.rmSync(path.join(dir, 'alice.key'));
    await expect(createDemoPki({ dir })).rejects.toThrow(
      `${path.join(dir, 'alice.key')} is missing while ${path.join(dir, 'alice.pem')} exists`,
    );

    const noCa = tempDir();
    await createDemoPki({ dir: noCa, keyType: 'ec' });
    fs.rmSync(path.join(noCa, 'ca.pem'));
    fs.rmSync(path.join(noCa, 'ca.key'));
    await expect(createDemoPki({ dir: noCa })).rejects.toBeInstanceOf(DemoPkiConflict);

    const mixed = tempDir();
    const other = tempDir();
    await createDemoPki({ dir: mixed, keyType: 'ec' });
    await createDemoPki({ dir: other, keyType: 'ec' });
    fs.copyFileSync(path.join(other, 'server.pem'), path.join(mixed, 'server.pem'));
    fs.copyFileSync(path.join(other, 'server.key'), path.join(mixed, 'server.key'));
    await expect(createDemoPki({ dir: mixed })).rejects.toThrow(
      `${path.join(mixed, 'server.pem')} was not issued by the CA in ${path.join(mixed, 'ca.pem')}`,
    );
  });
});
