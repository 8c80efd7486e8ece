import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, unchainedEntry } from '../../src/engine/audit/audit-chain.js';
import type { AuditDetails, JsonValue } from '../../src/engine/ports.js';

/**
 * The definition the stored hashes were made with (before the one-pass writer): the value
 * through JSON and back, then keys sorted level by level. Kept here to pin canonicalJson to it.
 */
function definition(value: unknown): string {
  const plain = (v: JsonValue): string => {
    if (Array.isArray(v)) return `[${v.map(plain).join(',')}]`;
    if (v !== null && typeof v === 'object') {
      return `{${Object.keys(v)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${plain(v[key] as JsonValue)}`)
        .join(',')}}`;
    }
    return JSON.stringify(v);
  };
  return plain(JSON.parse(JSON.stringify(value)) as JsonValue);
}

/** JSON values, and what audit details may also carry: Dates, undefined members and elements, non-finite numbers. */
const detailValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.date({ noInvalidDate: true }),
    fc.array(tie('value')),
    fc.dictionary(fc.string(), tie('value')),
  ),
})).value;

describe('canonicalJson', () => {
  it('writes what the definition writes, for JSON values and for what JSON.stringify reads differently', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), detailValue), (details) => {
        expect(canonicalJson(details as JsonValue)).toBe(definition(details));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys by UTF-16 code units, drops undefined members, writes undefined in an array as null and a Date as its ISO string', () => {
    const details = {
      b: [undefined, 1],
      a: new Date('2026-11-27T12:00:00Z'),
      é: 1,
      Z: undefined,
      '10': true,
      '9': false,
    } as unknown as JsonValue;
    expect(canonicalJson(details)).toBe('{"10":true,"9":false,"a":"2026-11-27T12:00:00.000Z","b":[null,1],"é":1}');
  });

  it('refuses a value JSON cannot write', () => {
    expect(() => canonicalJson(undefined as unknown as JsonValue)).toThrow(/no JSON form/);
    expect(() => canonicalJson({ n: 1n } as unknown as JsonValue)).toThrow(TypeError);
  });
});

describe('unchainedEntry', () => {
  it('keeps the details as JSON gives them back, and the canonical text of exactly those', () => {
    const details = {
      when: new Date('2026-11-27T12:00:00Z'),
      gone: undefined,
      list: [undefined],
    } as unknown as AuditDetails;
    const { entry, canonicalDetails } = unchainedEntry({
      at: new Date(0),
      actor: 'a',
      subject: { kind: 'agreement', id: 'x' },
      action: 'created',
      details,
    });
    expect(entry.details).toEqual({ when: '2026-11-27T12:00:00.000Z', list: [null] });
    expect(Object.keys(entry.details)).not.toContain('gone');
    expect(canonicalDetails).toBe(definition(details));
  });
});
