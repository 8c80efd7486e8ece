import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAgreement } from '../../src/crypto/xml-signature.js';
import type { Agreement } from '../../src/domain/agreement.js';
import { agreementNote } from '../../src/engine/audit/audit-notes.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { createTestPki, type TestPki } from '../crypto/xml-signature-pki.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from './support.js';

/**
 * `wsag audit` on a real database file: a server (SQLite store in `dataDir`) records the
 * changes, the CLI reads the file on its own, and copies of the file are tampered with.
 */
let dataDir: string;
let store: SqliteStore;
let server: TestServer;
/** The first agreement (created, then terminated: audit rows 1 and 3), the second, the pending one (rows 4, 5). */
let first: string;
let second: string;
let pending: string;
const scratch: string[] = [];

const freshDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-audit-cli-'));
  scratch.push(dir);
  return dir;
};
const audit = (argv: string[], dir = dataDir, env: Record<string, string> = {}) =>
  wsag(['audit', ...argv], { env: { WSAG_DATA_DIR: dir, ...env } });

async function created(argv: string[]): Promise<string> {
  const result = await wsag([...argv, '--json'], { url: server.url });
  expect(result.err).toEqual([]);
  return (JSON.parse(result.stdout) as { agreementId: string }).agreementId;
}

/** A consistent copy of the live database in a new data directory, changed by `tamper` through a connection of its own. */
function tamperedCopy(tamper: (db: Database.Database) => void): string {
  const dir = freshDir();
  const copy = path.join(dir, 'wsag.db');
  const live = new Database(path.join(dataDir, 'wsag.db'), { readonly: true });
  live.exec(`VACUUM INTO '${copy}'`);
  live.close();
  const db = new Database(copy);
  tamper(db);
  db.close();
  return dir;
}

beforeAll(async () => {
  dataDir = freshDir();
  store = SqliteStore.open(path.join(dataDir, 'wsag.db'));
  server = await startTestServer({
    repository: store.agreements,
    negotiationRepository: store.negotiations,
    config: { dataDir, admins: ['anonymous'] },
  });
  first = await created(['create', '--template', 'advance-reservation', '--set', 'NodeCount=2']);
  second = await created(['create', '--template', 'deadline-job', '--set', 'NodeCount=2']);
  expect((await wsag(['terminate', first], { url: server.url })).code).toBe(0);
  pending = await created(['pending', 'create', '--template', 'deadline-job', '--set', 'NodeCount=2']);
  expect((await wsag(['pending', 'accept', pending], { url: server.url })).code).toBe(0);
}, 60_000);

afterAll(async () => {
  await server.close();
  await store.close();
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

describe('wsag audit verify', () => {
  it('reports a sound trail: the chain holds and every agreement matches its audit entries', async () => {
    const result = await audit(['verify']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const head = (await store.audit.entries()).at(-1)?.hash;
    expect(result.out).toEqual([
      `audit log: 5 entries, the hash chain holds (head ${head})`,
      'agreements: 3 checked against their audit entries, all match',
      `signatures: not checked: no CA file (${path.join(dataDir, 'pki', 'ca.pem')})`,
      'all well',
    ]);
    const json = JSON.parse((await audit(['verify', '--json'])).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      ok: true,
      chain: { entries: 5, head },
      agreements: 3,
      problems: [],
      signaturesChecked: false,
    });
  });

  it('reports the first broken link when a row was edited (its trigger dropped first), and exits 1', async () => {
    const dir = tamperedCopy((db) => {
      db.exec('DROP TRIGGER audit_log_no_update');
      db.prepare("UPDATE audit_log SET actor = 'mallory' WHERE seq = 3").run();
    });
    const result = await audit(['verify'], dir);
    expect(result.code).toBe(1);
    expect(result.out[0]).toBe(
      'audit log: 5 entries; BROKEN at row 3: hash mismatch in row 3: its content changed after it was written',
    );
    expect(result.out.at(-1)).toBe('1 problem found');
    expect(JSON.parse((await audit(['verify', '--json'], dir)).stdout)).toMatchObject({
      ok: false,
      chain: { firstBroken: { seq: 3, reason: 'hash mismatch in row 3: its content changed after it was written' } },
    });
  });

  it('reports a deleted row as a seq gap', async () => {
    const dir = tamperedCopy((db) => {
      db.exec('DROP TRIGGER audit_log_no_delete');
      db.prepare('DELETE FROM audit_log WHERE seq = 2').run();
    });
    const result = await audit(['verify'], dir);
    expect(result.code).toBe(1);
    expect(result.out[0]).toBe('audit log: 4 entries; BROKEN at row 2: seq gap: row 2 is missing (the next row is 3)');
  });

  it('reports an agreement whose document was changed in the file', async () => {
    const dir = tamperedCopy((db) => {
      db.prepare("UPDATE agreements SET document = replace(document, 'deadline-job', 'forged-job') WHERE id = ?").run(
        second,
      );
    });
    const result = await audit(['verify'], dir);
    expect(result.code).toBe(1);
    expect(result.out).toContain(
      `  agreement ${second}: its document does not match the documentSha256 of its last audit entry (row 2): it was changed outside the server`,
    );
    expect(result.out[0]).toMatch(/^audit log: 5 entries, the hash chain holds/);
  });

  it('fails with a clear message when there is no database (exit 1)', async () => {
    const empty = freshDir();
    const result = await audit(['verify'], empty);
    expect(result.code).toBe(1);
    expect(result.err[0]).toBe(
      `error: no database at ${path.join(empty, 'wsag.db')}: point --data-dir (or WSAG_DATA_DIR) at the server's data directory`,
    );
    expect((await wsag(['audit', 'verify', '--data-dir', dataDir], { env: { WSAG_DATA_DIR: empty } })).code).toBe(0);
  });
});

describe('wsag audit verify: signatures', () => {
  let pki: TestPki;
  let signedDir: string;
  beforeAll(async () => {
    pki = createTestPki();
    // A database holding one agreement signed by the provider, stored with its audit entry as the server would.
    signedDir = freshDir();
    const signedStore = SqliteStore.open(path.join(signedDir, 'wsag.db'));
    const agreement = (await store.agreements.get(second)) as Agreement;
    // Signed (and so written) while the provider's certificate is valid: that is the time its chain is checked at.
    const signedAt = new Date(new Date(pki.provider.chain[0]?.validFrom as string).getTime() + 60_000);
    const document = signAgreement(agreement.document, { key: pki.provider.key, chain: pki.provider.chain });
    const signed = { ...agreement, document, updatedAt: signedAt };
    await signedStore.agreements.insert(signed, [
      agreementNote({ actor: 'anonymous', action: 'created', after: signed }),
    ]);
    await signedStore.close();
  });
  afterAll(() => pki.remove());

  it("checks each agreement's signatures against the CA file", async () => {
    const result = await audit(['verify', '--ca-file', pki.caFile], signedDir);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`signatures: checked against ${pki.caFile}`);
    expect((await audit(['verify'], signedDir, { WSAG_CA_FILE: pki.caFile })).code).toBe(0);
  });

  it('reports signatures that do not lead to a trusted CA', async () => {
    const untrusted = await audit(['verify', '--ca-file', pki.strangerCaFile], signedDir);
    expect(untrusted.code).toBe(1);
    expect(
      untrusted.out.some(
        (line) => line.startsWith(`  agreement ${second}: signature: `) && /untrusted chain/.test(line),
      ),
    ).toBe(true);
  });

  it('counts agreements stored while signing was off, without calling them problems; a stripped signature still is one', async () => {
    const unsigned = await audit(['verify', '--ca-file', pki.caFile]);
    expect(unsigned.code).toBe(0);
    expect(unsigned.out).toContain(
      `signatures: checked against ${pki.caFile}; 3 agreements were stored unsigned (made while signing was off), their documents as stored`,
    );
    expect(unsigned.out.at(-1)).toBe('all well');
    expect(JSON.parse((await audit(['verify', '--ca-file', pki.caFile, '--json'])).stdout)).toMatchObject({
      ok: true,
      unsigned: 3,
      problems: [],
    });
    const stripped = freshDir();
    fs.copyFileSync(path.join(signedDir, 'wsag.db'), path.join(stripped, 'wsag.db'));
    const db = new Database(path.join(stripped, 'wsag.db'));
    const row = db.prepare('SELECT document FROM agreements WHERE id = ?').get(second) as { document: string };
    db.prepare('UPDATE agreements SET document = ? WHERE id = ?').run(
      row.document.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ''),
      second,
    );
    db.close();
    const result = await audit(['verify', '--ca-file', pki.caFile], stripped);
    expect(result.code).toBe(1);
    expect(
      result.out.some((line) =>
        line.startsWith(`  agreement ${second}: its document does not match the documentSha256`),
      ),
    ).toBe(true);
  });
});

describe('wsag audit show', () => {
  it("prints an agreement's history: time, actor, action, details", async () => {
    const result = await audit(['show', first]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(`agreement ${first}: 2 audit entries`);
    expect(result.out[1]).toMatch(/^ {2}SEQ +TIME +ACTOR +ACTION +DETAILS$/);
    expect(result.out[2]).toMatch(
      /^ {2}1 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +anonymous +created +\{.*"state":"Observed"/,
    );
    expect(result.out[3]).toMatch(
      /^ {2}3 +\S+ +anonymous +terminated +\{.*"previousState":"Observed".*"state":"Terminated"/,
    );
  });

  it('--json prints the entries', async () => {
    const json = JSON.parse((await audit(['show', pending, '--json'])).stdout) as {
      agreementId: string;
      entries: Array<Record<string, unknown>>;
    };
    expect(json.agreementId).toBe(pending);
    expect(json.entries.map((e) => [e.seq, e.actor, e.action])).toEqual([
      [4, 'anonymous', 'created'],
      [5, 'anonymous', 'accepted'],
    ]);
    expect(json.entries[1]).toMatchObject({
      subject: { kind: 'agreement', id: pending },
      details: { state: 'Observed', previousState: 'Pending' },
    });
    expect(typeof json.entries[1]?.at).toBe('string');
  });

  it('fails for an id it does not know (exit 1)', async () => {
    const result = await audit(['show', 'no-such-id']);
    expect(result.code).toBe(1);
    expect(result.err[0]).toBe('error: no agreement or negotiation "no-such-id" in the database');
  });
});

describe('wsag audit export', () => {
  it('prints the agreement document as stored, or writes it into a file exactly', async () => {
    const document = (await store.agreements.get(second))?.document as string;
    expect(document).toContain('wsag:AgreementOffer');
    const printed = await audit(['export', second]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(document);
    const file = path.join(freshDir(), 'agreement.xml');
    const written = await audit(['export', second, '--out', file]);
    expect(written.out).toEqual([
      `wrote agreement ${second} (${Buffer.byteLength(document)} bytes, as stored) to ${file}`,
    ]);
    expect(fs.readFileSync(file, 'utf8')).toBe(document);
  });

  it('fails for an unknown agreement (exit 1)', async () => {
    const result = await audit(['export', 'no-such-id']);
    expect(result.code).toBe(1);
    expect(result.err[0]).toBe('error: no agreement "no-such-id" in the database');
  });
});

describe('wsag audit: command line', () => {
  it('usage errors (exit 2)', async () => {
    const cases: Array<[string[], string]> = [
      [[], 'error: missing ACTION'],
      [['frob'], 'error: unknown action "frob": use verify, show or export'],
      [['show'], 'error: missing ID: wsag audit show ID'],
      [['verify', 'x'], 'error: unexpected argument "x": audit verify checks everything'],
      [['show', first, '--out', 'f'], 'error: --out belongs to audit export'],
    ];
    for (const [argv, message] of cases) {
      const result = await audit(argv);
      expect(result.code).toBe(2);
      expect(result.err[0]).toBe(message);
    }
  });
});
