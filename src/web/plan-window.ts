import type { Request } from 'express';
import { MalformedMessage } from '../domain/errors.js';
import { knownQuery } from './listing.js';

/**
 * The window of GET /api/plan: `?from=` and `?to=` (ISO 8601 times, both or neither) keep the
 * bookings that overlap [from, to), so the dashboard's view costs what it shows rather than
 * the whole plan (every booking at 100,000 live agreements took about 2 s, docs/benchmarks.md).
 */
export function planWindow(req: Request): { from: Date; to: Date } | undefined {
  const { from: rawFrom, to: rawTo } = knownQuery(req, ['from', 'to'], 'the plan takes from and to');
  if (rawFrom === undefined && rawTo === undefined) return undefined;
  const time = (raw: unknown, name: string): Date => {
    const date =
      typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(raw)
        ? new Date(raw)
        : new Date(NaN);
    if (Number.isNaN(date.getTime()))
      throw new MalformedMessage(
        `${name} must be an ISO 8601 time with its zone, such as 2026-11-27T12:00:00Z; both from and to, or neither`,
      );
    return date;
  };
  const from = time(rawFrom, 'from');
  const to = time(rawTo, 'to');
  if (to <= from) throw new MalformedMessage(`to (${to.toISOString()}) must be after from (${from.toISOString()})`);
  return { from, to };
}
