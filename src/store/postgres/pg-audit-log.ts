import type pg from 'pg';
import {
  chained,
  genesisHash,
  hashedFieldsBetween,
  unchainedEntry,
  type UnchainedEntry,
} from '../../engine/audit/index.js';
import type { AuditEntry, AuditLog, AuditRecord, AuditSubject } from '../../engine/ports.js';
import { columns, entriesSql, fromRow, type AuditRow } from '../sqlite-audit-log.js';
import { numbered, sqlLiteral, type PgConnection, type PgTransaction } from './pg-connection.js';

/**
 * The audit log in PostgreSQL (same table as SQLite's). An append takes a transaction-scoped
 * advisory lock, then each entry reads the last one and chains onto it, so however many
 * connections or server instances append at once: one unbroken chain.
 *
 * The lock is held to the commit, which makes audited writes go one at a time; so the whole
 * append goes in the COMMIT's message (PgTransaction.withCommit), and no round trip to the
 * server is made under the lock. PostgreSQL numbers and chains the entries there, hashing the
 * text of auditEntryHash: JavaScript writes all of it but the number and the previous hash
 * (hashedFieldsBetween), which SQL puts around it. The contract suite checks every entry's
 * hash against one computed independently, as the audit verification does.
 */
export class PgAuditLog implements AuditLog {
  constructor(private readonly connection: PgConnection) {}

  async append(record: AuditRecord): Promise<AuditEntry> {
    const [entry] = await this.appendWith([record], async () => {});
    return entry as AuditEntry;
  }

  /**
   * Runs `change` (a repository's write) and appends `records` after it, in one transaction; `committed` as
   * PgConnection.transaction's.
   */
  async appendWith(
    records: readonly AuditRecord[],
    change: (tx: PgTransaction) => Promise<void>,
    committed?: () => void,
  ): Promise<AuditEntry[]> {
    const entries = records.map(unchainedEntry);
    let appended: Promise<pg.QueryResultRow[][]> | undefined;
    await this.connection.transaction(async (tx) => {
      await change(tx);
      if (entries.length > 0)
        appended = tx.withCommit(['SELECT pg_advisory_xact_lock(727002)', ...entries.map(appendSql)]);
    }, committed);
    if (!appended) return [];
    const [, ...inserted] = await appended;
    return entries.map(({ entry }, i) => {
      const row = inserted[i]?.[0] as Pick<AuditRow, 'seq' | 'prev_hash' | 'hash'>;
      return { ...chained(entry, row.seq, row.prev_hash), hash: row.hash };
    });
  }

  async entries(filter: { subject?: AuditSubject; after?: number; limit?: number } = {}): Promise<AuditEntry[]> {
    const { sql, params } = entriesSql(filter);
    return (await this.connection.query<AuditRow>(numbered(sql), params)).rows.map(fromRow);
  }

  async latest(subject: AuditSubject): Promise<AuditEntry | undefined> {
    const { rows } = await this.connection.query<AuditRow>(
      `SELECT ${columns} FROM audit_log WHERE subject_kind = $1 AND subject_id = $2 ORDER BY seq DESC LIMIT 1`,
      [subject.kind, subject.id],
    );
    return rows[0] && fromRow(rows[0]);
  }
}

/**
 * One entry after the last one (or the first, after the genesis hash): numbered, chained and
 * hashed by PostgreSQL, the hashed text being `[seq,` hashedFieldsBetween `,"prevHash"]` as
 * auditEntryHash writes it (seq as its digits, the previous hash being hex). The last entry
 * is read by its own LIMIT 1 (the key's index backwards): over the union the planner scanned
 * the whole table.
 */
function appendSql({ entry, canonicalDetails }: UnchainedEntry): string {
  const between = sqlLiteral(hashedFieldsBetween(entry, canonicalDetails));
  const values = [entry.at.getTime(), entry.actor, entry.subject.kind, entry.subject.id, entry.action, canonicalDetails]
    .map(sqlLiteral)
    .join(', ');
  const hashed = `'[' || (last.seq + 1)::text || ',' || ${between} || ',"' || last.hash || '"]'`;
  const lastEntry = '(SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1)';
  return `INSERT INTO audit_log (${columns})
    SELECT last.seq + 1, ${values}, last.hash, encode(sha256(convert_to(${hashed}, 'UTF8')), 'hex')
    FROM (${lastEntry} UNION ALL SELECT 0, ${sqlLiteral(genesisHash)} ORDER BY seq DESC LIMIT 1) AS last
    RETURNING seq, prev_hash, hash`;
}
