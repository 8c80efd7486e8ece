import { diskFailureOr } from './sqlite-failure.js';
import type Database from 'better-sqlite3';
import { chainRow, entryOf, type ChainedRow } from '../engine/audit/index.js';
import type { AuditDetails, AuditEntry, AuditLog, AuditRecord, AuditSubject } from '../engine/ports.js';
import type { SqliteConnection } from './sqlite-connection.js';

export interface AuditRow {
  seq: number;
  at: number;
  actor: string;
  subject_kind: string;
  subject_id: string;
  action: string;
  /** Canonical JSON of the details. */
  details: string;
  prev_hash: string;
  hash: string;
}

export const columns = 'seq, at, actor, subject_kind, subject_id, action, details, prev_hash, hash';

/**
 * The audit log in the audit_log table (migration 5), on the connection of a SqliteStore.
 * The previous entry is read inside the appending transaction, which is IMMEDIATE (it takes
 * the write lock before reading; inside the connection's write group, which took it, a
 * savepoint), so two connections or processes never chain onto the same entry; seq is the
 * primary key, so the chain cannot fork either.
 */
export class SqliteAuditLog implements AuditLog {
  private readonly insertStmt: Database.Statement<[AuditRow]>;
  private readonly lastStmt: Database.Statement<[], Pick<AuditRow, 'seq' | 'hash'>>;
  private readonly latestStmt: Database.Statement<[string, string], AuditRow>;
  private readonly write: Database.Transaction<(records: readonly AuditRecord[], change: () => void) => ChainedRow[]>;
  /** One statement per combination of filters, prepared on first use. */
  private readonly listStmts = new Map<string, Database.Statement<Array<string | number>, AuditRow>>();

  /** Prefer SqliteStore, which shares one log between its repositories. */
  constructor(private readonly connection: SqliteConnection) {
    const { db } = connection;
    this.insertStmt = db.prepare(
      `INSERT INTO audit_log (${columns})
       VALUES (@seq, @at, @actor, @subject_kind, @subject_id, @action, @details, @prev_hash, @hash)`,
    );
    this.lastStmt = db.prepare('SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1');
    this.latestStmt = db.prepare(
      `SELECT ${columns} FROM audit_log WHERE subject_kind = ? AND subject_id = ? ORDER BY seq DESC LIMIT 1`,
    );
    this.write = db.transaction((records: readonly AuditRecord[], change: () => void) => {
      change();
      const rows: ChainedRow[] = [];
      let previous: Pick<ChainedRow, 'seq' | 'hash'> | undefined = this.lastStmt.get();
      for (const record of records) {
        const row = chainRow(record, previous);
        this.insertStmt.run(toRow(row));
        rows.push(row);
        previous = row;
      }
      return rows;
    });
  }

  async append(record: AuditRecord): Promise<AuditEntry> {
    const [row] = this.appendWith([record], () => {});
    await this.connection.durable();
    return entryOf(row as ChainedRow);
  }

  /**
   * Runs `change` (a repository's write) and appends `records` after it in one transaction:
   * both are stored, or neither; returns the rows written. Synchronous, like better-sqlite3;
   * committed on return, on disk once the connection's `durable()` resolves.
   */
  appendWith(records: readonly AuditRecord[], change: () => void): ChainedRow[] {
    this.connection.beginWrite();
    try {
      return this.write.immediate(records, change);
    } catch (error) {
      throw diskFailureOr(error);
    }
  }

  async entries(filter: { subject?: AuditSubject; after?: number; limit?: number } = {}): Promise<AuditEntry[]> {
    const { sql, params } = entriesSql(filter);
    return this.listStatement(sql)
      .all(...params)
      .map(fromRow);
  }

  async latest(subject: AuditSubject): Promise<AuditEntry | undefined> {
    const row = this.latestStmt.get(subject.kind, subject.id);
    return row === undefined ? undefined : fromRow(row);
  }

  private listStatement(sql: string): Database.Statement<Array<string | number>, AuditRow> {
    let statement = this.listStmts.get(sql);
    if (statement === undefined) {
      statement = this.connection.db.prepare<Array<string | number>, AuditRow>(sql);
      this.listStmts.set(sql, statement);
    }
    return statement;
  }
}

/**
 * The query for `entries` (with `?` placeholders): one subject's or all, after a seq, at most a limit, in seq order.
 */
export function entriesSql(filter: { subject?: AuditSubject; after?: number; limit?: number }): {
  sql: string;
  params: Array<string | number>;
} {
  const conditions: string[] = [];
  const params: Array<string | number> = [];
  if (filter.subject !== undefined) {
    conditions.push('subject_kind = ? AND subject_id = ?');
    params.push(filter.subject.kind, filter.subject.id);
  }
  if (filter.after !== undefined) {
    conditions.push('seq > ?');
    params.push(filter.after);
  }
  let sql =
    `SELECT ${columns} FROM audit_log ` +
    `${conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`} ORDER BY seq`;
  if (filter.limit !== undefined) {
    sql += ' LIMIT ?';
    params.push(filter.limit);
  }
  return { sql, params };
}

/** The table's row of a chained entry. */
export function toRow(row: ChainedRow): AuditRow {
  return {
    seq: row.seq,
    at: row.at.getTime(),
    actor: row.actor,
    subject_kind: row.subject.kind,
    subject_id: row.subject.id,
    action: row.action,
    details: row.canonicalDetails,
    prev_hash: row.prevHash,
    hash: row.hash,
  };
}

/** The row as stored, whatever it holds: checking it is AuditService's job, so a damaged row still reads. */
export function fromRow(row: AuditRow): AuditEntry {
  return {
    seq: row.seq,
    at: new Date(row.at),
    actor: row.actor,
    subject: { kind: row.subject_kind as AuditSubject['kind'], id: row.subject_id },
    action: row.action,
    details: parseDetails(row.details),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** Text that is not a JSON object comes back wrapped, so its hash no longer matches and verification says where. */
function parseDetails(text: string): AuditDetails {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as AuditDetails;
  } catch {
    // falls through
  }
  return { unreadable: text };
}
