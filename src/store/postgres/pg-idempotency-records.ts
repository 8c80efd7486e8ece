import type { IdempotencyRecord, IdempotencyRecords } from '../../engine/ports.js';
import { recordOf, type IdempotencyRow } from '../idempotency-rows.js';
import type { PgConnection } from './pg-connection.js';

/** Idempotency-Key records in PostgreSQL: shared by every instance, so a retry finds its answer whichever leads. */
export class PgIdempotencyRecords implements IdempotencyRecords {
  constructor(private readonly connection: PgConnection) {}

  async claim(record: IdempotencyRecord, since: Date): Promise<IdempotencyRecord> {
    await this.connection.query('DELETE FROM idempotency_keys WHERE created_ms < $1', [since.getTime()]);
    await this.connection.query(
      'INSERT INTO idempotency_keys (party, key, fingerprint, agreement_id, created_ms) VALUES ($1, $2, $3, $4, $5) ' +
        'ON CONFLICT (party, key) DO NOTHING',
      [record.party, record.key, record.fingerprint, record.agreementId ?? null, record.createdAt.getTime()],
    );
    const result = await this.connection.query('SELECT * FROM idempotency_keys WHERE party = $1 AND key = $2', [
      record.party,
      record.key,
    ]);
    return recordOf(result.rows[0] as IdempotencyRow);
  }

  async answered(party: string, key: string, answer: { status: number; body: string }): Promise<void> {
    await this.connection.query('UPDATE idempotency_keys SET status = $1, body = $2 WHERE party = $3 AND key = $4', [
      answer.status,
      answer.body,
      party,
      key,
    ]);
  }
}
