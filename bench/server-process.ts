/** `npm start` as its own process for the benchmarks: its URL once it listens, how long that took, and its RSS. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/**
 * The node flags `npm start` runs the server with (package.json's start script), so the
 * benchmarks measure the same process; BENCH_NODE_FLAGS replaces them (set but empty: none,
 * e.g. to measure V8's default young generation on the event loop, docs/deployment.md).
 */
function startFlags(): string[] {
  const replaced = process.env.BENCH_NODE_FLAGS;
  if (replaced !== undefined) return replaced.split(' ').filter(Boolean);
  return npmStartFlags(fs.readFileSync('package.json', 'utf8'));
}

/** The node flags of package.json's start script (`packageJson`: the file's text). */
export function npmStartFlags(packageJson: string): string[] {
  const start = (JSON.parse(packageJson) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return start.slice(start.indexOf('node') + 1, start.indexOf('dist/main.js'));
}

/** How a recorded command says its server's node flags were replaced: `BENCH_NODE_FLAGS="..." ` before it, or nothing. */
export function nodeFlagsPrefix(): string {
  const replaced = process.env.BENCH_NODE_FLAGS;
  return replaced === undefined ? '' : `BENCH_NODE_FLAGS="${replaced}" `;
}

/** The compiled server, as `npm start` runs it, built from the sources once per benchmark run. */
let built = false;
function compiledServer(): string {
  if (!built) execFileSync('npm', ['run', 'build'], { stdio: 'ignore' });
  built = true;
  return 'dist/main.js';
}

export async function startProcess(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; startMs: number }> {
  const server = compiledServer();
  const started = performance.now();
  // BENCH_SERVER_FLAGS: node flags for the server only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it under the load.
  const flags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...startFlags(), ...flags, server], {
    env: { ...process.env, PORT: '0', WSAG_DATA_DIR: dataDir, WSAG_ADMINS: 'anonymous', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1] as string);
    };
    child.stdout?.on('data', onData);
    // BENCH_SERVER_LOG: a file for the server's standard output, e.g. what `--trace-opt` in BENCH_SERVER_FLAGS prints.
    const log = process.env.BENCH_SERVER_LOG;
    if (log) child.stdout?.on('data', (chunk: Buffer) => fs.appendFileSync(log, chunk));
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { child, url, startMs: performance.now() - started };
}

const statusMiB = (pid: number, field: string) =>
  Math.round(
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
  );
/** Resident memory now. */
export const rssMiB = (pid: number) => statusMiB(pid, 'VmRSS');
/** The most resident memory the process has had (its start-up peak, when read soon after). */
export const peakRssMiB = (pid: number) => statusMiB(pid, 'VmHWM');

/** Clock ticks a second in /proc's CPU times (USER_HZ on Linux). */
const ticksPerSecond = 100;

/** CPU time the process has used, user and system, all its threads (/proc/PID/stat in clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Bytes the process has had written to storage so far, all its threads (/proc/PID/io's write_bytes: the log, the database file, its checkpoints). */
export function storageWriteBytes(pid: number): number {
  return Number(/^write_bytes: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
}

/**
 * The whole machine's CPU time so far, every process and the kernel's own work (/proc/stat's
 * first line: user, nice, system, irq and softirq; idle, I/O wait and a hypervisor's steal
 * left out), and the machine's clock: two readings give the cores kept busy between them.
 */
export function machineCpu(): { busySeconds: number; at: number } {
  const ticks = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] as string)
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = [0, 1, 2, 5, 6].reduce((sum, field) => sum + (ticks[field] ?? 0), 0); // user, nice, system, irq, softirq
  return { busySeconds: busy / ticksPerSecond, at: performance.now() };
}
