import { diskFailureOr } from './sqlite-failure.js';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './sqlite-migrations.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { WalSync } from './wal-sync.js';

export interface SqliteOpenOptions {
  /** Checkpoint the write-ahead log on a thread of its own (WalCheckpointer), not in the commits: for the server. */
  checkpointInBackground?: boolean;
}

/**
 * One better-sqlite3 connection with the server's pragmas and an up-to-date schema, shared
 * by the repositories of a SqliteStore. Calls are synchronous underneath: a write is
 * readable on this connection when it returns; a repository's promise resolves only after
 * `durable()`, once its transaction is committed and on disk, which is the ports'
 * durability contract (see `beginWrite` and WalSync for how).
 */
export class SqliteConnection {
  /** Statements whose SQL is built per call (list filters), prepared once each. */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly walSync?: WalSync;
  /** Whether the write group's transaction is open (see `beginWrite`). */
  private groupOpen = false;

  private constructor(
    readonly db: Database.Database,
    walFile?: string,
    /** Set when the log is checkpointed on a thread of its own. */
    private readonly checkpointer?: WalCheckpointer,
  ) {
    if (walFile !== undefined) this.walSync = WalSync.forFile(walFile, () => this.commitGroup());
  }

  /**
   * Call before each write, which `durable()` follows. The writes made while the log's sync
   * runs share one transaction, the write group, committed just before the next sync
   * starts (from `durable()`); a repository's own transaction becomes a savepoint inside
   * it, so a failed write leaves the others of its group. Why: each commit wrote every page
   * its write touched to the log, the same last leaves of the tables, indexes and audit log
   * again and again; a group writes them once (under load a third fewer bytes an
   * agreement, docs/benchmarks.md). Nothing is answered before its group's commit is
   * synced, and other connections (processes) see a group only once it has committed.
   */
  beginWrite(): void {
    if (this.walSync === undefined || this.db.inTransaction) return;
    this.db.exec('BEGIN IMMEDIATE');
    this.groupOpen = true;
    // A write that fails before its durable() call must not leave the group open.
    setImmediate(() => {
      if (this.groupOpen && this.db.open) this.walSync?.durable().catch(() => {});
    });
  }

  /** Commits the write group, if one is open; WalSync calls it before each sync. */
  private commitGroup(): void {
    if (!this.groupOpen) return;
    this.groupOpen = false;
    if (!this.db.inTransaction)
      throw new Error("SQLite rolled back the write group's transaction: its writes are lost");
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
    this.checkpointer?.committed();
  }

  /**
   * Resolves once every write made on this connection so far is committed and on disk (at
   * once for a database in memory).
   */
  durable(): Promise<void> {
    return this.walSync
      ? this.walSync.durable().catch((error: unknown) => Promise.reject(diskFailureOr(error)))
      : Promise.resolve();
  }

  /** The prepared statement for `sql`, prepared on first use. */
  statement<P extends unknown[], R>(sql: string): Database.Statement<P, R> {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as unknown as Database.Statement<P, R>;
  }

  /** Opens (creating if needed) the database file and brings its schema up to date. */
  static open(file: string, options: SqliteOpenOptions = {}): SqliteConnection {
    mkdirSync(dirname(file), { recursive: true });
    return SqliteConnection.configure(new Database(file), { wal: true, ...options });
  }

  /**
   * Opens an existing database file for reading only (wsag audit, next to a running server):
   * nothing is created or migrated, so its schema must be the one this code reads.
   */
  static openReadOnly(file: string): SqliteConnection {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      const version = schemaVersion(db);
      if (version !== migrations.length) {
        throw new Error(
          version < migrations.length
            ? `database schema version ${version} is older than this ` +
                `code reads (${migrations.length}): start the server once to upgrade it`
            : `database schema version ${version} is newer than this code reads (${migrations.length})`,
        );
      }
      return new SqliteConnection(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** A private in-memory database, for tests. */
  static memory(): SqliteConnection {
    return SqliteConnection.configure(new Database(':memory:'), { wal: false });
  }

  /** Idempotent: every repository sharing the connection closes it. */
  close(): void {
    if (!this.db.open) return;
    this.commitGroup();
    this.checkpointer?.close();
    this.db.close();
    this.walSync?.close();
  }

  private static configure(db: Database.Database, options: { wal: boolean } & SqliteOpenOptions): SqliteConnection {
    try {
      // Another process (the CLI, a second server) may hold the write lock briefly.
      db.pragma('busy_timeout = 5000');
      // Persistent in the file; readers do not block the writer and commits are appends.
      if (options.wal) db.pragma('journal_mode = WAL');
      // In WAL mode NORMAL commits without syncing the log; WalSync syncs it for every write
      // before the write is answered (FULL would sync on the event loop, one commit at a time).
      db.pragma(`synchronous = ${options.wal ? 'NORMAL' : 'FULL'}`);
      db.pragma('foreign_keys = ON');
      // 4 MB of page cache (better-sqlite3 sets 16): enough for the pages writes and lookups
      // keep touching; the rest comes from the operating system's cache. A start-up reading
      // 100,000 live agreements otherwise fills all 16 MB with pages nothing reads again, and
      // the memory stays with the process (docs/benchmarks.md: no slower under load).
      db.pragma('cache_size = -4000');
      migrate(db);
      if (!options.wal) return new SqliteConnection(db);
      const checkpointer = options.checkpointInBackground ? new WalCheckpointer(db) : undefined;
      return new SqliteConnection(db, `${db.name}-wal`, checkpointer);
    } catch (error) {
      db.close();
      throw error;
    }
  }
}

/** Applies pending migrations in one IMMEDIATE transaction, so two processes opening a new file do not race. */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT',
    );
    const version = schemaVersion(db);
    if (version > migrations.length) {
      throw new Error(`database schema version ${version} is newer than this server supports (${migrations.length})`);
    }
    const record = db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)');
    migrations.slice(version).forEach((sql, i) => {
      db.exec(sql);
      record.run(version + i + 1, Date.now());
    });
  }).immediate();
}

function schemaVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (table === undefined) return 0;
  return (db.prepare('SELECT coalesce(max(version), 0) AS version FROM schema_version').get() as { version: number })
    .version;
}
