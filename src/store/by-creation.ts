/** The list order of the SQLite stores (ORDER BY created_at, id), for the memory stores. */
export function byCreation(a: { id: string; createdAt: Date }, b: { id: string; createdAt: Date }): number {
  // The id breaks ties so the order is deterministic.
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
