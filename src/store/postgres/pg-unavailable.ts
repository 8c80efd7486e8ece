import { ServiceUnavailable, WsagError } from '../../domain/errors.js';

/**
 * SQLSTATE classes and codes of a database that is gone or refuses sessions (connection exceptions, shutting down,
 * too many connections, a login refused), and Node's socket errors.
 */
const unavailableStates = /^(08|28|57P0[123]|53300)/;
const socketErrors = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * True when `error` says the database cannot be reached (restarting, stopped, the connection cut), not that a statement
 * failed.
 */
function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string' && (unavailableStates.test(e.code) || socketErrors.has(e.code))) return true;
  return typeof e?.message === 'string' && /Connection terminated|not queryable|connection error/i.test(e.message);
}

/** True when `error` is this server's own pool refusing work because it was closed (ours, or node-postgres's words). */
function isPoolClosed(error: unknown): boolean {
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && /pool is closed|after calling end on the pool/i.test(message);
}

/**
 * The error a caller should see: the database being unreachable is ServiceUnavailable, in words that say whether
 * anything may have been stored (a commit whose answer was lost may have happened); other errors as they are.
 * `closed`: this server closed its connections while the work was under way (a leader stepping down, a server
 * stopping): an error saying the connections are gone means the work's next step was not done; any other is the
 * statement's own.
 */
export function unavailableOr(error: unknown, whileCommitting: boolean, closed = false): unknown {
  if (error instanceof WsagError) return error; // already said in our words
  const cause = error instanceof Error ? error.message : String(error);
  const gone = isDatabaseUnavailable(error) || isPoolClosed(error);
  // A statement that failed on its own while the pool closed (a constraint, a bug) is reported as what it is.
  if (closed && !whileCommitting && gone)
    return new ServiceUnavailable(
      'this instance stopped using the database while it served the request (it lost the planning leadership or ' +
        'is stopping): the step under way was not done; read the state before trying again',
      `PostgreSQL: ${cause}`,
    );
  // disk_full: a statement could not extend a file and failed, its transaction with it (a commit that cannot write
  // its log is a PANIC, a restart, not this error), so nothing was stored, even in the batch sent with the COMMIT.
  if ((error as { code?: unknown } | undefined)?.code === '53100')
    return new ServiceUnavailable(
      "the database's disk is full: nothing was stored; try again once the site has made room",
      `PostgreSQL: ${cause}`,
    );
  if (!gone) return error;
  return new ServiceUnavailable(
    whileCommitting
      ? 'the database connection was lost while the change was committed: the outcome is unknown; read the ' +
          'state before trying again'
      : 'the database cannot be reached (it may be restarting): nothing was changed; try again shortly',
    `PostgreSQL: ${cause}`,
  );
}
