import Database from 'better-sqlite3';
import { ServiceUnavailable, WsagError } from '../domain/errors.js';

/**
 * The error a caller should see when the server's disk fails it: a full disk or an I/O error
 * at a write or its commit (SQLite rolls the write back: nothing was stored), or at the sync
 * after the commit (the change may not be on disk: its outcome is unknown). The server keeps
 * serving, and writes succeed again once there is room; other errors pass as they are.
 */
export function diskFailureOr(error: unknown): unknown {
  if (error instanceof WsagError) return error;
  if (error instanceof Database.SqliteError && (error.code === 'SQLITE_FULL' || error.code.startsWith('SQLITE_IOERR')))
    return new ServiceUnavailable(
      error.code === 'SQLITE_FULL'
        ? "the server's disk is full: nothing was stored; try again once the site has made room"
        : 'the server could not write to its disk: nothing was stored; try again later',
      `SQLite: ${error.message} (${error.code})`,
    );
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EIO' || code === 'EDQUOT')
    return new ServiceUnavailable(
      'the change was committed but the disk failed while it was made durable: the outcome is unknown; read the ' +
        'state before trying again',
      `${String(code)}: ${error instanceof Error ? error.message : String(error)}`,
    );
  return error;
}
