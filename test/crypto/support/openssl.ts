import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { X509Certificate } from 'node:crypto';

export interface OpensslVerdict {
  ok: boolean;
  output: string;
}

/**
 * `openssl verify -allow_proxy_certs -CAfile CA -untrusted UNTRUSTED LEAF`, optionally
 * `-attime`: whether OpenSSL accepts the chain, and what it said.
 */
export function opensslVerify(options: {
  ca: X509Certificate[];
  untrusted: X509Certificate[];
  leaf: X509Certificate;
  at?: Date;
}): OpensslVerdict {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-openssl-'));
  try {
    const write = (name: string, certs: X509Certificate[]): string => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, certs.map((c) => c.toString()).join(''));
      return file;
    };
    const args = ['verify', '-allow_proxy_certs', '-CAfile', write('ca.pem', options.ca)];
    if (options.untrusted.length > 0) args.push('-untrusted', write('untrusted.pem', options.untrusted));
    if (options.at) args.push('-attime', String(Math.floor(options.at.getTime() / 1000)));
    args.push(write('leaf.pem', [options.leaf]));
    return run(args);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs openssl with `args`; ok when it exits 0. */
export function run(args: string[]): OpensslVerdict {
  try {
    const output = execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, output };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** `openssl x509 -noout ARGS` on one certificate. */
export function opensslX509(certificate: X509Certificate, args: string[]): string {
  return execFileSync('openssl', ['x509', '-noout', ...args], { input: certificate.toString(), encoding: 'utf8' });
}
