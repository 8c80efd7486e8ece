import { chainEntry } from '../../engine/audit/index.js';
import type { AuditEntry, AuditLog, AuditRecord, AuditSubject } from '../../engine/ports.js';
import { columns, entriesSql, fromRow, toRow, type AuditRow } from '../sqlite-audit-log.js';
import { numbered, sqlLiteral, type PgConnection, type PgTransaction, type Queryable } from './pg-connection.js';

/**
 * The audit log in PostgreSQL (same table as SQLite's). Appends take a transaction-scoped
 * advisory lock before reading the last entry, so however many connections or server
 * instances append at once, each chains onto the one before it: one unbroken chain.
 */
export class PgAuditLog implements AuditLog {
  constructor(private readonly connection: PgConnection) {}

  async append(record: AuditRecord): Promise<AuditEntry> {
    const [entry] = await this.appendWith([record], async () => {});
    return entry as AuditEntry;
  }

  /** Runs `change` (a repository's write) and appends `records` after it, in one transaction; `committed` as PgConnection.transaction's. */
  appendWith(records: readonly AuditRecord[], change: (tx: Queryable) => Promise<void>, committed?: () => void): Promise<AuditEntry[]> {
    return this.connection.transaction(async (tx) => {
      await change(tx);
      return this.appendIn(tx, records);
    }, committed);
  }

  /** Appends `records` in `tx`: the last of its statements, sent with its COMMIT. */
  async appendIn(tx: PgTransaction, records: readonly AuditRecord[]): Promise<AuditEntry[]> {
    if (records.length === 0) return [];
    // The lock and the read in one round trip (two statements, no parameters): the lock is held
    // until the commit, so every round trip under it is a wait for every other writer.
    const [, last] = (await tx.query('SELECT pg_advisory_xact_lock(727002); SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1')) as unknown as [unknown, { rows: Array<Pick<AuditRow, 'seq' | 'hash'>> }];
    let previous = last.rows[0];
    const entries: AuditEntry[] = [];
    const rows: AuditRow[] = [];
    for (const record of records) {
      const { entry, canonicalDetails } = chainEntry(record, previous);
      entries.push(entry);
      rows.push(toRow(entry, canonicalDetails));
      previous = entry;
    }
    // One statement for all of a change's entries, sent with the COMMIT: the lock is then held
    // for one round trip after the read, not two.
    const values = rows.map((row) => `(${[row.seq, row.at, row.actor, row.subject_kind, row.subject_id, row.action, row.details, row.prev_hash, row.hash].map(sqlLiteral).join(', ')})`);
    tx.withCommit(`INSERT INTO audit_log (${columns}) VALUES ${values.join(', ')}`);
    return entries;
  }

  async entries(filter: { subject?: AuditSubject; after?: number; limit?: number } = {}): Promise<AuditEntry[]> {
    const { sql, params } = entriesSql(filter);
    return (await this.connection.query<AuditRow>(numbered(sql), params)).rows.map(fromRow);
  }

  async latest(subject: AuditSubject): Promise<AuditEntry | undefined> {
    const { rows } = await this.connection.query<AuditRow>(`SELECT ${columns} FROM audit_log WHERE subject_kind = $1 AND subject_id = $2 ORDER BY seq DESC LIMIT 1`, [subject.kind, subject.id]);
    return rows[0] && fromRow(rows[0]);
  }
}
