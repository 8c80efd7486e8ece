import type { Request, Response } from 'express';
import { MalformedMessage } from '../domain/errors.js';
import type { ListPage } from '../engine/ports.js';

/**
 * Paged listings under /api (the work of one request does not grow with what the
 * server holds). `?limit=` (default 100, at most 1000), `?after=` the cursor of the page's
 * last item, `?state=` a filter. The answer is the page as a JSON array, written row by
 * row; when more follow, a `Link: <...>; rel="next"` header (RFC 8288) gives the next
 * page's URL, so clients that read the array as before keep working.
 */
export const defaultPageSize = 100;
export const maxPageSize = 1000;

export interface ListingQuery<S extends string> extends ListPage {
  limit: number;
  state?: S;
}

/**
 * The request's query parameters; any but `known` is refused with a MalformedMessage naming it and saying what `takes`.
 */
export function knownQuery(req: Request, known: readonly string[], takes: string): Record<string, unknown> {
  const query = req.query as Record<string, unknown>;
  const extra = Object.keys(query).filter((k) => !known.includes(k));
  if (extra.length > 0)
    throw new MalformedMessage(
      `unknown query parameter ${extra.map((k) => `"${k.slice(0, 40)}"`).join(', ')}: ${takes}`,
    );
  return query;
}

/** `?limit=`: a whole number from 1 to maxPageSize, `fallback` when absent. */
export function pageLimit(raw: unknown, fallback: number): number {
  if (raw === undefined) return fallback;
  const limit = typeof raw === 'string' && /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= maxPageSize))
    throw new MalformedMessage(`limit must be a whole number from 1 to ${maxPageSize}`);
  return limit;
}

export function listingQuery<S extends string>(req: Request, states: readonly S[]): ListingQuery<S> {
  const {
    limit: rawLimit,
    after: rawAfter,
    state: rawState,
  } = knownQuery(req, ['limit', 'after', 'state'], 'a listing takes limit, after and state');
  const query: ListingQuery<S> = { limit: pageLimit(rawLimit, defaultPageSize) };
  if (rawAfter !== undefined) query.after = cursorFrom(rawAfter);
  if (rawState !== undefined) {
    if (typeof rawState !== 'string' || !states.includes(rawState as S))
      throw new MalformedMessage(`state must be one of ${states.join(', ')}`);
    query.state = rawState as S;
  }
  return query;
}

/** Sends `items` (read with one more than the limit, to know whether a next page exists) as the page. */
export function sendListing<T extends { id: string; createdAt: Date }>(
  req: Request,
  res: Response,
  query: ListingQuery<string>,
  items: readonly T[],
  toJson: (item: T) => unknown,
): void {
  const page = items.slice(0, query.limit);
  const last = page.at(-1);
  if (items.length > query.limit && last) {
    const next = new URLSearchParams({
      limit: String(query.limit),
      after: cursorOf(last),
      ...(query.state ? { state: query.state } : {}),
    });
    res.set('link', `<${req.baseUrl}${req.path}?${next.toString()}>; rel="next"`);
  }
  res.status(200).type('application/json');
  res.write('[');
  page.forEach((item, i) => res.write((i > 0 ? ',' : '') + JSON.stringify(toJson(item))));
  res.end(']');
}

function cursorOf(item: { id: string; createdAt: Date }): string {
  return Buffer.from(`${item.createdAt.getTime()}.${item.id}`).toString('base64url');
}

function cursorFrom(raw: unknown): { createdAt: Date; id: string } {
  const text = typeof raw === 'string' && /^[\w-]{1,400}$/.test(raw) ? Buffer.from(raw, 'base64url').toString() : '';
  const m = /^(\d{1,15})\.(.+)$/s.exec(text);
  if (!m)
    throw new MalformedMessage(
      'after is not a cursor this server gave: pass the after= of a Link rel="next" header as it is',
    );
  return { createdAt: new Date(Number(m[1])), id: m[2] as string };
}
