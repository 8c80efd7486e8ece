import type { IdempotencyRecord, IdempotencyRecords } from '../engine/ports.js';
import { recordOf, type IdempotencyRow as Row } from './idempotency-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** Idempotency-Key records in SQLite on the server's connection: a retry after a restart finds its first answer. */
export class SqliteIdempotencyRecords implements IdempotencyRecords {
  constructor(private readonly connection: SqliteConnection) {}

  async claim(record: IdempotencyRecord, since: Date): Promise<IdempotencyRecord> {
    this.connection.beginWrite();
    this.connection.statement('DELETE FROM idempotency_keys WHERE created_at < ?').run(since.getTime());
    this.connection
      .statement(
        'INSERT OR IGNORE INTO idempotency_keys (party, key, fingerprint, agreement_id, created_at) ' +
          'VALUES (?, ?, ?, ?, ?)',
      )
      .run(record.party, record.key, record.fingerprint, record.agreementId ?? null, record.createdAt.getTime());
    const row = this.connection
      .statement('SELECT * FROM idempotency_keys WHERE party = ? AND key = ?')
      .get(record.party, record.key) as Row;
    await this.connection.durable();
    return recordOf(row);
  }

  async answered(party: string, key: string, answer: { status: number; body: string }): Promise<void> {
    this.connection.beginWrite();
    this.connection
      .statement('UPDATE idempotency_keys SET status = ?, body = ? WHERE party = ? AND key = ?')
      .run(answer.status, answer.body, party, key);
    await this.connection.durable();
  }
}
