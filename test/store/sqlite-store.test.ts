import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AuditService } from '../../src/engine/audit/audit-service.js';
import { SqliteAgreementRepository, SqliteStore } from '../../src/store/index.js';
import { SqliteConnection } from '../../src/store/sqlite-connection.js';
import { migrations } from '../../src/store/sqlite-migrations.js';
import { auditLogContract } from './audit-log.suite.js';
import { makeAgreement, makeFullAgreement } from './fixtures/make-agreement.js';
import {
  makeFullNegotiation,
  makeHold,
  makeNegotiation,
  makeOffer,
  rowWithDocuments,
} from './fixtures/make-negotiation.js';
import { writeVersion1Database } from './fixtures/version-1-database.js';
import { negotiationRepositoryContract } from './negotiation-repository.suite.js';

const dir = mkdtempSync(join(tmpdir(), 'wsag-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `db-${files++}.sqlite`);

negotiationRepositoryContract('SqliteNegotiationRepository (memory)', () => SqliteStore.memory().negotiations);
negotiationRepositoryContract('SqliteNegotiationRepository (file)', () => SqliteStore.open(freshFile()).negotiations);
auditLogContract('SqliteAuditLog (memory)', () => SqliteStore.memory());
auditLogContract('SqliteAuditLog (file)', () => SqliteStore.open(freshFile()));

/** Reads the file through a second connection, as another process would. */
function inspect<T>(file: string, read: (db: Database.Database) => T): T {
  const raw = new Database(file, { readonly: true });
  try {
    return read(raw);
  } finally {
    raw.close();
  }
}

describe('SqliteStore', () => {
  it('keeps agreements and negotiations in one file across close and reopen', async () => {
    const file = freshFile();
    const first = SqliteStore.open(file);
    const agreement = makeFullAgreement();
    const negotiation = makeFullNegotiation();
    await first.agreements.insert(agreement);
    await first.negotiations.insert(negotiation);
    await first.negotiations.insert(makeNegotiation());
    await first.close();

    const tables = inspect(file, (db) =>
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all(),
    );
    expect(tables).toEqual([
      'account_holds',
      'accounts',
      'agreements',
      'audit_log',
      'idempotency_keys',
      'ledger',
      'negotiation_offers',
      'negotiations',
      'schema_version',
      'seen_signatures',
      'usage_records',
    ]);

    const second = SqliteStore.open(file); // migrations must not re-run
    expect(await second.agreements.get(agreement.id)).toStrictEqual(agreement);
    expect(await second.negotiations.get(negotiation.id)).toStrictEqual(negotiation);
    expect((await second.negotiations.list()).map((n) => n.id)).toEqual(['neg-1', 'neg-full']);
    expect((await second.negotiations.list({ withLiveHolds: true })).map((n) => n.id)).toEqual(['neg-full']);
    await second.close();
  });

  it('commits without syncing and answers every write only once the log is synced (WalSync)', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    const durable = vi.spyOn(SqliteConnection.prototype, 'durable');
    try {
      expect(inspect(file, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
      const syncs = async (write: () => Promise<unknown>) => {
        const before = durable.mock.calls.length;
        await write();
        return durable.mock.calls.length - before;
      };
      expect(await syncs(() => store.agreements.insert(makeAgreement({ id: 'a' })))).toBe(1);
      expect(await syncs(() => store.agreements.update(makeAgreement({ id: 'a', state: 'Terminated' })))).toBe(1);
      expect(await syncs(() => store.negotiations.insert(makeNegotiation({ id: 'n' })))).toBe(1);
      expect(await syncs(() => store.negotiations.update(makeNegotiation({ id: 'n' })))).toBe(1);
      expect(
        await syncs(() =>
          store.audit.append({
            at: new Date(),
            actor: 'test',
            subject: { kind: 'agreement', id: 'a' },
            action: 'noted',
            details: {},
          }),
        ),
      ).toBe(1);
      expect(
        await syncs(() =>
          store.usageRecords.add({ agreementId: 'a', initiator: 'alice', createdAt: new Date(), xml: '<ur/>' }),
        ),
      ).toBe(1);
    } finally {
      durable.mockRestore();
      await store.close();
    }
  });

  it('migrates a version-1 database (agreements only), keeping its agreements', async () => {
    const file = freshFile();
    const full = makeFullAgreement();
    // What a version-1 server could store: no negotiation fields, and an allocation without a plan.
    const { price, origin, alternative, usedBy, acceptanceEpr, ...unplanned } = full;
    const { start, end, nodes } = full.allocation as NonNullable<typeof full.allocation>;
    const old = { ...unplanned, allocation: { start, end, nodes } };
    const minimal = makeAgreement();
    writeVersion1Database(file, [old, minimal]);

    const store = SqliteStore.open(file);
    expect(await store.agreements.list()).toStrictEqual([minimal, old]);
    // The upgraded table takes the new fields, and negotiations now have a table.
    await store.agreements.update({
      ...old,
      allocation: full.allocation,
      price,
      origin,
      alternative,
      usedBy,
      acceptanceEpr,
    });
    expect(await store.agreements.get(full.id)).toStrictEqual(full);
    await store.negotiations.insert(makeFullNegotiation());
    expect(await store.negotiations.get('neg-full')).toStrictEqual(makeFullNegotiation());
    await store.close();

    expect(inspect(file, (db) => db.prepare('SELECT max(version) FROM schema_version').pluck().get())).toBe(
      migrations.length,
    );
  });

  it('keeps each offer document once, beside the record, and moves those of a version-8 database there', async () => {
    const file = freshFile();
    const old = makeFullNegotiation();
    const raw = new Database(file);
    raw.exec('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
    migrations.slice(0, 8).forEach((sql, i) => {
      raw.exec(sql);
      raw.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, 0)').run(i + 1);
    });
    raw
      .prepare(
        'INSERT INTO negotiations (id, initiator, state, live_holds, created_at, updated_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(...rowWithDocuments(old));
    raw.close();

    const store = SqliteStore.open(file);
    expect(await store.negotiations.get(old.id)).toStrictEqual(old);
    // Another round: the new offer's document joins the others; none is written twice.
    const next = {
      ...old,
      rounds: old.rounds + 1,
      offers: [
        ...old.offers,
        makeOffer({ offerId: 'neg-full-9', document: '<wsag-neg:NegotiationOffer>9</wsag-neg:NegotiationOffer>' }),
      ],
    };
    await store.negotiations.update(next);
    expect(await store.negotiations.get(old.id)).toStrictEqual(next);
    expect((await store.negotiations.list()).map((n) => n.offers.map((o) => o.document))).toEqual([
      next.offers.map((o) => o.document),
    ]);
    await store.close();

    const stored = inspect(file, (db) =>
      db.prepare('SELECT offer_id, document FROM negotiation_offers ORDER BY rowid').all(),
    );
    expect(stored).toEqual(next.offers.map((o) => ({ offer_id: o.offerId, document: o.document })));
    const record = inspect(file, (db) => db.prepare('SELECT record FROM negotiations').pluck().get()) as string;
    expect(record).not.toContain('"document"');
  });

  it('maintains live_holds, the count of Held holds, on insert and update', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    const liveHolds = () =>
      inspect(file, (db) => db.prepare('SELECT live_holds FROM negotiations WHERE id = ?').pluck().get('neg-1'));
    const held = (offerId: string) => makeOffer({ offerId, hold: makeHold() });

    await store.negotiations.insert(makeNegotiation({ offers: [held('h-1'), held('h-2'), makeOffer()] }));
    expect(liveHolds()).toBe(2);
    const released = makeOffer({ offerId: 'h-2', hold: makeHold({ state: 'Released' }) });
    await store.negotiations.update(makeNegotiation({ offers: [held('h-1'), released] }));
    expect(liveHolds()).toBe(1);
    await store.close();
  });

  it('has an index that answers list({ withLiveHolds: true }) in list order', async () => {
    const file = freshFile();
    await SqliteStore.open(file).close();
    // The repository's query for that filter; no "USE TEMP B-TREE" means no sort step either.
    const sql = 'SELECT * FROM negotiations WHERE live_holds > 0 ORDER BY created_at, id';
    const plan = inspect(file, (db) => db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]);
    expect(plan.map((step) => step.detail)).toEqual(['SCAN negotiations USING INDEX negotiations_with_live_holds']);
    // The expiry timer's query (holdExpiringBy) reads the same index, and only the rows it lists.
    const due =
      'SELECT * FROM negotiations WHERE live_holds > 0 AND (hold_expires_at IS NULL OR hold_expires_at <= ?) ORDER BY created_at, id';
    const duePlan = inspect(file, (db) => db.prepare(`EXPLAIN QUERY PLAN ${due}`).all(0) as { detail: string }[]);
    expect(duePlan.map((step) => step.detail)).toEqual(['SCAN negotiations USING INDEX negotiations_with_live_holds']);
  });

  it('lists a negotiation stored before migration 10 with a live hold as due, until its next write', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    const held = makeOffer({ offerId: 'h-1', hold: makeHold() });
    await store.negotiations.insert(makeNegotiation({ offers: [held] }));
    await store.close();
    // As the row was before the column existed.
    const raw = new Database(file);
    raw.exec('UPDATE negotiations SET hold_expires_at = NULL');
    raw.close();
    const reopened = SqliteStore.open(file);
    const dueAtZero = async () => (await reopened.negotiations.list({ holdExpiringBy: new Date(0) })).map((n) => n.id);
    expect(await dueAtZero()).toEqual(['neg-1']);
    await reopened.negotiations.update((await reopened.negotiations.get('neg-1'))!);
    expect(await dueAtZero()).toEqual([]);
    await reopened.close();
  });

  it('lets the store and both repositories be closed, in any order, more than once', async () => {
    const store = SqliteStore.open(freshFile());
    await store.negotiations.close();
    await store.agreements.close();
    await store.close();
    await expect(store.agreements.get('agr-1')).rejects.toThrow(/not open/);
  });

  it('keeps SqliteAgreementRepository.open working on a store file, negotiations included', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    await store.negotiations.insert(makeNegotiation());
    await store.close();
    const agreements = SqliteAgreementRepository.open(file);
    await agreements.insert(makeAgreement());
    await agreements.close();
    const reopened = SqliteStore.open(file);
    expect(await reopened.negotiations.get('neg-1')).toStrictEqual(makeNegotiation());
    expect(await reopened.agreements.get('agr-1')).toStrictEqual(makeAgreement());
    await reopened.close();
  });

  it('refuses UPDATE and DELETE of audit rows, even through another connection', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    await store.agreements.insert(makeAgreement(), [
      { at: new Date(0), actor: 'CN=alice', action: 'created', details: {} },
    ]);
    await store.close();
    const raw = new Database(file);
    try {
      expect(() => raw.prepare("UPDATE audit_log SET actor = 'mallory' WHERE seq = 1").run()).toThrow(
        /append-only: its rows cannot be updated/,
      );
      expect(() => raw.prepare('DELETE FROM audit_log').run()).toThrow(/append-only: its rows cannot be deleted/);
      expect(raw.prepare('SELECT actor FROM audit_log').pluck().all()).toEqual(['CN=alice']);
    } finally {
      raw.close();
    }
  });

  it('keeps one chain when two connections to the file take turns appending', async () => {
    const file = freshFile();
    const first = SqliteStore.open(file);
    const second = SqliteStore.open(file);
    const record = (id: string) => ({
      at: new Date(0),
      actor: 'system',
      subject: { kind: 'agreement', id } as const,
      action: 'adopted',
      details: {},
    });
    for (let i = 0; i < 4; i++) {
      await first.audit.append(record(`first-${i}`));
      await second.audit.append(record(`second-${i}`));
    }
    const report = await new AuditService({ audit: first.audit, agreements: first.agreements }).verifyChain();
    expect(report).toMatchObject({ entries: 8 });
    expect(report.firstBroken).toBeUndefined();
    expect((await second.audit.entries()).map((e) => e.subject.id)).toEqual([
      'first-0',
      'second-0',
      'first-1',
      'second-1',
      'first-2',
      'second-2',
      'first-3',
      'second-3',
    ]);
    await first.close();
    await second.close();
  });

  it('opens a file read-only: it reads, refuses writes, and creates or migrates nothing', async () => {
    const file = freshFile();
    expect(() => SqliteStore.openReadOnly(file)).toThrow();
    const writer = SqliteStore.open(file);
    await writer.agreements.insert(makeAgreement(), [
      { at: new Date(0), actor: 'CN=alice', action: 'created', details: {} },
    ]);
    await writer.close();

    const reader = SqliteStore.openReadOnly(file);
    expect(await reader.agreements.get('agr-1')).toStrictEqual(makeAgreement());
    expect((await reader.audit.entries()).map((e) => e.action)).toEqual(['created']);
    await expect(reader.agreements.insert(makeAgreement({ id: 'agr-2' }))).rejects.toThrow(/readonly/);
    await expect(
      reader.audit.append({
        at: new Date(0),
        actor: 'x',
        subject: { kind: 'agreement', id: 'agr-1' },
        action: 'x',
        details: {},
      }),
    ).rejects.toThrow(/readonly/);
    await reader.close();

    const old = freshFile();
    writeVersion1Database(old, [makeAgreement()]);
    expect(() => SqliteStore.openReadOnly(old)).toThrow(
      /version 1 is older than this code reads .*start the server once/,
    );
    expect(inspect(old, (db) => db.prepare('SELECT max(version) FROM schema_version').pluck().get())).toBe(1);
  });
});
