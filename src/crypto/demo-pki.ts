import fs from 'node:fs';
import path from 'node:path';
import { createCa, issueEndEntity, type Issued } from './certificate-authority.js';
import { certificateFacts } from './certificate-facts.js';
import { loadCredential, writePrivateFile } from './credentials.js';
import { gridDn, nameFromParts } from './distinguished-name.js';
import type { KeyType } from './keys.js';
import { certificatePem, privateKeyPem } from './pem.js';

/** The demo PKI's parties, in the order they are made: the CA first, since it signs the others. */
export const demoParties = ['ca', 'server', 'alice', 'bob'] as const;
export type DemoParty = (typeof demoParties)[number];

/** Subjects of the demo certificates (OpenSSL oneline: /C=DE/O=wsag-demo/OU=users/CN=alice). */
const subjects: Record<DemoParty, [string, string][]> = {
  ca: [
    ['C', 'DE'],
    ['O', 'wsag-demo'],
    ['CN', 'wsag-demo CA'],
  ],
  server: [
    ['C', 'DE'],
    ['O', 'wsag-demo'],
    ['OU', 'hosts'],
    ['CN', 'localhost'],
  ],
  alice: [
    ['C', 'DE'],
    ['O', 'wsag-demo'],
    ['OU', 'users'],
    ['CN', 'alice'],
  ],
  bob: [
    ['C', 'DE'],
    ['O', 'wsag-demo'],
    ['OU', 'users'],
    ['CN', 'bob'],
  ],
};

/** The server certificate's subjectAltName: every loopback name a local client may use. */
export { demoServerAltNames } from './demo-names.js';
import { demoServerAltNames } from './demo-names.js';
export const demoCaDays = 5 * 365;
export const demoLeafDays = 365;

export interface DemoPkiOptions {
  dir: string;
  /** Replace every file, with a new CA (default: keep what exists). */
  force?: boolean;
  keyType?: KeyType;
  now?: Date;
}

export interface DemoFile {
  party: DemoParty;
  certFile: string;
  keyFile: string;
  /** The certificate's subject, OpenSSL oneline form (the identity the server sees). */
  subject: string;
  notAfter: Date;
  state: 'created' | 'kept';
}

/** Why the demo PKI cannot be completed without --force (half a key pair, a foreign certificate, an expired CA). */
export class DemoPkiConflict extends Error {
  override readonly name = 'DemoPkiConflict';
}

/**
 * Makes a demo PKI in `dir`: ca.pem/ca.key (a root CA), server.pem/server.key (subjectAltName
 * localhost, 127.0.0.1, ::1), alice.pem/alice.key and bob.pem/bob.key (users). Idempotent:
 * complete pairs that exist are kept (and checked), missing ones are made; `force` replaces all.
 * Keys are written with mode 0600, certificates 0644.
 */
export async function createDemoPki(options: DemoPkiOptions): Promise<DemoFile[]> {
  // ECDSA P-256 by default: signing an agreement costs a tenth of RSA 2048's (docs/benchmarks.md).
  const { dir, force = false, keyType = 'ec' } = options;
  const now = options.now ?? new Date();
  fs.mkdirSync(dir, { recursive: true });
  const files = (party: DemoParty): { certFile: string; keyFile: string } => ({
    certFile: path.join(dir, `${party}.pem`),
    keyFile: path.join(dir, `${party}.key`),
  });
  const present = (party: DemoParty): 'both' | 'none' | 'half' => {
    const { certFile, keyFile } = files(party);
    const count = [certFile, keyFile].filter((f) => fs.existsSync(f)).length;
    return count === 2 ? 'both' : count === 0 ? 'none' : 'half';
  };
  if (!force) {
    for (const party of demoParties) {
      if (present(party) === 'half') {
        const { certFile, keyFile } = files(party);
        throw new DemoPkiConflict(
          `${fs.existsSync(certFile) ? keyFile : certFile} is missing while ` +
            `${fs.existsSync(certFile) ? certFile : keyFile} exists: restore it, or make a new demo PKI with --force`,
        );
      }
    }
    if (present('ca') === 'none' && demoParties.some((p) => present(p) === 'both')) {
      throw new DemoPkiConflict(
        `${files('ca').certFile} is missing, but certificates it issued are in ${dir}: make a new demo PKI ` +
          `with --force`,
      );
    }
  }

  const result: DemoFile[] = [];
  let ca: Issued | undefined;
  for (const party of demoParties) {
    const { certFile, keyFile } = files(party);
    let issued: Issued;
    let state: DemoFile['state'];
    if (!force && present(party) === 'both') {
      issued = keep(party, certFile, keyFile, ca, now);
      state = 'kept';
    } else {
      const subject = nameFromParts(subjects[party]);
      issued = ca
        ? await issueEndEntity({
            ca,
            subject,
            keyType,
            days: demoLeafDays,
            now,
            purpose: party === 'server' ? 'server' : 'client',
            ...(party === 'server' ? { altNames: demoServerAltNames } : {}),
          })
        : await createCa({ subject, keyType, days: demoCaDays, now });
      writePrivateFile(keyFile, privateKeyPem(issued.privateKey));
      fs.writeFileSync(certFile, certificatePem(issued.certificate), { mode: 0o644 });
      state = 'created';
    }
    if (party === 'ca') ca = issued;
    result.push({
      party,
      certFile,
      keyFile,
      subject: gridDn(issued.certificate),
      notAfter: certificateFacts(issued.certificate).notAfter,
      state,
    });
  }
  return result;
}

/** An existing pair, checked: the key fits, the certificate has not expired, and the CA issued it. */
function keep(party: DemoParty, certFile: string, keyFile: string, ca: Issued | undefined, now: Date): Issued {
  let credential: ReturnType<typeof loadCredential>;
  try {
    credential = loadCredential(certFile, keyFile);
  } catch (error) {
    throw new DemoPkiConflict(`${(error as Error).message}: repair it, or make a new demo PKI with --force`);
  }
  const facts = certificateFacts(credential.certificate);
  if (facts.notAfter < now)
    throw new DemoPkiConflict(
      `${certFile} expired at ${facts.notAfter.toISOString()}: make a new demo PKI with --force`,
    );
  if (ca && party !== 'ca' && !credential.certificate.verify(ca.certificate.publicKey)) {
    throw new DemoPkiConflict(
      `${certFile} was not issued by the CA in ${path.join(path.dirname(certFile), 'ca.pem')}: make a new ` +
        `demo PKI with --force`,
    );
  }
  return { certificate: credential.certificate, privateKey: credential.privateKey };
}
