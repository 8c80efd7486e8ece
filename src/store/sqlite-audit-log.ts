import type Database from 'better-sqlite3';
import { chainEntry } from '../engine/audit/index.js';
import type { AuditDetails, AuditEntry, AuditLog, AuditRecord, AuditSubject } from '../engine/ports.js';
import { SqliteConnection } from './sqlite-connection.js';

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
  private readonly write: Database.Transaction<(records: readonly AuditRecord[], change: () => void) => AuditEntry[]>;
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
      const entries: AuditEntry[] = [];
      let previous = this.lastStmt.get();
      for (const record of records) {
        const { entry, canonicalDetails } = chainEntry(record, previous);
        this.insertStmt.run(toRow(entry, canonicalDetails));
        entries.push(entry);
        previous = entry;
      }
      return entries;
    });
  }

  async append(record: AuditRecord): Promise<AuditEntry> {
    const [entry] = this.appendWith([record], () => {});
    await this.connection.durable();
    return entry as AuditEntry;
  }

  /**
   * Runs `change` (a repository's write) and appends `records` after it in one transaction:
   * both are stored, or neither. Synchronous, like better-sqlite3; committed on return, on
   * disk once the connection's `durable()` resolves.
   */
  appendWith(records: readonly AuditRecord[], change: () => void): AuditEntry[] {
    this.connection.beginWrite();
    return this.write.immediate(records, change);
  }

  async entries(filter: { subject?: AuditSubject; after?: number; limit?: number } = {}): Promise<AuditEntry[]> {
    const { sql, params } = entriesSql(filter);
    return this.listStatement(sql).all(...params).map(fromRow);
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

/** The query for `entries` (with `?` placeholders): one subject's or all, after a seq, at most a limit, in seq order. */
export function entriesSql(filter: { subject?: AuditSubject; after?: number; limit?: number }): { sql: string; params: Array<string | number> } {
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
  let sql = `SELECT ${columns} FROM audit_log ${conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`} ORDER BY seq`;
  if (filter.limit !== undefined) {
    sql += ' LIMIT ?';
    params.push(filter.limit);
  }
  return { sql, params };
}

/** `canonicalDetails`: canonicalJson(entry.details), as chainEntry made it for the entry's hash. */
export function toRow(entry: AuditEntry, canonicalDetails: string): AuditRow {
  return {
    seq: entry.seq,
    at: entry.at.getTime(),
    actor: entry.actor,
    subject_kind: entry.subject.kind,
    subject_id: entry.subject.id,
    action: entry.action,
    details: canonicalDetails,
    prev_hash: entry.prevHash,
    hash: entry.hash,
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
