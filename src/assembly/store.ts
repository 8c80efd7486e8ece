import path from 'node:path';
import type { ServerConfig } from '../engine/configuration/index.js';
import { PgStore } from '../store/postgres/pg-store.js';
import { SqliteStore } from '../store/sqlite-store.js';

/** The server's own database: SQLite in the data directory (the default), or PostgreSQL (WSAG_DATABASE_URL). */
export type ServerStore = SqliteStore | PgStore;

export async function openServerStore(config: ServerConfig): Promise<ServerStore> {
  return config.databaseUrl
    ? PgStore.openExclusive(config.databaseUrl)
    : SqliteStore.open(path.join(config.dataDir, 'wsag.db'), { checkpointInBackground: true });
}
