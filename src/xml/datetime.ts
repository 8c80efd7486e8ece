import { InvalidTerms } from '../domain/errors.js';
import { quoteValue } from './typed-values.js';

/** xs:dateTime on the wire. */

/** Lexical xs:dateTime, with a four-digit year (what this server can write back as xs:dateTime). */
const lexical = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{1,9})?(Z|[+-](\d\d):(\d\d))?$/;

/**
 * The times this server represents: from 1970 (no negative instants) to the end of year 9999 (four-digit years on the
 * wire).
 */
export const representable = { from: Date.UTC(1970, 0, 1), to: Date.UTC(10000, 0, 1) - 1000 } as const;

/**
 * An xs:dateTime read at the boundary; `element` names it in the fault. Without a zone it
 * is read as UTC, not as the server's local time. A value the server cannot represent or
 * act on (a five-digit or negative year, 24:00:00, an impossible day, before 1970) is
 * InvalidTerms naming the element and the value: nothing unrepresentable reaches the domain.
 */
export function date(value: string | undefined, element = 'xs:dateTime'): Date | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  const m = lexical.exec(v);
  const refuse = (why: string) => new InvalidTerms(`${element} ${quoteValue(value)} ${why}`);
  if (!m)
    throw refuse(
      `is not an xs:dateTime this server can represent (YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm], years 1970 to 9999)`,
    );
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fields = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(fields);
  if (month < 1 || month > 12 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
    throw refuse('is not a date and time of the calendar');
  const zone = m[8] ?? 'Z';
  if (zone !== 'Z' && (Number(m[9]) > 14 || Number(m[10]) > 59)) throw refuse('has a time zone offset outside ±14:00');
  const parsed = new Date(/(Z|[+-]\d\d:\d\d)$/.test(v) ? v : `${v}Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.getTime() < representable.from || parsed.getTime() > representable.to) {
    throw refuse('is outside the times this server represents (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)');
  }
  return parsed;
}

/**
 * UTC, whole seconds (2026-11-22T08:00:00Z): what every party parses alike. `up` rounds a
 * fractional second up, for ends and deadlines that must not move earlier than promised.
 */
export function xsDateTime(value: Date, round: 'down' | 'up' = 'down'): string {
  const seconds = round === 'up' ? Math.ceil(value.getTime() / 1000) : Math.floor(value.getTime() / 1000);
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
