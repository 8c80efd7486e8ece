/** What every benchmark shares: quantiles of timings, the machine heading, and printing the table (or writing it into docs/benchmarks.md). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function quantiles(times: number[]): { median: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return { median: q(0.5), p99: q(0.99) };
}

/** `### DATE: WHAT, N × CPU, Node VERSION` (plus the kernel when `withKernel`). */
export function machineHeading(what: string | undefined, options: { withKernel?: boolean } = {}): string {
  const parts = [
    ...(what ? [what] : []),
    `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}`,
    `Node ${process.version}`,
    ...(options.withKernel ? [`${os.platform()} ${os.release()}`] : []),
  ];
  return `### ${new Date().toISOString().slice(0, 10)}: ${parts.join(', ')}`;
}

/**
 * Prints the table; `--write` also puts it in docs/benchmarks.md in place of the last
 * one, between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` (NAME: the bench file's, or
 * the variant's). The history of past figures is git's.
 */
export function publish(table: string, name = path.basename(process.argv[1] ?? 'bench', '.ts')): void {
  console.log(table);
  if (process.argv.includes('--write'))
    fs.writeFileSync(benchmarksFile, withTable(fs.readFileSync(benchmarksFile, 'utf8'), name, table));
}

const benchmarksFile = 'docs/benchmarks.md';

/** `text` with the table between NAME's markers replaced by `table`. */
export function withTable(text: string, name: string, table: string): string {
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(`${benchmarksFile} has no section for ${name}: add ${begin} and ${end} where its table belongs`);
  return `${text.slice(0, from + begin.length)}\n${table.trim()}\n${text.slice(to)}`;
}
