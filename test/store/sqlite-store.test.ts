import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteAgreementRepository, SqliteStore } from '../../src/store/index.js';
import { makeAgreement, makeFullAgreement } from './fixtures/make-agreement.js';
import { makeFullNegotiation, makeHold, makeNegotiation, makeOffer } from './fixtures/make-negotiation.js';
import { writeVersion1Database } from './fixtures/version-1-database.js';
import { negotiationRepositoryContract } from './negotiation-repository.suite.js';

const dir = mkdtempSync(join(tmpdir(), 'wsag-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `db-${files++}.sqlite`);

negotiationRepositoryContract('SqliteNegotiationRepository (memory)', () => SqliteStore.memory().negotiations);
negotiationRepositoryContract('SqliteNegotiationRepository (file)', () => SqliteStore.open(freshFile()).negotiations);

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
    expect(tables).toEqual(['agreements', 'negotiations', 'schema_version']);

    const second = SqliteStore.open(file); // migrations must not re-run
    expect(await second.agreements.get(agreement.id)).toStrictEqual(agreement);
    expect(await second.negotiations.get(negotiation.id)).toStrictEqual(negotiation);
    expect((await second.negotiations.list()).map((n) => n.id)).toEqual(['neg-1', 'neg-full']);
    expect((await second.negotiations.list({ withLiveHolds: true })).map((n) => n.id)).toEqual(['neg-full']);
    await second.close();
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
    await store.agreements.update({ ...old, allocation: full.allocation, price, origin, alternative, usedBy, acceptanceEpr });
    expect(await store.agreements.get(full.id)).toStrictEqual(full);
    await store.negotiations.insert(makeFullNegotiation());
    expect(await store.negotiations.get('neg-full')).toStrictEqual(makeFullNegotiation());
    await store.close();

    expect(inspect(file, (db) => db.prepare('SELECT max(version) FROM schema_version').pluck().get())).toBe(4);
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
});
