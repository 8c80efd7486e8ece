import type { ListPage } from '../engine/ports.js';

/** The list order of the SQLite stores (ORDER BY created_at, id), for the memory stores. */
export function byCreation(a: { id: string; createdAt: Date }, b: { id: string; createdAt: Date }): number {
  // The id breaks ties so the order is deterministic.
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The page of items (already in list order) that `page` asks for: those after its cursor, at most its limit. */
export function pageOf<T extends { id: string; createdAt: Date }>(sorted: T[], page: ListPage): T[] {
  const after = page.after;
  const from =
    after === undefined
      ? 0
      : sorted.findIndex((item) => byCreation(item, { id: after.id, createdAt: after.createdAt }) > 0);
  const rest = from < 0 ? [] : sorted.slice(from);
  return page.limit === undefined ? rest : rest.slice(0, page.limit);
}

/**
 * The SQL of a listing over (created_at, id): keyset conditions for the page, the
 * initiator and state filters, the given `extra` conditions (with `?` for `extraParams`, in
 * order), and the LIMIT.
 */
export function listingSql(
  filter: ListPage & { initiator?: string; state?: string | readonly string[] },
  extra: string[] = [],
  extraParams: Array<string | number> = [],
): { where: string; params: Array<string | number>; limit: string } {
  const conditions: string[] = [];
  const params: Array<string | number> = [];
  if (filter.after !== undefined) {
    // A row value, not created_at > ? OR (...): both databases then seek in their
    // (..., created_at, id) indexes, where the OR read every later row for each page.
    conditions.push('(created_at, id) > (?, ?)');
    params.push(filter.after.createdAt.getTime(), filter.after.id);
  }
  if (filter.initiator !== undefined) {
    conditions.push('initiator = ?');
    params.push(filter.initiator);
  }
  if (filter.state !== undefined) {
    const states = ([] as string[]).concat(filter.state);
    conditions.push(`state IN (${states.map(() => '?').join(', ')})`);
    params.push(...states);
  }
  conditions.push(...extra);
  params.push(...extraParams);
  return {
    where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`,
    params,
    limit: filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`,
  };
}
