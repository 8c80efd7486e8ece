import type { IdempotencyRecord } from '../engine/ports.js';

/** A row of idempotency_keys, as SQLite and PostgreSQL give it (PostgreSQL's BIGINT as text). */
export interface IdempotencyRow {
  party: string;
  key: string;
  fingerprint: string;
  agreement_id: string | null;
  status: number | null;
  body: string | null;
  created_at?: number;
  created_ms?: number | string;
}

export function recordOf(row: IdempotencyRow): IdempotencyRecord {
  return {
    party: row.party,
    key: row.key,
    fingerprint: row.fingerprint,
    ...(row.agreement_id !== null ? { agreementId: row.agreement_id } : {}),
    ...(row.status !== null && row.body !== null ? { answer: { status: row.status, body: row.body } } : {}),
    createdAt: new Date(Number(row.created_at ?? row.created_ms)),
  };
}
