/** What every benchmark shares: quantiles of timings, the machine heading, and printing (or appending) the table. */
import fs from 'node:fs';
import os from 'node:os';

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

/** Prints the table; `--write` also appends it to docs/benchmarks.md. */
export function publish(table: string): void {
  console.log(table);
  if (process.argv.includes('--write')) fs.appendFileSync('docs/benchmarks.md', `\n${table}`);
}
