import { ServiceUnavailable } from '../../src/domain/errors.js';
import postgres from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeHold, credit, placeHold } from '../../src/domain/accounts.js';
import { PgAccountStore } from '../../src/store/postgres/pg-account-store.js';
import {
  PgConnection,
  sqlLiteral,
  requireSupportedServer,
  type Queryable,
} from '../../src/store/postgres/pg-connection.js';
import { pgMigrations } from '../../src/store/postgres/pg-migrations.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { accountStoreContract, makeAccount } from './account-store.suite.js';
import { agreementRepositoryContract } from './agreement-repository.suite.js';
import { auditLogContract } from './audit-log.suite.js';
import { makeAgreement } from './fixtures/make-agreement.js';
import { makeFullNegotiation, makeOffer, rowWithDocuments } from './fixtures/make-negotiation.js';
import { negotiationRepositoryContract } from './negotiation-repository.suite.js';
import { seenSignaturesContract } from './seen-signatures.suite.js';
import { idempotencyRecordsContract } from './idempotency-records.suite.js';
import { usageRecordStoreContract } from './usage-records.suite.js';

/**
 * The PostgreSQL stores against the same contract suites as SQLite and the memory
 * twins, on a real PostgreSQL started for this file; each store gets a schema of its own.
 */
let pg: TestPostgres | undefined;
let schemas = 0;
beforeAll(async () => {
  if (!skipPostgres) pg = await startPostgres();
}, 120_000);
afterAll(async () => pg?.stop());

const fresh = () => PgStore.open((pg as TestPostgres).url, { schema: `contract_${process.pid}_${++schemas}` });

describe('the PostgreSQL version', () => {
  it('is 11 or later (sha256()); an older server is refused naming both versions', () => {
    expect(() => requireSupportedServer(110000)).not.toThrow();
    expect(() => requireSupportedServer(150018)).not.toThrow();
    expect(() => requireSupportedServer(100023)).toThrow(/PostgreSQL 10; wsag-server needs PostgreSQL 11 or later/);
  });
});

describe.skipIf(skipPostgres)('PostgreSQL stores', () => {
  agreementRepositoryContract('PgAgreementRepository', async () => (await fresh()).agreements);
  negotiationRepositoryContract('PgNegotiationRepository', async () => (await fresh()).negotiations);
  auditLogContract('PgAuditLog', () => fresh());
  accountStoreContract('PgAccountStore', async () => (await fresh()).accounts);
  usageRecordStoreContract('PgUsageRecords', async () => (await fresh()).usageRecords);
  seenSignaturesContract('PgSeenSignatures', async () => (await fresh()).seenSignatures);
  idempotencyRecordsContract('PgIdempotencyRecords', async () => (await fresh()).idempotency);

  it('an account operation reads only the holds it asks for, however many the account has had', async () => {
    const connection = await PgConnection.open((pg as TestPostgres).url, { schema: `holds_${process.pid}` });
    let holdRowsRead = 0;
    // The store's transactions, with the rows each account_holds query returned counted.
    const counted: PgConnection = Object.assign(Object.create(connection) as PgConnection, {
      transaction: <T>(work: (tx: Queryable) => Promise<T>) =>
        connection.transaction((tx) =>
          work({
            query: async (sql: string, params?: unknown[]) => {
              const result = await tx.query(sql, params);
              if (/FROM account_holds/.test(sql)) holdRowsRead += result.rowCount ?? 0;
              return result;
            },
          } as Queryable),
        ),
    });
    const accounts = new PgAccountStore(counted);
    try {
      const at = new Date('2026-11-25T10:00:00Z');
      await accounts.createAccount(makeAccount('busy'));
      await accounts.apply('busy', 'deposit', (a) => credit(a, 'deposit', 1_000_000, at, 'deposit', 'grant'));
      for (let i = 0; i < 100; i++) {
        await accounts.apply('busy', `hold-${i}`, (a) =>
          placeHold(a, `agreement:${i}`, 100, at, `hold-${i}`, 'agreement'),
        );
        await accounts.apply('busy', `close-${i}`, (a, hold) =>
          closeHold(a, hold(`agreement:${i}`) as never, { kind: 'charge', amount: 50 }, at, `close-${i}`, 'used'),
        );
      }
      holdRowsRead = 0;
      await accounts.apply('busy', 'hold-new', (a) => placeHold(a, 'agreement:new', 100, at, 'hold-new', 'agreement'));
      expect(holdRowsRead).toBe(0);
      await accounts.apply('busy', 'close-new', (a, hold) =>
        closeHold(a, hold('agreement:new') as never, undefined, at, 'close-new', 'released'),
      );
      expect(holdRowsRead).toBe(1);
      expect(await accounts.account('busy')).toMatchObject({ funds: 1_000_000 - 100 * 50, held: 0 });
    } finally {
      await accounts.close();
    }
  });

  it('moves the offer documents of a database written before migration 3 out of the records, and keeps each once', async () => {
    const schema = `documents_${process.pid}`;
    const old = makeFullNegotiation();
    const client = new postgres.Client({
      connectionString: (pg as TestPostgres).url,
      options: `-c search_path=${schema}`,
    });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}`);
      for (const sql of pgMigrations.slice(0, 2)) await client.query(sql);
      await client.query(
        'CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version (version) VALUES (2)',
      );
      await client.query(
        'INSERT INTO negotiations (id, initiator, state, live_holds, created_at, updated_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        rowWithDocuments(old),
      );
    } finally {
      await client.end();
    }
    const store = await PgStore.open((pg as TestPostgres).url, { schema });
    const next = {
      ...old,
      rounds: old.rounds + 1,
      offers: [
        ...old.offers,
        makeOffer({ offerId: 'neg-full-9', document: '<wsag-neg:NegotiationOffer>9</wsag-neg:NegotiationOffer>' }),
      ],
    };
    try {
      expect(await store.negotiations.get(old.id)).toStrictEqual(old);
      await store.negotiations.update(next);
      expect(await store.negotiations.get(old.id)).toStrictEqual(next);
      expect((await store.negotiations.list()).map((n) => n.offers.map((o) => o.document))).toEqual([
        next.offers.map((o) => o.document),
      ]);
    } finally {
      await store.close();
    }
    const check = await PgConnection.open((pg as TestPostgres).url, { schema, readOnly: true });
    try {
      const { rows } = await check.query<{ offer_id: string }>(
        'SELECT offer_id FROM negotiation_offers ORDER BY offer_id',
      );
      expect(rows.map((r) => r.offer_id)).toEqual([...old.offers.map((o) => o.offerId), 'neg-full-9'].sort());
      const record = (await check.query<{ record: string }>('SELECT record FROM negotiations')).rows[0]?.record;
      expect(record).not.toContain('"document"');
    } finally {
      await check.close();
    }
  });

  it('concurrent writes from two pools on one database keep one unbroken audit chain', async () => {
    const schema = `chain_${process.pid}`;
    const a = await PgStore.open((pg as TestPostgres).url, { schema });
    const b = await PgStore.open((pg as TestPostgres).url, { schema });
    const note = (i: number) => [{ at: new Date(), actor: 'CN=alice', action: 'created', details: { i } }];
    try {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).agreements.insert(makeAgreement({ id: `race-${i}` }), note(i)),
        ),
      );
      const entries = await a.audit.entries();
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      for (let i = 1; i < entries.length; i++) expect(entries[i]?.prevHash).toBe(entries[i - 1]?.hash);
      expect(await b.agreementsWithoutAudit()).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a transaction commits without waiting for the log, yet resolves only once its commit is flushed; `committed` runs before', async () => {
    const connection = await PgConnection.open((pg as TestPostgres).url, { schema: `flush_${process.pid}` });
    /** Whether the log is flushed past `lsn` (by default, all of it written so far). */
    const flushed = async (lsn?: string) =>
      (
        await connection.query<{ flushed: boolean }>(
          `SELECT pg_current_wal_flush_lsn() ${lsn ? '> $1::pg_lsn' : '>= pg_current_wal_insert_lsn()'} AS flushed`,
          lsn ? [lsn] : [],
        )
      ).rows[0]?.flushed;
    // The WAL writer flushes an asynchronous commit within a fraction of a second: slowed down, only the transaction's own flush can.
    await connection.query("ALTER SYSTEM SET wal_writer_delay = '10s'");
    await connection.query('SELECT pg_reload_conf()');
    try {
      await connection.query('CREATE TABLE IF NOT EXISTS flushes (v INTEGER)');
      for (let i = 0; i < 5; i++) {
        const seen: Array<boolean | undefined> = [];
        // Where the log ended before the commit: its commit record comes after. Flushed past it
        // means the commit is; what other processes log later cannot make this check fail.
        const beforeCommit = await connection.transaction(
          async (tx) => {
            await tx.query('INSERT INTO flushes (v) VALUES ($1)', [i]);
            return (await tx.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn() AS lsn')).rows[0]?.lsn;
          },
          () => seen.push(true),
        );
        expect(seen).toEqual([true]);
        expect(await flushed(beforeCommit)).toBe(true);
      }
      // The commits did not wait: one made without the flush after it is not flushed yet.
      const client = await connection.pool.connect();
      try {
        await client.query('BEGIN; SET LOCAL synchronous_commit TO OFF');
        await client.query('INSERT INTO flushes (v) VALUES (99)');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      expect(await flushed()).toBe(false);
    } finally {
      await connection.query('ALTER SYSTEM RESET wal_writer_delay');
      await connection.query('SELECT pg_reload_conf()');
      await connection.close();
    }
  });

  it('what is sent with the commit is one message with it: when it fails, the commit does not happen and nothing is stored', async () => {
    const connection = await PgConnection.open((pg as TestPostgres).url, { schema: `with_commit_${process.pid}` });
    try {
      await connection.query('CREATE TABLE IF NOT EXISTS notes (text TEXT NOT NULL)');
      await expect(
        connection.transaction(async (tx) => {
          await tx.query('INSERT INTO notes VALUES ($1)', ['written first']);
          void tx.withCommit(['INSERT INTO no_such_table VALUES (1)']);
        }),
      ).rejects.toThrow(/no_such_table/);
      expect((await connection.query('SELECT * FROM notes')).rows).toEqual([]);
      // Without a query before it, BEGIN goes in the same message: it fails and rolls back as a whole.
      await expect(
        connection.transaction(async (tx) => {
          void tx.withCommit([
            `INSERT INTO notes VALUES (${sqlLiteral('only sent')})`,
            'INSERT INTO no_such_table VALUES (1)',
          ]);
        }),
      ).rejects.toThrow(/no_such_table/);
      expect((await connection.query('SELECT * FROM notes')).rows).toEqual([]);
      let sent: Promise<unknown> | undefined;
      await connection.transaction(async (tx) => {
        await tx.query('INSERT INTO notes VALUES ($1)', ['kept']);
        sent = tx.withCommit([
          `INSERT INTO notes VALUES (${sqlLiteral("it's")}) RETURNING text`,
          'SELECT count(*)::int AS n FROM notes',
        ]);
      });
      expect(await sent).toEqual([[{ text: "it's" }], [{ n: 2 }]]);
      expect((await connection.query('SELECT text FROM notes ORDER BY text')).rows).toEqual([
        { text: "it's" },
        { text: 'kept' },
      ]);
    } finally {
      await connection.close();
    }
  });

  it("no round trip is made under the audit chain's lock, and a new agreement is stored in one message", async () => {
    const store = await PgStore.open((pg as TestPostgres).url, { schema: `messages_${process.pid}` });
    const sent = vi.spyOn(postgres.Client.prototype, 'query');
    const messages = () =>
      sent.mock.calls
        .splice(0)
        .map(([sql]) => String(typeof sql === 'string' ? sql : (sql as { text: string }).text))
        .filter((sql) => !sql.includes('pg_logical_emit_message'));
    const notes = (action: string) => [
      { at: new Date(), actor: 'CN=alice', action, details: {} },
      { at: new Date(), actor: 'CN=alice', action: 'noted', details: {} },
    ];
    const appended =
      /SELECT pg_advisory_xact_lock\(727002\);\nINSERT INTO audit_log .*;\nINSERT INTO audit_log .*;\nCOMMIT$/s;
    try {
      await store.agreements.insert(makeAgreement({ id: 'a-1' }), notes('created'));
      const inserted = messages();
      expect(inserted).toHaveLength(1);
      expect(inserted[0]).toMatch(
        /^BEGIN;\nSET LOCAL synchronous_commit TO OFF;\nINSERT INTO agreements \(.*\) VALUES \('a-1', .*\);\nSELECT pg_advisory_xact_lock/s,
      );
      expect(inserted[0]).toMatch(appended);
      await store.agreements.update(makeAgreement({ id: 'a-1', state: 'Terminated' }), notes('terminated'));
      const updated = messages();
      expect(updated.map((sql) => sql.slice(0, 20))).toEqual([
        'BEGIN;\nSET LOCAL syn',
        'UPDATE agreements SE',
        'SELECT pg_advisory_x',
      ]);
      expect(updated[2]).toMatch(appended);
      expect((await store.audit.entries()).map((e) => [e.seq, e.action])).toEqual([
        [1, 'created'],
        [2, 'noted'],
        [3, 'terminated'],
        [4, 'noted'],
      ]);
      expect(await store.agreements.get('a-1')).toEqual(makeAgreement({ id: 'a-1', state: 'Terminated' }));
    } finally {
      sent.mockRestore();
      await store.close();
    }
  });

  it("SQL literals are written as pg's escapeLiteral writes them, and refuse what no literal can hold", () => {
    for (const text of ['plain', "it's", 'a\\b', "o'b\\\\'x", '', 'é\u{1F600}\n\t'])
      expect(sqlLiteral(text)).toBe(postgres.escapeLiteral(text));
    expect([sqlLiteral(null), sqlLiteral(42), sqlLiteral(-7)]).toEqual(['NULL', '42', '-7']);
    expect(() => sqlLiteral(1.5)).toThrow(/not an integer/);
    expect(() => sqlLiteral(2 ** 60)).toThrow(/not an integer/);
    expect(() => sqlLiteral('a\0b')).toThrow(/NUL/);
  });

  it('an audit note holding NUL is refused, as PostgreSQL refuses NUL in text, and neither it nor its change is stored', async () => {
    const store = await PgStore.open((pg as TestPostgres).url, { schema: `nul_${process.pid}` });
    try {
      const note = (actor: string) => [{ at: new Date(), actor, action: 'created', details: {} }];
      await expect(store.agreements.insert(makeAgreement({ id: 'nul' }), note('CN=a\0b'))).rejects.toThrow(/NUL/);
      expect(await store.agreements.get('nul')).toBeUndefined();
      expect(await store.audit.entries()).toEqual([]);
      await store.agreements.insert(makeAgreement({ id: 'nul' }), note('CN=ab'));
      expect((await store.audit.entries()).map((e) => e.actor)).toEqual(['CN=ab']);
    } finally {
      await store.close();
    }
  });

  it('a transaction whose session the database ends fails as ServiceUnavailable, and the process keeps running', async () => {
    const connection = await PgConnection.open((pg as TestPostgres).url, { schema: `ended_${process.pid}` });
    try {
      const outcome = connection.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // As when PostgreSQL restarts or an operator ends the session between two statements.
        await connection.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('SELECT 1');
      });
      // In plain words (nothing was changed), the connection error behind them in the detail.
      const error = (await outcome.catch((e: unknown) => e)) as ServiceUnavailable;
      expect(error).toBeInstanceOf(ServiceUnavailable);
      expect(error.message).toMatch(/^the database cannot be reached .*: nothing was changed/);
      expect(error.technicalDetail).toMatch(/terminat|not queryable/);
      // The pool drops the broken client and serves the next transaction.
      expect(
        await connection.transaction(async (tx) => (await tx.query<{ one: number }>('SELECT 1 AS one')).rows),
      ).toEqual([{ one: 1 }]);
    } finally {
      await connection.close();
    }
  });

  it('work still under way when the connection is closed fails as ServiceUnavailable, not as an internal error', async () => {
    // As on a leader that steps down: its store is closed while requests it accepted still run.
    const connection = await PgConnection.open((pg as TestPostgres).url, { schema: `closed_${process.pid}` });
    let closing: Promise<void> | undefined;
    const inFlight = connection.transaction(async (tx) => {
      await tx.query('SELECT 1');
      closing = connection.close();
      return (await tx.query<{ two: number }>('SELECT 2 AS two')).rows;
    });
    // The transaction that held a session when the pool was closed ends as it would have.
    expect(await inFlight).toEqual([{ two: 2 }]);
    await closing;
    for (const step of [
      () => connection.query('SELECT 1'),
      () => connection.transaction(async (tx) => tx.query('SELECT 1')),
    ]) {
      const error = (await step().catch((e: unknown) => e)) as ServiceUnavailable;
      expect(error).toBeInstanceOf(ServiceUnavailable);
      expect(error.message).toMatch(/stopped using the database .*: the step under way was not done/);
    }
  });
});
