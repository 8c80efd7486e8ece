import type { Agreement, AgreementState } from '../../domain/agreement.js';
import type { AgreementFilter, AgreementRepository, AuditNote } from '../../engine/ports.js';
import { listingSql } from '../by-creation.js';
import { columns, fromRow, listedColumns, toRow, type AgreementRow } from '../sqlite-agreement-repository.js';
import { literalInsert, numbered, type PgConnection } from './pg-connection.js';
import type { PgAuditLog } from './pg-audit-log.js';

const names = columns.split(',').map((c) => c.trim());
const updateSql = `UPDATE agreements SET ${names
  .slice(1)
  .map((c, i) => `${c} = $${i + 2}`)
  .join(', ')} WHERE id = $1`;
const values = (row: AgreementRow) => names.map((c) => row[c as keyof AgreementRow]);

/** Agreements in PostgreSQL, a change and its audit entries in one transaction (see PgStore). */
export class PgAgreementRepository implements AgreementRepository {
  constructor(
    private readonly connection: PgConnection,
    private readonly audit: PgAuditLog,
  ) {}

  async insert(agreement: Agreement, notes: readonly AuditNote[] = [], committed?: () => void): Promise<void> {
    try {
      // Sent with the COMMIT (and the audit entries): a new agreement is stored in one round trip.
      await this.audit.appendWith(
        about(agreement.id, notes),
        async (tx) => {
          void tx.withCommit([literalInsert('agreements', columns, [values(toRow(agreement))])]);
        },
        committed,
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new Error(`agreement ${agreement.id} already exists`, { cause: error });
      throw error;
    }
  }

  async update(agreement: Agreement, notes: readonly AuditNote[] = [], committed?: () => void): Promise<void> {
    await this.audit.appendWith(
      about(agreement.id, notes),
      async (tx) => {
        // Thrown inside the transaction: nothing is appended either.
        if ((await tx.query(updateSql, values(toRow(agreement)))).rowCount === 0)
          throw new Error(`agreement ${agreement.id} does not exist`);
      },
      committed,
    );
  }

  async get(id: string): Promise<Agreement | undefined> {
    const { rows } = await this.connection.query<AgreementRow>(`SELECT ${columns} FROM agreements WHERE id = $1`, [id]);
    return rows[0] && fromRow(rows[0]);
  }

  async list(filter: AgreementFilter = {}): Promise<Agreement[]> {
    const { where, params, limit } = listingSql(filter);
    const sql = numbered(`SELECT ${listedColumns(filter)} FROM agreements ${where} ORDER BY created_at, id${limit}`);
    return (await this.connection.query<AgreementRow>(sql, params)).rows.map(fromRow);
  }

  async countByState(): Promise<Partial<Record<AgreementState, number>>> {
    const { rows } = await this.connection.query<{ state: AgreementState; n: number }>(
      'SELECT state, COUNT(*)::BIGINT AS n FROM agreements GROUP BY state',
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** Closes the pool, which the other stores of its PgStore share. */
  async close(): Promise<void> {
    await this.connection.close();
  }
}

function about(id: string, notes: readonly AuditNote[]) {
  return notes.map((note) => ({ ...note, subject: { kind: 'agreement', id } as const }));
}
