import type { ListPage } from '../engine/ports.js';

/** The list order of the SQLite stores (ORDER BY created_at, id), for the memory stores. */
export function byCreation(a: { id: string; createdAt: Date }, b: { id: string; createdAt: Date }): number {
  // The id breaks ties so the order is deterministic.
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The page of items (already in list order) that `page` asks for: those after its cursor, at most its limit. */
export function pageOf<T extends { id: string; createdAt: Date }>(sorted: T[], page: ListPage): T[] {
  const after = page.after;
  const from = after === undefined ? 0 : sorted.findIndex((item) => byCreation(item, { id: after.id, createdAt: after.createdAt }) > 0);
  const rest = from < 0 ? [] : sorted.slice(from);
  return page.limit === undefined ? rest : rest.slice(0, page.limit);
}

/** The SQL of a page over (created_at, id): keyset conditions on the list order's index, and the LIMIT. */
export function pageSql(page: ListPage): { conditions: string[]; params: Array<string | number>; limit: string } {
  const conditions: string[] = [];
  const params: Array<string | number> = [];
  if (page.after !== undefined) {
    conditions.push('(created_at > ? OR (created_at = ? AND id > ?))');
    const at = page.after.createdAt.getTime();
    params.push(at, at, page.after.id);
  }
  return { conditions, params, limit: page.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(page.limit))}` };
}
