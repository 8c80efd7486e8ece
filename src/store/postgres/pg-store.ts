import { DataDirInUse } from '../data-dir-lock.js';
import { PgAccountStore } from './pg-account-store.js';
import { PgAgreementRepository } from './pg-agreement-repository.js';
import { PgAuditLog } from './pg-audit-log.js';
import { PgConnection } from './pg-connection.js';
import { PgLeadership } from './pg-leadership.js';
import { PgNegotiationRepository } from './pg-negotiation-repository.js';
import { PgSeenSignatures } from './pg-seen-signatures.js';
import { PgIdempotencyRecords } from './pg-idempotency-records.js';
import { PgUsageRecords } from './pg-usage-records.js';

/**
 * The server's database on PostgreSQL (WSAG_DATABASE_URL; docs/deployment.md): the same
 * stores as SqliteStore on one connection pool, a change and its audit entries committed
 * in one transaction, the audit chain serialised across connections and instances.
 */
export class PgStore {
  readonly audit: PgAuditLog;
  readonly agreements: PgAgreementRepository;
  readonly negotiations: PgNegotiationRepository;
  readonly accounts: PgAccountStore;
  readonly usageRecords: PgUsageRecords;
  readonly seenSignatures: PgSeenSignatures;
  readonly idempotency: PgIdempotencyRecords;

  /** The session that holds the one-server lock (`openExclusive`). */
  private holder: PgLeadership | undefined;

  private constructor(private readonly connection: PgConnection) {
    this.audit = new PgAuditLog(connection);
    this.agreements = new PgAgreementRepository(connection, this.audit);
    this.negotiations = new PgNegotiationRepository(connection, this.audit);
    this.accounts = new PgAccountStore(connection);
    this.usageRecords = new PgUsageRecords(connection);
    this.seenSignatures = new PgSeenSignatures(connection);
    this.idempotency = new PgIdempotencyRecords(connection);
  }

  /**
   * Connects and brings the schema up to date; `schema` keeps separate stores in one database (tests); `readOnly` only
   * reads (wsag audit).
   */
  static async open(url: string, options: { schema?: string; readOnly?: boolean } = {}): Promise<PgStore> {
    return new PgStore(await PgConnection.open(url, options));
  }

  /**
   * The store for one server: a session-level advisory lock, held on a connection of its own
   * until `close` (PostgreSQL releases it when that session ends, by a crash too), refuses a
   * second server on the same database: it would plan the same nodes twice. Several
   * instances share a database as a cluster instead (src/assembly/cluster.ts).
   */
  static async openExclusive(url: string): Promise<PgStore> {
    const holder = await PgLeadership.connect(url);
    if (!(await holder.tryAcquire())) {
      await holder.close();
      throw new DataDirInUse(
        `the database ${redacted(url)} is in use by another wsag-server; stop it, give this one its own ` +
          `database, or start it as an instance of a cluster (npm start does: docs/deployment.md)`,
      );
    }
    try {
      const store = await PgStore.open(url);
      store.holder = holder;
      return store;
    } catch (error) {
      await holder.close();
      throw error;
    }
  }

  /** Ids of agreements no audit entry is about. */
  async agreementsWithoutAudit(): Promise<string[]> {
    const { rows } = await this.connection.query<{ id: string }>(
      "SELECT id FROM agreements WHERE NOT EXISTS (SELECT 1 FROM audit_log WHERE subject_kind = 'agreement' " +
        'AND subject_id = agreements.id)',
    );
    return rows.map((r) => r.id);
  }

  /** Ids of ended agreements (Complete, Terminated) without a usage record. */
  async endedWithoutUsageRecord(): Promise<string[]> {
    const { rows } = await this.connection.query<{ id: string }>(
      "SELECT id FROM agreements WHERE state IN ('Complete', 'Terminated') AND NOT EXISTS (SELECT 1 FROM " +
        'usage_records WHERE agreement_id = agreements.id)',
    );
    return rows.map((r) => r.id);
  }

  async close(): Promise<void> {
    await this.connection.close();
    await this.holder?.close();
  }
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'named by WSAG_DATABASE_URL';
  }
}
