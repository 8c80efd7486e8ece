import { unavailableOr } from './pg-unavailable.js';
import pg from 'pg';
import { WalSync } from '../wal-sync.js';
import { pgMigrations } from './pg-migrations.js';

/** A query runner: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** A client inside a transaction: its queries, and what is sent with its COMMIT. */
export interface PgTransaction extends Queryable {
  /**
   * Sends `statements` with the COMMIT, in the same message just before it: one round trip
   * for all, in the simple query protocol, so their values are literals (`sqlLiteral`). Each
   * statement runs with a snapshot of its own, taken when it starts. When one fails, the
   * rest and the COMMIT are not run and the transaction rolls back; the promise resolves with
   * each statement's rows once the transaction has committed (and never settles otherwise:
   * the transaction's own promise says why). Why: the audit chain's lock is held to the
   * commit, and a round trip under it is a wait for every other writer (PgAuditLog).
   */
  withCommit(statements: string[]): Promise<pg.QueryResultRow[][]>;
}

/** BIGINT (int8) columns hold milliseconds and sums in cents: well within a JavaScript number. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * The PostgreSQL database of the server (WSAG_DATABASE_URL): a connection pool, the schema
 * brought up to date at open (numbered migrations, one transaction each, serialised by an
 * advisory lock so instances starting together apply each once), and transactions that are
 * durable before their promise resolves.
 *
 * A transaction commits without waiting for the log's flush (`SET LOCAL synchronous_commit
 * TO OFF`), and then waits for a flush started after its commit, shared by the transactions
 * that committed meanwhile (WalSync), as a database's group commit does. Why: the audit
 * chain's lock is held to the commit (PgAuditLog), so a commit that waited for the flush made
 * every other writer wait for it too. The flush is a transaction that writes to the log and
 * commits with synchronous_commit on, as it stays for the session: PostgreSQL flushes its log
 * up to that commit, past every commit made before it. What it writes is a transactional
 * logical decoding message (prefix `wsag-server`), which needs no table nor privilege and
 * works at any wal_level; a transaction that only takes an ID (txid_current) writes nothing
 * before its commit record and is not flushed. Until the flush a commit is readable but not
 * durable, as with SQLite: the log is flushed in order, so whatever a later write builds on
 * it is durable only after it (docs/architecture.md).
 */
export class PgConnection {
  /** Groups the flushes that make commits durable (see above); none for a read-only connection. */
  private readonly flushes: WalSync | undefined;
  /** Set by `close`: work begun after it fails on the ended pool, and says so as ServiceUnavailable. */
  private closed = false;
  /** Transactions not yet durable: `close` waits for them, so none that committed is left unflushed. */
  private readonly underWay = new Set<Promise<unknown>>();

  private constructor(
    readonly pool: pg.Pool,
    readOnly: boolean,
  ) {
    this.flushes = readOnly
      ? undefined
      : new WalSync(async () => {
          await pool.query("SELECT pg_logical_emit_message(true, 'wsag-server', 'flush')");
        });
  }

  static async open(
    url: string,
    options: { schema?: string; max?: number; readOnly?: boolean } = {},
  ): Promise<PgConnection> {
    const settings = [
      ...(options.schema ? [`-c search_path=${options.schema}`] : []),
      ...(options.readOnly ? ['-c default_transaction_read_only=on'] : []),
    ];
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 8,
      types,
      ...(settings.length ? { options: settings.join(' ') } : {}),
    });
    // An idle client's error (the server went away) must not crash the process: the next query reports it.
    pool.on('error', () => {});
    const connection = new PgConnection(pool, options.readOnly === true);
    if (options.readOnly) return connection; // reading what a server wrote: its schema is its business
    try {
      requireSupportedServer(
        Number(
          (await pool.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]?.server_version_num,
        ),
      );
    } catch (error) {
      await pool.end();
      throw error;
    }
    if (options.schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    await connection.migrate();
    return connection;
  }

  query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(sql, params).catch((error: unknown) => Promise.reject(this.failure(error, false)));
  }

  /**
   * Runs `work` in one transaction: committed and durable when it resolves, rolled back when
   * it throws. `committed` runs once the commit is readable, before it is durable (never when
   * the transaction fails).
   */
  transaction<T>(work: (tx: PgTransaction) => Promise<T>, committed?: () => void): Promise<T> {
    if (this.closed) return Promise.reject(this.failure(new Error('the connection pool is closed'), false));
    const underWay = this.commitDurably(work, committed);
    this.underWay.add(underWay);
    const done = () => this.underWay.delete(underWay);
    underWay.then(done, done);
    return underWay;
  }

  private async commitDurably<T>(work: (tx: PgTransaction) => Promise<T>, committed?: () => void): Promise<T> {
    const result = await this.commitWithoutFlush(work);
    committed?.();
    // Committed, maybe not yet durable: a lost connection now leaves the outcome unknown.
    await this.flushes?.durable().catch((error: unknown) => Promise.reject(this.failure(error, true)));
    return result;
  }

  /** `work` in one transaction, committed without waiting for the log's flush. */
  private async commitWithoutFlush<T>(work: (tx: PgTransaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((error: unknown) => Promise.reject(this.failure(error, false)));
    // A checked-out client has no pool listener: if the database ends the session mid-transaction,
    // its 'error' event would crash the process. The failure reaches `work` through its next query.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      // BEGIN goes with the first query, or with the COMMIT when the work only sends statements with it:
      // a write that needs no answer before its commit is then one round trip.
      let begun: Promise<unknown> | undefined;
      const withCommit: Array<{ statements: string[]; committed: (rows: pg.QueryResultRow[][]) => void }> = [];
      const result = await work({
        query: async <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) => {
          await (begun ??= client.query(begin.join(';\n')));
          return client.query<R>(sql, params);
        },
        withCommit: (statements) => new Promise((committed) => void withCommit.push({ statements, committed })),
      });
      const statements = [...(begun ? [] : begin), ...withCommit.flatMap((sent) => sent.statements), 'COMMIT'];
      // With more than one statement, node-postgres answers with one result per statement.
      const results = (await client
        .query(statements.join(';\n'))
        .catch((error: unknown) => Promise.reject(this.failure(error, true)))) as unknown as
        | pg.QueryResult[]
        | pg.QueryResult;
      let next = begun ? 0 : begin.length;
      for (const sent of withCommit)
        sent.committed(sent.statements.map(() => (Array.isArray(results) ? results[next++]?.rows : undefined) ?? []));
      return result;
    } catch (error) {
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw this.failure(error, false);
    } finally {
      client.removeListener('error', onError);
      client.release(broken); // a broken client is discarded, not pooled
    }
  }

  /** Refuses new work, lets the transactions under way commit and be flushed, then ends the pool. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.underWay]);
    await this.pool.end();
  }

  private failure(error: unknown, whileCommitting: boolean): unknown {
    return unavailableOr(error, whileCommitting, this.closed);
  }

  private async migrate(): Promise<void> {
    await this.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(727001)');
      await tx.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_version');
      let version = rows[0]?.version ?? 0;
      if (rows.length === 0) await tx.query('INSERT INTO schema_version (version) VALUES (0)');
      if (version > pgMigrations.length)
        throw new Error(
          `the database is at schema version ${version}, newer than this ` +
            `server knows (${pgMigrations.length}): upgrade the server`,
        );
      for (; version < pgMigrations.length; version++) await tx.query(pgMigrations[version] as string);
      await tx.query('UPDATE schema_version SET version = $1', [version]);
    });
  }
}

/** Throws, saying why, when PostgreSQL's `server_version_num` (e.g. 150018) is older than the audit chain needs. */
export function requireSupportedServer(versionNum: number): void {
  if (versionNum >= 110000) return;
  throw new Error(
    `the database is PostgreSQL ${Math.floor(versionNum / 10000)}; wsag-server needs PostgreSQL 11 or later ` +
      `(its audit chain is hashed with sha256()): docs/deployment.md`,
  );
}

/**
 * `value` as an SQL literal, for statements sent with a COMMIT (PgTransaction.withCommit):
 * a safe integer as its digits, null as NULL, a string quoted as pg's escapeLiteral quotes it.
 * A string holding NUL is refused, as PostgreSQL refuses it as a parameter: in a query's text
 * it would end it.
 */
export function sqlLiteral(value: string | number | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`${value} is not an integer an SQL literal is written for`);
    return String(value);
  }
  if (value.includes('\0')) throw new Error('a text value holds a NUL character, which PostgreSQL does not store');
  // As pg's escapeLiteral writes it (E'' with backslashes doubled when there are any: right
  // whatever standard_conforming_strings says), with native replaces: it loops per character.
  const quoted = `'${value.replace(/'/g, "''")}'`;
  return value.includes('\\') ? ` E${quoted.replace(/\\/g, '\\\\')}` : quoted;
}

/** An INSERT of `rows` (each in `columns`' order) as literals, for a statement sent with a COMMIT. */
export function literalInsert(
  table: string,
  columns: string,
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>,
): string {
  return (
    `INSERT INTO ${table} (${columns}) VALUES ` +
    `${rows.map((row) => `(${row.map(sqlLiteral).join(', ')})`).join(', ')}`
  );
}

/** How a transaction begins: committing without waiting for the log's flush (see PgConnection). */
const begin = ['BEGIN', 'SET LOCAL synchronous_commit TO OFF'];

/** `?` placeholders (the SQL the SQLite stores share) as PostgreSQL's $1, $2, ... */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
