/**
 * `npm run bench`: every benchmark, one process each (so one's garbage does not slow the
 * next), in order: the SOAP operations (bench/create-agreement.ts), the planning
 * scheduler (bench/scheduler.ts), then agreement signatures (bench/signatures.ts).
 * Arguments are passed on: `npm run bench -- --write`
 * puts each one's table in docs/benchmarks.md in place of the last (bench/report.ts).
 */
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
for (const file of ['bench/create-agreement.ts', 'bench/scheduler.ts', 'bench/signatures.ts']) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', file, ...args], { stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`${file} failed (${run.status ?? run.signal})`);
    process.exit(run.status ?? 1);
  }
}
