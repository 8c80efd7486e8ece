import { SqliteAgreementRepository } from './sqlite-agreement-repository.js';
import { SqliteConnection } from './sqlite-connection.js';
import { SqliteNegotiationRepository } from './sqlite-negotiation-repository.js';

/**
 * The server's database: agreements and negotiations in one SQLite file, on one connection,
 * so there is one migration list and one set of pragmas. Closing the store, or either
 * repository, closes the connection for both.
 */
export class SqliteStore {
  readonly agreements: SqliteAgreementRepository;
  readonly negotiations: SqliteNegotiationRepository;

  private constructor(private readonly connection: SqliteConnection) {
    this.agreements = new SqliteAgreementRepository(connection);
    this.negotiations = new SqliteNegotiationRepository(connection);
  }

  /** Opens (creating if needed) the database file and brings its schema up to date. */
  static open(file: string): SqliteStore {
    return new SqliteStore(SqliteConnection.open(file));
  }

  /** A private in-memory database, for tests. */
  static memory(): SqliteStore {
    return new SqliteStore(SqliteConnection.memory());
  }

  async close(): Promise<void> {
    this.connection.close();
  }
}
