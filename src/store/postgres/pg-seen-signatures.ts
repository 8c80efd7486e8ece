import type { SeenSignatures } from '../../engine/ports.js';
import type { PgConnection } from './pg-connection.js';

/** Signatures seen, in PostgreSQL: shared by every instance, so a replay is refused whichever leads. */
export class PgSeenSignatures implements SeenSignatures {
  constructor(private readonly connection: PgConnection) {}

  async firstSeen(digest: string, until: Date, now: Date): Promise<boolean> {
    await this.connection.query('DELETE FROM seen_signatures WHERE until_ms < $1', [now.getTime()]);
    const result = await this.connection.query(
      'INSERT INTO seen_signatures (digest, until_ms) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING',
      [digest, until.getTime()],
    );
    return result.rowCount === 1;
  }
}
