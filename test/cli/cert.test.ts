import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { certificateFacts } from '../../src/crypto/certificate-facts.js';
import { credentialFromPem } from '../../src/crypto/credentials.js';
import { certificatesFromPem, pemBlocks } from '../../src/crypto/pem.js';
import { TrustStore } from '../../src/crypto/trust-store.js';
import { run } from '../crypto/support/openssl.js';
import { temporaryDirectories } from '../crypto/support/temp-dirs.js';
import { wsag } from './support.js';

const tempDir = temporaryDirectories('wsag-cli-cert-');

const mode = (file: string): number => fs.statSync(file).mode & 0o777;

describe('wsag cert demo', () => {
  it('makes the demo PKI in $WSAG_DATA_DIR/pki, says what it made and what to run next', async () => {
    const data = tempDir();
    const pki = path.join(data, 'pki');
    const result = await wsag(['cert', 'demo', '--key-type', 'ec'], { env: { WSAG_DATA_DIR: data } });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(`demo PKI in ${pki}: made 4 certificate(s) with keys, kept 0`);
    for (const name of ['ca', 'server', 'alice', 'bob']) {
      expect(mode(path.join(pki, `${name}.key`))).toBe(0o600);
      expect(mode(path.join(pki, `${name}.pem`))).toBe(0o644);
      expect(result.stdout).toMatch(
        new RegExp(`created +${path.join(pki, `${name}.pem`)} +${path.join(pki, `${name}.key`)} +/C=DE/O=wsag-demo/`),
      );
    }
    expect(result.stdout).toContain('/C=DE/O=wsag-demo/OU=users/CN=alice');
    expect(result.out).toContain('next:');
    // The data directory is where the server looks, so the server needs no file settings.
    expect(result.out).toContain('  WSAG_TLS_PORT=8443 npm start');
    expect(result.out).toContain(
      `  wsag cert proxy --cert ${path.join(pki, 'alice.pem')} --key ${path.join(pki, 'alice.key')} --hours 12 --out ${path.join(pki, 'alice-proxy.pem')}`,
    );
    expect(result.out).toContain(
      `  WSAG_CERT=${path.join(pki, 'alice-proxy.pem')} WSAG_CA=${path.join(pki, 'ca.pem')} wsag templates --url https://localhost:8443`,
    );

    const again = await wsag(['cert', 'demo'], { env: { WSAG_DATA_DIR: data } });
    expect(again.code).toBe(0);
    expect(again.out[0]).toBe(`demo PKI in ${pki}: all files exist, nothing to do`);
    expect(again.stdout).not.toMatch(/created/);
  });

  it('--dir elsewhere: the next steps tell the server where the files are; --json lists them', async () => {
    const dir = path.join(tempDir(), 'my-pki');
    const result = await wsag(['cert', 'demo', '--dir', dir, '--key-type', 'ec', '--json'], { env: {} });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      dir: string;
      files: { party: string; state: string; certFile: string; subject: string }[];
    };
    expect(doc.dir).toBe(dir);
    expect(doc.files.map((f) => [f.party, f.state, f.certFile])).toEqual(
      ['ca', 'server', 'alice', 'bob'].map((p) => [p, 'created', path.join(dir, `${p}.pem`)]),
    );
    const text = await wsag(['cert', 'demo', '--dir', dir], { env: {} });
    expect(text.out).toContain(
      `  WSAG_CA_FILE=${path.join(dir, 'ca.pem')} WSAG_TLS_CERT=${path.join(dir, 'server.pem')} WSAG_TLS_KEY=${path.join(dir, 'server.key')} WSAG_TLS_PORT=8443 npm start`,
    );
  });

  it('a broken PKI is an error naming the file, and --force replaces it', async () => {
    const dir = tempDir();
    await wsag(['cert', 'demo', '--dir', dir, '--key-type', 'ec'], { env: {} });
    fs.rmSync(path.join(dir, 'bob.key'));
    const broken = await wsag(['cert', 'demo', '--dir', dir], { env: {} });
    expect(broken.code).toBe(1);
    expect(broken.err).toEqual([
      `error: ${path.join(dir, 'bob.key')} is missing while ${path.join(dir, 'bob.pem')} exists: restore it, or make a new demo PKI with --force`,
    ]);
    const forced = await wsag(['cert', 'demo', '--dir', dir, '--force', '--key-type', 'ec'], { env: {} });
    expect(forced.code).toBe(0);
    expect(forced.out[0]).toBe(`demo PKI in ${dir}: made 4 certificate(s) with keys, kept 0`);
  });
});

describe('wsag cert proxy', () => {
  let pki: string;
  beforeAll(async () => {
    pki = path.join(tempDir(), 'pki');
    const made = await wsag(['cert', 'demo', '--dir', pki, '--key-type', 'rsa'], { env: {} });
    expect(made.code).toBe(0);
  });

  const ca = (): string => path.join(pki, 'ca.pem');

  it('writes proxy certificate, key and issuer chain to one 0600 file that openssl verify accepts, and a proxy of it', async () => {
    const out = path.join(tempDir(), 'proxy.pem');
    const issuedFrom = Date.now();
    const result = await wsag(
      [
        'cert',
        'proxy',
        '--cert',
        path.join(pki, 'alice.pem'),
        '--key',
        path.join(pki, 'alice.key'),
        '--hours',
        '12',
        '--out',
        out,
      ],
      { env: {} },
    );
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(
      new RegExp(`^wrote proxy /C=DE/O=wsag-demo/OU=users/CN=alice/CN=\\d+ to ${out} \\(mode 0600\\)$`),
    );
    expect(result.stdout).toMatch(/identity +\/C=DE\/O=wsag-demo\/OU=users\/CN=alice/);
    expect(result.stdout).toMatch(/layout +proxy certificate, its RSA key, then 1 issuing certificate\(s\)/);
    expect(mode(out)).toBe(0o600);
    const text = fs.readFileSync(out, 'utf8');
    expect(pemBlocks(text).map((b) => b.label)).toEqual(['CERTIFICATE', 'PRIVATE KEY', 'CERTIFICATE']);
    const proxy = credentialFromPem(text, undefined);
    const facts = certificateFacts(proxy.certificate);
    // Twelve hours from the moment of issue; it starts up to five minutes earlier, never before alice's certificate.
    expect(facts.notBefore.getTime()).toBeLessThanOrEqual(issuedFrom);
    expect(facts.notAfter.getTime()).toBeGreaterThanOrEqual(issuedFrom + 12 * 3600_000);
    expect(facts.notAfter.getTime() - facts.notBefore.getTime()).toBeLessThanOrEqual(
      12 * 3600_000 + 5 * 60_000 + 60_000,
    );
    const alice = certificatesFromPem(fs.readFileSync(path.join(pki, 'alice.pem'), 'utf8'))[0];
    expect(alice && proxy.chain[0]?.raw.equals(alice.raw)).toBe(true);

    const verdict = run([
      'verify',
      '-allow_proxy_certs',
      '-CAfile',
      ca(),
      '-untrusted',
      path.join(pki, 'alice.pem'),
      out,
    ]);
    expect(verdict).toEqual({ ok: true, output: `${out}: OK\n` });

    // A proxy of the proxy: the key comes from the proxy file itself.
    const second = path.join(path.dirname(out), 'proxy2.pem');
    const again = await wsag(['cert', 'proxy', '--cert', out, '--hours', '1', '--path-length', '0', '--out', second], {
      env: {},
    });
    expect(again.err).toEqual([]);
    expect(again.code).toBe(0);
    expect(pemBlocks(fs.readFileSync(second, 'utf8')).map((b) => b.label)).toEqual([
      'CERTIFICATE',
      'PRIVATE KEY',
      'CERTIFICATE',
      'CERTIFICATE',
    ]);
    const verdict2 = run(['verify', '-allow_proxy_certs', '-CAfile', ca(), '-untrusted', second, second]);
    expect(verdict2).toEqual({ ok: true, output: `${second}: OK\n` });
    const chain = credentialFromPem(fs.readFileSync(second, 'utf8'), undefined);
    expect(TrustStore.fromFile(ca()).validate([chain.certificate, ...chain.chain], new Date())).toMatchObject({
      identity: '/C=DE/O=wsag-demo/OU=users/CN=alice',
      proxies: 2,
    });

    // Path length 0: no proxy below the second one.
    const third = await wsag(['cert', 'proxy', '--cert', second, '--out', path.join(path.dirname(out), 'proxy3.pem')], {
      env: {},
    });
    expect(third.code).toBe(1);
    expect(third.err[0]).toMatch(
      /^error: cannot issue a proxy from .*proxy2\.pem: .* is a proxy with pCPathLenConstraint 0: it may not issue further proxies \(RFC 3820 3\.8\.1\)$/,
    );
  });

  it('--json, --key-type ec, and the Globus defaults: $X509_USER_CERT, $X509_USER_KEY, $X509_USER_PROXY', async () => {
    const out = path.join(tempDir(), 'x509up_u1234');
    const result = await wsag(['cert', 'proxy', '--key-type', 'ec', '--hours', '0.5', '--json'], {
      env: {
        X509_USER_CERT: path.join(pki, 'bob.pem'),
        X509_USER_KEY: path.join(pki, 'bob.key'),
        X509_USER_PROXY: out,
        HOME: tempDir(),
      },
    });
    expect(result.err).toEqual([]);
    const doc = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({
      file: out,
      identity: '/C=DE/O=wsag-demo/OU=users/CN=bob',
      issuer: '/C=DE/O=wsag-demo/OU=users/CN=bob',
      keyType: 'ec',
    });
    expect(doc.subject).toMatch(/^\/C=DE\/O=wsag-demo\/OU=users\/CN=bob\/CN=\d+$/);
    expect(Date.parse(String(doc.notAfter)) - Date.parse(String(doc.notBefore))).toBeLessThanOrEqual(
      35 * 60_000 + 1000,
    );
    expect(credentialFromPem(fs.readFileSync(out, 'utf8'), undefined).privateKey.asymmetricKeyType).toBe('ec');
  });

  it('~/.globus/usercert.pem and userkey.pem by default; an encrypted key needs --passphrase-file', async () => {
    const home = tempDir();
    const globus = path.join(home, '.globus');
    fs.mkdirSync(globus);
    fs.copyFileSync(path.join(pki, 'alice.pem'), path.join(globus, 'usercert.pem'));
    const key = credentialFromPem(
      fs.readFileSync(path.join(pki, 'alice.pem'), 'utf8'),
      fs.readFileSync(path.join(pki, 'alice.key'), 'utf8'),
    ).privateKey;
    fs.writeFileSync(
      path.join(globus, 'userkey.pem'),
      key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'open sesame' }),
    );
    const out = path.join(home, 'proxy.pem');

    const locked = await wsag(['cert', 'proxy', '--out', out], { env: { HOME: home } });
    expect(locked.code).toBe(1);
    expect(locked.err).toEqual([
      `error: ${path.join(globus, 'userkey.pem')}: the private key is encrypted; a passphrase is needed (give it with --passphrase-file FILE)`,
    ]);

    const passphrase = path.join(home, 'pass.txt');
    fs.writeFileSync(passphrase, 'open sesame\n');
    const unlocked = await wsag(['cert', 'proxy', '--out', out, '--passphrase-file', passphrase], {
      env: { HOME: home },
    });
    expect(unlocked.err).toEqual([]);
    expect(unlocked.code).toBe(0);
    expect(
      run(['verify', '-allow_proxy_certs', '-CAfile', ca(), '-untrusted', path.join(pki, 'alice.pem'), out]).ok,
    ).toBe(true);
  });

  it('errors: a missing file, a key that does not fit, a CA certificate', async () => {
    const out = path.join(tempDir(), 'p.pem');
    const missing = await wsag(
      ['cert', 'proxy', '--cert', '/nonexistent/user.pem', '--key', path.join(pki, 'alice.key'), '--out', out],
      { env: {} },
    );
    expect(missing).toMatchObject({ code: 1, err: ['error: no file /nonexistent/user.pem'] });
    const mismatch = await wsag(
      ['cert', 'proxy', '--cert', path.join(pki, 'alice.pem'), '--key', path.join(pki, 'bob.key'), '--out', out],
      { env: {} },
    );
    expect(mismatch).toMatchObject({
      code: 1,
      err: [
        `error: the private key in ${path.join(pki, 'bob.key')} does not belong to the certificate in ${path.join(pki, 'alice.pem')}`,
      ],
    });
    const fromCa = await wsag(['cert', 'proxy', '--cert', ca(), '--key', path.join(pki, 'ca.key'), '--out', out], {
      env: {},
    });
    expect(fromCa.code).toBe(1);
    expect(fromCa.err[0]).toContain(
      'is a CA certificate; proxies are issued from end-entity (user) certificates or other proxies (RFC 3820 3.1)',
    );
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('wsag cert: command line', () => {
  it('usage errors name the option', async () => {
    const cases: [string[], string][] = [
      [['cert'], 'error: missing ACTION'],
      [['cert', 'renew'], 'error: unknown action "renew": use proxy or demo'],
      [['cert', 'proxy', '--hours', '0'], 'error: --hours must be a number of hours greater than 0, got "0"'],
      [['cert', 'proxy', '--hours', '1h'], 'error: --hours must be a number of hours greater than 0, got "1h"'],
      [['cert', 'proxy', '--path-length=-1'], 'error: --path-length must be a whole number, 0 or more, got "-1"'],
      [['cert', 'proxy', '--path-length', 'two'], 'error: --path-length must be a whole number, 0 or more, got "two"'],
      [['cert', 'proxy', '--key-type', 'dsa'], 'error: --key-type must be rsa or ec, got "dsa"'],
      [['cert', 'proxy', '--dir', 'x'], 'error: --dir belongs to cert demo, not cert proxy'],
      [['cert', 'demo', '--hours', '3'], 'error: --hours belongs to cert proxy, not cert demo'],
    ];
    for (const [argv, message] of cases) {
      const result = await wsag(argv, { env: {} });
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err[0]).toBe(message);
      expect(result.err[1]).toMatch(/^usage: wsag cert /);
    }
  });

  it('is in the command list, with help for both actions', async () => {
    const list = await wsag(['help'], { env: {} });
    expect(list.stdout).toMatch(/\n {2}cert +certificates: issue an RFC 3820 proxy; make a demo PKI for HTTPS/);
    const help = await wsag(['help', 'cert'], { env: {} });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('proxy: issues an RFC 3820 proxy certificate');
    expect(help.stdout).toContain('demo:  makes a demo PKI');
    expect(help.stdout).toContain(`${path.join(os.tmpdir(), 'x509up_u<uid>')} as grid-proxy-init does`);
  });
});
