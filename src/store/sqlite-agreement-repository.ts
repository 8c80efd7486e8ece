import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Agreement, GuaranteeTermStatus, ServiceTermStatus } from '../domain/agreement.js';
import type { ServiceRequest } from '../domain/terms.js';
import type { AgreementRepository } from '../engine/ports.js';

/**
 * Schema changes, applied in order; migration i brings the database to version i + 1.
 * Never edit a shipped entry: append a new one (audit log, negotiations, ...).
 */
const migrations: readonly string[] = [
  `CREATE TABLE agreements (
     id               TEXT    PRIMARY KEY,
     name             TEXT,
     template_id      TEXT    NOT NULL,
     template_name    TEXT    NOT NULL,
     initiator        TEXT    NOT NULL,
     state            TEXT    NOT NULL,
     service_terms    TEXT    NOT NULL,
     guarantee_terms  TEXT    NOT NULL,
     request          TEXT    NOT NULL,
     allocation_start INTEGER,
     allocation_end   INTEGER,
     allocation_nodes INTEGER,
     document         TEXT    NOT NULL,
     created_at       INTEGER NOT NULL,
     updated_at       INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX agreements_by_creation ON agreements (created_at, id);
   CREATE INDEX agreements_by_initiator ON agreements (initiator, created_at, id);`,
];

interface AgreementRow {
  id: string;
  name: string | null;
  template_id: string;
  template_name: string;
  initiator: string;
  state: string;
  service_terms: string;
  guarantee_terms: string;
  request: string;
  allocation_start: number | null;
  allocation_end: number | null;
  allocation_nodes: number | null;
  document: string;
  created_at: number;
  updated_at: number;
}

const columns =
  'id, name, template_id, template_name, initiator, state, service_terms, guarantee_terms, request, ' +
  'allocation_start, allocation_end, allocation_nodes, document, created_at, updated_at';
const ordered = 'ORDER BY created_at, id';

/**
 * Agreements in SQLite (better-sqlite3). Calls are synchronous underneath, so when a
 * returned promise resolves the transaction has committed; with WAL and synchronous=FULL
 * the commit is fsynced, which is what the port's durability contract asks of `insert`.
 */
export class SqliteAgreementRepository implements AgreementRepository {
  private readonly insertStmt: Database.Statement<[AgreementRow]>;
  private readonly updateStmt: Database.Statement<[AgreementRow]>;
  private readonly getStmt: Database.Statement<[string], AgreementRow>;
  private readonly listStmt: Database.Statement<[], AgreementRow>;
  private readonly listByInitiatorStmt: Database.Statement<[string], AgreementRow>;

  private constructor(private readonly db: Database.Database) {
    // NORMAL would be faster, but in WAL mode it can lose the last commits on power loss.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // Another process (the CLI, a second server) may hold the write lock briefly.
    db.pragma('busy_timeout = 5000');
    migrate(db);
    this.insertStmt = db.prepare(
      `INSERT INTO agreements (${columns}) VALUES (@id, @name, @template_id, @template_name, @initiator, @state,
         @service_terms, @guarantee_terms, @request, @allocation_start, @allocation_end, @allocation_nodes,
         @document, @created_at, @updated_at)`,
    );
    this.updateStmt = db.prepare(
      `UPDATE agreements SET name = @name, template_id = @template_id, template_name = @template_name,
         initiator = @initiator, state = @state, service_terms = @service_terms, guarantee_terms = @guarantee_terms,
         request = @request, allocation_start = @allocation_start, allocation_end = @allocation_end,
         allocation_nodes = @allocation_nodes, document = @document, created_at = @created_at,
         updated_at = @updated_at
       WHERE id = @id`,
    );
    this.getStmt = db.prepare(`SELECT ${columns} FROM agreements WHERE id = ?`);
    this.listStmt = db.prepare(`SELECT ${columns} FROM agreements ${ordered}`);
    this.listByInitiatorStmt = db.prepare(`SELECT ${columns} FROM agreements WHERE initiator = ? ${ordered}`);
  }

  /** Opens (creating if needed) the database file and brings its schema up to date. */
  static open(file: string): SqliteAgreementRepository {
    mkdirSync(dirname(file), { recursive: true });
    const db = new Database(file);
    try {
      // Persistent in the file; readers do not block the writer and commits are appends.
      db.pragma('journal_mode = WAL');
      return new SqliteAgreementRepository(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** A private in-memory database, for tests. */
  static memory(): SqliteAgreementRepository {
    return new SqliteAgreementRepository(new Database(':memory:'));
  }

  async insert(agreement: Agreement): Promise<void> {
    try {
      this.insertStmt.run(toRow(agreement));
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new Error(`agreement ${agreement.id} already exists`, { cause: error });
      }
      throw error;
    }
  }

  async update(agreement: Agreement): Promise<void> {
    if (this.updateStmt.run(toRow(agreement)).changes === 0) {
      throw new Error(`agreement ${agreement.id} does not exist`);
    }
  }

  async get(id: string): Promise<Agreement | undefined> {
    const row = this.getStmt.get(id);
    return row === undefined ? undefined : fromRow(row);
  }

  async list(filter: { initiator?: string } = {}): Promise<Agreement[]> {
    const rows = filter.initiator === undefined ? this.listStmt.all() : this.listByInitiatorStmt.all(filter.initiator);
    return rows.map(fromRow);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** Applies pending migrations in one IMMEDIATE transaction, so two processes opening a new file do not race. */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
    const { version } = db.prepare('SELECT coalesce(max(version), 0) AS version FROM schema_version').get() as {
      version: number;
    };
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

function toRow(a: Agreement): AgreementRow {
  return {
    id: a.id,
    name: a.name ?? null,
    template_id: a.templateId,
    template_name: a.templateName,
    initiator: a.initiator,
    state: a.state,
    service_terms: JSON.stringify(a.serviceTerms),
    guarantee_terms: JSON.stringify(a.guaranteeTerms),
    // Dates become ISO 8601 strings here; fromRow turns them back into Dates.
    request: JSON.stringify(a.request),
    allocation_start: a.allocation?.start.getTime() ?? null,
    allocation_end: a.allocation?.end.getTime() ?? null,
    allocation_nodes: a.allocation?.nodes ?? null,
    document: a.document,
    created_at: a.createdAt.getTime(),
    updated_at: a.updatedAt.getTime(),
  };
}

/** Optional fields that were absent stay absent (not present-but-undefined), matching what was inserted. */
function fromRow(row: AgreementRow): Agreement {
  const agreement: Agreement = {
    id: row.id,
    templateId: row.template_id,
    templateName: row.template_name,
    initiator: row.initiator,
    state: row.state as Agreement['state'],
    serviceTerms: JSON.parse(row.service_terms) as ServiceTermStatus[],
    guaranteeTerms: JSON.parse(row.guarantee_terms) as GuaranteeTermStatus[],
    request: parseRequest(row.request),
    document: row.document,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
  if (row.name !== null) agreement.name = row.name;
  if (row.allocation_start !== null && row.allocation_end !== null && row.allocation_nodes !== null) {
    agreement.allocation = {
      start: new Date(row.allocation_start),
      end: new Date(row.allocation_end),
      nodes: row.allocation_nodes,
    };
  }
  return agreement;
}

/** JSON has no Date; these are the only Date fields of ServiceRequest. Add new ones here. */
function parseRequest(json: string): ServiceRequest {
  // Parsed Date fields are still ISO strings at this point; `new Date` accepts both.
  const request = JSON.parse(json) as ServiceRequest;
  if (request.earliestStart !== undefined) request.earliestStart = new Date(request.earliestStart);
  if (request.deadline !== undefined) request.deadline = new Date(request.deadline);
  if (request.window !== undefined) {
    request.window = { start: new Date(request.window.start), end: new Date(request.window.end) };
  }
  return request;
}
