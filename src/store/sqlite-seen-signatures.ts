import type { SeenSignatures } from '../engine/ports.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** Signatures seen, in SQLite on the server's connection: a replay is refused after a restart too. */
export class SqliteSeenSignatures implements SeenSignatures {
  constructor(private readonly connection: SqliteConnection) {}

  async firstSeen(digest: string, until: Date, now: Date): Promise<boolean> {
    this.connection.beginWrite();
    this.connection.statement('DELETE FROM seen_signatures WHERE until < ?').run(now.getTime());
    const result = this.connection
      .statement('INSERT OR IGNORE INTO seen_signatures (digest, until) VALUES (?, ?)')
      .run(digest, until.getTime());
    await this.connection.durable();
    return result.changes === 1;
  }
}
