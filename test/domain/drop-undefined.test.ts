import { describe, expect, it } from 'vitest';
import { dropUndefined } from '../../src/domain/drop-undefined.js';

describe('dropUndefined', () => {
  it('keeps the defined keys in their order, falsy values included', () => {
    const dropped = dropUndefined({ a: 1, b: undefined, c: null, d: 0, e: '', f: false, g: undefined });
    expect(Object.keys(dropped)).toEqual(['a', 'c', 'd', 'e', 'f']);
    expect(dropped).toEqual({ a: 1, c: null, d: 0, e: '', f: false });
  });

  it('makes a new object and leaves its argument alone (deleting keys would give V8 a slow object)', () => {
    const given = { a: 1, b: undefined };
    const dropped = dropUndefined(given);
    expect(dropped).not.toBe(given);
    expect(Object.keys(given)).toEqual(['a', 'b']);
  });
});
