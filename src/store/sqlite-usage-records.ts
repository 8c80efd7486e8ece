import type { StoredUsageRecord, UsageRecordStore } from '../engine/accounting/index.js';
import type { SqliteConnection } from './sqlite-connection.js';

interface Row {
  agreement_id: string;
  initiator: string;
  created_at: number;
  xml: string;
  signed: string | null;
}

/** Usage records in SQLite, on the server's connection (SqliteStore). */
export class SqliteUsageRecords implements UsageRecordStore {
  constructor(private readonly connection: SqliteConnection) {}

  async add(record: StoredUsageRecord): Promise<boolean> {
    this.connection.beginWrite();
    const result = this.connection
      .statement(
        'INSERT OR IGNORE INTO usage_records (agreement_id, initiator, created_at, xml, signed) VALUES (?, ?, ?, ?, ?)',
      )
      .run(record.agreementId, record.initiator, record.createdAt.getTime(), record.xml, record.signed ?? null);
    await this.connection.durable();
    return result.changes === 1;
  }

  async get(agreementId: string): Promise<StoredUsageRecord | undefined> {
    const row = this.connection
      .statement<[string], Row>('SELECT * FROM usage_records WHERE agreement_id = ?')
      .get(agreementId);
    return row && fromRow(row);
  }

  async list(
    filter: { initiator?: string; after?: { createdAt: Date; id: string }; limit?: number } = {},
  ): Promise<StoredUsageRecord[]> {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (filter.initiator !== undefined) {
      where.push('initiator = ?');
      params.push(filter.initiator);
    }
    if (filter.after) {
      where.push('(created_at, agreement_id) > (?, ?)');
      params.push(filter.after.createdAt.getTime(), filter.after.id);
    }
    const sql =
      `SELECT * FROM ` +
      `usage_records${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, ` +
      `agreement_id${filter.limit !== undefined ? ' LIMIT ?' : ''}`;
    if (filter.limit !== undefined) params.push(filter.limit);
    return this.connection
      .statement<Array<string | number>, Row>(sql)
      .all(...params)
      .map(fromRow);
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
