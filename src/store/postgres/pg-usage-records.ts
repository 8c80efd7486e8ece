import type { StoredUsageRecord, UsageRecordStore } from '../../engine/accounting/index.js';
import type { PgConnection } from './pg-connection.js';

interface Row {
  agreement_id: string;
  initiator: string;
  created_at: number;
  xml: string;
  signed: string | null;
}

/** Usage records in PostgreSQL: one per agreement, never changed. */
export class PgUsageRecords implements UsageRecordStore {
  constructor(private readonly connection: PgConnection) {}

  async add(record: StoredUsageRecord): Promise<boolean> {
    const result = await this.connection.query(
      'INSERT INTO usage_records (agreement_id, initiator, created_at, xml, signed) VALUES ($1, $2, $3, $4, ' +
        '$5) ON CONFLICT (agreement_id) DO NOTHING',
      [record.agreementId, record.initiator, record.createdAt.getTime(), record.xml, record.signed ?? null],
    );
    return result.rowCount === 1;
  }

  async get(agreementId: string): Promise<StoredUsageRecord | undefined> {
    const { rows } = await this.connection.query<Row>('SELECT * FROM usage_records WHERE agreement_id = $1', [
      agreementId,
    ]);
    return rows[0] && fromRow(rows[0]);
  }

  async list(
    filter: { initiator?: string; after?: { createdAt: Date; id: string }; limit?: number } = {},
  ): Promise<StoredUsageRecord[]> {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (filter.initiator !== undefined) {
      params.push(filter.initiator);
      where.push(`initiator = $${params.length}`);
    }
    if (filter.after) {
      params.push(filter.after.createdAt.getTime(), filter.after.id);
      where.push(`(created_at, agreement_id) > ($${params.length - 1}, $${params.length})`);
    }
    if (filter.limit !== undefined) params.push(filter.limit);
    const sql =
      `SELECT * FROM ` +
      `usage_records${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, ` +
      `agreement_id${filter.limit !== undefined ? ` LIMIT $${params.length}` : ''}`;
    return (await this.connection.query<Row>(sql, params)).rows.map(fromRow);
  }
}

function fromRow(r: Row): StoredUsageRecord {
  return {
    agreementId: r.agreement_id,
    initiator: r.initiator,
    createdAt: new Date(r.created_at),
    xml: r.xml,
    ...(r.signed !== null ? { signed: r.signed } : {}),
  };
}
