import type Database from 'better-sqlite3';

/**
 * The UPDATE of a row by its id, every column of `columns` (comma-separated, named
 * parameters alike) set from the row given. Returns whether the row existed.
 *
 * Why two statements: SQLite rewrites the entries of every index on a column an UPDATE
 * sets, to the same value or not. Setting columns that hardly ever change (`kept`: an
 * owner, a creation time) wrote their index pages to the log at every write, two pages
 * more per update (git history of docs/benchmarks.md). So the update
 * leaves them out where the stored values are the same, and sets them too only when they
 * differ.
 */
export function rowUpdate<Row extends { id: string }>(
  db: Database.Database,
  table: string,
  columns: string,
  kept: readonly string[],
): (row: Row) => boolean {
  const set = (names: string[]) => names.map((c) => `${c} = @${c}`).join(', ');
  const updated = columns
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== 'id');
  const leavingKept = db.prepare<[Row]>(
    `UPDATE ${table} SET ${set(updated.filter((c) => !kept.includes(c)))} WHERE id = @id AND ` +
      `${kept.map((c) => `${c} = @${c}`).join(' AND ')}`,
  );
  const everything = db.prepare<[Row]>(`UPDATE ${table} SET ${set(updated)} WHERE id = @id`);
  return (row) => leavingKept.run(row).changes > 0 || everything.run(row).changes > 0;
}
