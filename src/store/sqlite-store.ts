import { SqliteAccountStore } from './sqlite-account-store.js';
import { SqliteAgreementRepository } from './sqlite-agreement-repository.js';
import { SqliteAuditLog } from './sqlite-audit-log.js';
import { SqliteConnection, type SqliteOpenOptions } from './sqlite-connection.js';
import { SqliteNegotiationRepository } from './sqlite-negotiation-repository.js';
import { SqliteSeenSignatures } from './sqlite-seen-signatures.js';
import { SqliteIdempotencyRecords } from './sqlite-idempotency-records.js';
import { SqliteUsageRecords } from './sqlite-usage-records.js';

/**
 * The server's database: agreements, negotiations, the audit log of their changes and the
 * accounting books in one
 * SQLite file, on one connection, so there is one migration list and one set of pragmas,
 * and a change and its audit entries commit in one transaction. Closing the store, or
 * either repository, closes the connection for all.
 */
export class SqliteStore {
  readonly agreements: SqliteAgreementRepository;
  readonly negotiations: SqliteNegotiationRepository;
  readonly audit: SqliteAuditLog;
  readonly accounts: SqliteAccountStore;
  readonly usageRecords: SqliteUsageRecords;
  readonly seenSignatures: SqliteSeenSignatures;
  readonly idempotency: SqliteIdempotencyRecords;

  private constructor(private readonly connection: SqliteConnection) {
    this.audit = new SqliteAuditLog(connection);
    this.accounts = new SqliteAccountStore(connection);
    this.usageRecords = new SqliteUsageRecords(connection);
    this.seenSignatures = new SqliteSeenSignatures(connection);
    this.idempotency = new SqliteIdempotencyRecords(connection);
    this.agreements = new SqliteAgreementRepository(connection, this.audit);
    this.negotiations = new SqliteNegotiationRepository(connection, this.audit);
  }

  /** Opens (creating if needed) the database file and brings its schema up to date. */
  static open(file: string, options: SqliteOpenOptions = {}): SqliteStore {
    return new SqliteStore(SqliteConnection.open(file, options));
  }

  /** Opens an existing database file for reading only (see SqliteConnection.openReadOnly); writes reject. */
  static openReadOnly(file: string): SqliteStore {
    return new SqliteStore(SqliteConnection.openReadOnly(file));
  }

  /**
   * Ids of agreements no audit entry is about (stored before the audit trail existed): one anti-join on the subject
   * index.
   */
  agreementsWithoutAudit(): string[] {
    return this.connection.db
      .prepare(
        "SELECT id FROM agreements WHERE NOT EXISTS (SELECT 1 FROM audit_log WHERE subject_kind = 'agreement' " +
          'AND subject_id = agreements.id)',
      )
      .pluck()
      .all() as string[];
  }

  /** Ids of ended agreements (Complete, Terminated) without a usage record: one anti-join, for start-up. */
  endedWithoutUsageRecord(): string[] {
    return this.connection.db
      .prepare(
        "SELECT id FROM agreements WHERE state IN ('Complete', 'Terminated') AND NOT EXISTS (SELECT 1 FROM " +
          'usage_records WHERE agreement_id = agreements.id)',
      )
      .pluck()
      .all() as string[];
  }

  /** A private in-memory database, for tests. */
  static memory(): SqliteStore {
    return new SqliteStore(SqliteConnection.memory());
  }

  async close(): Promise<void> {
    this.connection.close();
  }
}
