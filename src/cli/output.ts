/** Shared output helpers: aligned text tables for people, one JSON document for scripts. */

/** Prints `value` as one JSON document (pretty-printed, so it is readable too). */
export function printJson(out: (line: string) => void, value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/**
 * Lines of a left-aligned table; the last column is not padded. Empty cells print as "-".
 * `indent` prefixes every line.
 */
export function table(headers: string[] | undefined, rows: string[][], indent = ''): string[] {
  const all = headers ? [headers, ...rows] : rows;
  const widths: number[] = [];
  for (const row of all) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, display(cell).length)));
  return all.map((row) =>
    (
      indent +
      row.map((cell, i) => (i === row.length - 1 ? display(cell) : display(cell).padEnd(widths[i] ?? 0))).join('  ')
    ).trimEnd(),
  );
}

function display(cell: string): string {
  return cell === '' ? '-' : cell;
}

/** An ISO timestamp without milliseconds (`2026-11-21T23:19:06Z`); other text unchanged. */
export function shortTime(iso: string | undefined): string {
  if (!iso) return '';
  return iso.replace(/\.\d+Z$/, 'Z');
}

/** `32.00 EUR`; empty when there is no amount. */
export function money(value: { amount: number; currency: string } | undefined): string {
  return value ? `${value.amount.toFixed(2)} ${value.currency}` : '';
}
