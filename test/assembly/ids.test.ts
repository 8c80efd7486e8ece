import { describe, expect, it } from 'vitest';
import { randomIds } from '../../src/server.js';

const version7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation time a version 7 UUID begins with (its first 48 bits), in milliseconds. */
const millisecondsOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe("the server's ids", () => {
  it('are version 7 UUIDs that begin with the time they were made', () => {
    const before = Date.now();
    const id = randomIds.next();
    const after = Date.now();
    expect(id).toMatch(version7);
    expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondsOf(id)).toBeLessThanOrEqual(after);
  });

  it('sort in the order they were made and never repeat, within a millisecond too', () => {
    const ids = Array.from({ length: 20_000 }, () => randomIds.next());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // Many were made in the same millisecond: their order comes from more than the time.
    expect(new Set(ids.map(millisecondsOf)).size).toBeLessThan(ids.length);
  });
});
