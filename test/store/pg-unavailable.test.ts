import { describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/domain/errors.js';
import { unavailableOr } from '../../src/store/postgres/pg-unavailable.js';

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('unavailableOr: what a caller sees of a PostgreSQL error', () => {
  it('a database gone or refusing sessions is ServiceUnavailable, in words that say whether anything was stored', () => {
    const refused = unavailableOr(pgError('57P03', 'the database system is starting up'), false);
    expect(refused).toBeInstanceOf(ServiceUnavailable);
    expect((refused as Error).message).toMatch(/cannot be reached .*nothing was changed/);
    const lost = unavailableOr(new Error('Connection terminated unexpectedly'), true);
    expect((lost as Error).message).toMatch(/lost while the change was committed: the outcome is unknown/);
  });

  it('after this instance closed its pool, work refused for it says the step was not done', () => {
    for (const error of [
      new Error('the connection pool is closed'),
      new Error('Cannot use a pool after calling end on the pool'),
    ]) {
      const seen = unavailableOr(error, false, true);
      expect(seen).toBeInstanceOf(ServiceUnavailable);
      expect((seen as Error).message).toMatch(/stopped using the database .*the step under way was not done/);
    }
  });

  it('a statement that failed on its own while the pool closed is reported as what it is', () => {
    const duplicate = pgError('23505', 'duplicate key value violates unique constraint "agreements_pkey"');
    expect(unavailableOr(duplicate, false, true)).toBe(duplicate);
    expect(unavailableOr(duplicate, true, true)).toBe(duplicate);
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    expect(unavailableOr(bug, false, true)).toBe(bug);
  });

  it('a full disk says nothing was stored', () => {
    const full = unavailableOr(pgError('53100', 'could not extend file'), true);
    expect((full as Error).message).toMatch(/disk is full: nothing was stored/);
  });
});
