import { PgAccountStore } from './pg-account-store.js';
import { PgAgreementRepository } from './pg-agreement-repository.js';
import { PgAuditLog } from './pg-audit-log.js';
import { PgConnection } from './pg-connection.js';
import { PgNegotiationRepository } from './pg-negotiation-repository.js';
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

  private constructor(private readonly connection: PgConnection) {
    this.audit = new PgAuditLog(connection);
    this.agreements = new PgAgreementRepository(connection, this.audit);
    this.negotiations = new PgNegotiationRepository(connection, this.audit);
    this.accounts = new PgAccountStore(connection);
    this.usageRecords = new PgUsageRecords(connection);
  }

  /** Connects and brings the schema up to date; `schema` keeps separate stores in one database (tests). */
  static async open(url: string, options: { schema?: string } = {}): Promise<PgStore> {
    return new PgStore(await PgConnection.open(url, options));
  }

  /** Ids of agreements no audit entry is about. */
  async agreementsWithoutAudit(): Promise<string[]> {
    const { rows } = await this.connection.query<{ id: string }>("SELECT id FROM agreements WHERE NOT EXISTS (SELECT 1 FROM audit_log WHERE subject_kind = 'agreement' AND subject_id = agreements.id)");
    return rows.map((r) => r.id);
  }

  /** Ids of ended agreements (Complete, Terminated) without a usage record. */
  async endedWithoutUsageRecord(): Promise<string[]> {
    const { rows } = await this.connection.query<{ id: string }>("SELECT id FROM agreements WHERE state IN ('Complete', 'Terminated') AND NOT EXISTS (SELECT 1 FROM usage_records WHERE agreement_id = agreements.id)");
    return rows.map((r) => r.id);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
