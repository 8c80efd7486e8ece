import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { exists, highestNumbered, jobDirectory, stageOutput } from './job-directories.js';
import type { JobLaunch, PreparedJob, ResourceManager, ResourceManagerEvent, StopReason } from './resource-manager.js';

export interface LocalProcessOptions {
  /**
   * Where each job gets a directory (`<directory>/<job id>/`: checkpoints, log) and results are staged out
   * (`<directory>/results/<job id>/`).
   */
  directory: string;
  /**
   * The command run for every job (cwd: the job's directory); default: the demo job (`demo-job.mjs`). See the protocol
   * there.
   */
  command?: { executable: string; args?: string[] };
  /**
   * Wall-clock seconds the demo job computes per second of runtime estimate: 0.001 runs an hour in 3.6 s. Default
   * 0.001. Batch jobs only: a session holds its nodes to its window's end.
   */
  cpuTimeScale?: number;
  /** The demo job sleeps (default) or burns CPU. */
  demoMode?: 'sleep' | 'burn';
  /** How long a job may take to answer a checkpoint request. Default 10 s. */
  checkpointTimeoutMs?: number;
  /** How long a stopped job gets between SIGTERM and SIGKILL. Default 2 s. */
  killGraceMs?: number;
  /** Extra environment for the job. */
  env?: Record<string, string>;
}

/** What a checkpoint file holds: our metadata, and the job's own state under `job`. */
export interface CheckpointFile {
  format: 'wsag-checkpoint/1';
  jobId: string;
  sequence: number;
  takenAt: string;
  nodes: string[];
  job: Record<string, unknown>;
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  nodes: readonly string[];
  exited: Promise<void>;
  stopping: boolean;
  /** Checkpoint requests waiting for the job's answer, oldest first. */
  waiting: Array<{ resolve: (state: Record<string, unknown>) => void; reject: (error: Error) => void }>;
  stderr: string[];
}

const demoJob = fileURLToPath(new URL('./demo-job.mjs', import.meta.url));

/**
 * The default resource manager: runs each job as a local child process and keeps its
 * checkpoints as files. "Nodes" are names only; every job runs on this machine. A
 * checkpoint asks the process for its state (a JSON line on stdin, answered by one on
 * stdout) and writes it with our metadata to `<job dir>/checkpoint-<n>.json`; a restart
 * passes that file to the new process (WSAG_RESUME_FROM), which resumes from it. Stopping
 * sends SIGTERM, then SIGKILL after a grace period, and waits for the exit, so no process
 * is left behind.
 */
export class LocalProcessResourceManager implements ResourceManager {
  private readonly running = new Map<string, Running>();
  private readonly sequences = new Map<string, number>();
  private readonly listeners = new Set<(event: ResourceManagerEvent) => void | Promise<void>>();
  private readonly scale: number;
  private readonly checkpointTimeoutMs: number;
  private readonly killGraceMs: number;

  constructor(private readonly options: LocalProcessOptions) {
    this.scale = options.cpuTimeScale ?? 0.001;
    if (!(this.scale > 0)) throw new RangeError(`cpuTimeScale must be greater than 0, got ${options.cpuTimeScale}`);
    this.checkpointTimeoutMs = options.checkpointTimeoutMs ?? 10_000;
    this.killGraceMs = options.killGraceMs ?? 2_000;
  }

  jobDirectory(jobId: string): string {
    return jobDirectory(this.options.directory, jobId);
  }

  /** Process id of the running job (tests, operators). */
  pid(jobId: string): number | undefined {
    return this.running.get(jobId)?.child.pid;
  }

  async prepare(job: PreparedJob): Promise<void> {
    await mkdir(this.jobDirectory(job.jobId), { recursive: true });
  }

  async start(launch: JobLaunch): Promise<void> {
    if (this.running.has(launch.jobId))
      throw new Error(`job ${launch.jobId} is already running (pid ${this.pid(launch.jobId)})`);
    const dir = this.jobDirectory(launch.jobId);
    await mkdir(dir, { recursive: true });
    const command = this.options.command ?? { executable: process.execPath, args: [demoJob] };
    const child = spawn(command.executable, command.args ?? [], {
      cwd: dir,
      env: {
        ...process.env,
        ...this.options.env,
        WSAG_JOB_ID: launch.jobId,
        WSAG_NODES: launch.nodes.join(','),
        WSAG_JOB_DIR: dir,
        WSAG_WORK_MS: String(
          Math.max(1, Math.round(launch.session ? launch.expectedRunMs : launch.runtimeSeconds * this.scale * 1000)),
        ),
        WSAG_DEMO_MODE: this.options.demoMode ?? 'sleep',
        ...(launch.fromCheckpoint !== undefined ? { WSAG_RESUME_FROM: launch.fromCheckpoint } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const entry: Running = {
      child,
      nodes: [...launch.nodes],
      exited: once(child, 'exit').then(
        () => undefined,
        () => undefined,
      ),
      stopping: false,
      waiting: [],
      stderr: [],
    };
    child.on('error', (error) => entry.stderr.push(error.message)); // e.g. a signal that could not be sent
    try {
      await once(child, 'spawn');
    } catch (error) {
      throw new Error(`cannot start job ${launch.jobId} (${command.executable}): ${(error as Error).message}`);
    }
    this.running.set(launch.jobId, entry);
    child.stdin.on('error', () => {}); // the job may exit while we write to it
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(entry, line));
    createInterface({ input: child.stderr }).on('line', (line) => {
      entry.stderr.push(line);
      if (entry.stderr.length > 20) entry.stderr.shift();
    });
    child.on('exit', (code, signal) => void this.onExit(launch.jobId, entry, code, signal));
  }

  async checkpoint(jobId: string): Promise<string> {
    const entry = this.running.get(jobId);
    if (!entry || entry.stopping) throw new Error(`job ${jobId} is not running`);
    const state = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        entry.waiting = entry.waiting.filter((w) => w.resolve !== done);
        reject(new Error(`job ${jobId} did not answer the checkpoint request within ${this.checkpointTimeoutMs} ms`));
      }, this.checkpointTimeoutMs);
      timer.unref();
      const done = (s: Record<string, unknown>) => {
        clearTimeout(timer);
        resolve(s);
      };
      entry.waiting.push({
        resolve: done,
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      entry.child.stdin.write(`${JSON.stringify({ type: 'checkpoint' })}\n`);
    });
    // After a server restart the numbering goes on from the files left: a newer checkpoint never overwrites an older
    // one's name.
    const sequence = (this.sequences.get(jobId) ?? (await this.lastSequence(jobId))) + 1;
    this.sequences.set(jobId, sequence);
    const file: CheckpointFile = {
      format: 'wsag-checkpoint/1',
      jobId,
      sequence,
      takenAt: new Date().toISOString(),
      nodes: [...entry.nodes],
      job: state,
    };
    const path = join(this.jobDirectory(jobId), `checkpoint-${sequence}.json`);
    // Written whole or not at all: a restart never reads half a checkpoint.
    await writeFile(`${path}.tmp`, `${JSON.stringify(file, null, 2)}\n`);
    await rename(`${path}.tmp`, path);
    return path;
  }

  async stop(jobId: string, _reason: StopReason): Promise<void> {
    const entry = this.running.get(jobId);
    if (!entry) return;
    entry.stopping = true;
    entry.child.stdin.end();
    if (entry.child.exitCode === null && entry.child.signalCode === null) {
      entry.child.kill('SIGTERM');
      const killed = await Promise.race([entry.exited.then(() => true), delay(this.killGraceMs).then(() => false)]);
      if (!killed) entry.child.kill('SIGKILL');
    }
    await entry.exited;
    if (this.running.get(jobId) === entry) this.running.delete(jobId);
  }

  /** Results the job left in `<job dir>/output/` are copied to `<directory>/results/<job id>/`. */
  stageOut(jobId: string): Promise<void> {
    return stageOutput(this.options.directory, jobId);
  }

  /** Stops the job if it still runs; `final` removes its checkpoint files (002 section 3.3.4: no longer needed). */
  async cleanup(jobId: string, final: boolean): Promise<void> {
    await this.stop(jobId, 'terminated');
    if (!final) return;
    const dir = this.jobDirectory(jobId);
    if (!(await exists(dir))) return;
    for (const name of await readdir(dir)) {
      if (/^checkpoint-\d+\.json(\.tmp)?$/.test(name)) await rm(join(dir, name), { force: true });
    }
  }

  onEvent(listener: (event: ResourceManagerEvent) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every job (server shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.running.keys()].map((id) => this.stop(id, 'terminated')));
  }

  /** The highest checkpoint number among the job's files (0 when there is none). */
  private lastSequence(jobId: string): Promise<number> {
    return highestNumbered(this.jobDirectory(jobId), /^checkpoint-(\d+)\.json$/);
  }

  private onLine(entry: Running, line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // ordinary output
    }
    if (!isObject(message) || message.type !== 'checkpoint') return;
    const { type: _type, ...state } = message;
    entry.waiting.shift()?.resolve(state);
  }

  private async onExit(
    jobId: string,
    entry: Running,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<void> {
    for (const w of entry.waiting.splice(0))
      w.reject(new Error(`job ${jobId} exited before answering the checkpoint request`));
    if (this.running.get(jobId) === entry && !entry.stopping) this.running.delete(jobId);
    if (entry.stopping) return;
    const event: ResourceManagerEvent =
      code === 0
        ? { type: 'finished', jobId }
        : {
            type: 'failed',
            jobId,
            reason:
              `${signal ? `killed by ${signal}` : `exit code ${code}`}` +
              `${entry.stderr.length ? `: ${entry.stderr.slice(-3).join(' | ')}` : ''}`,
          };
    await Promise.all([...this.listeners].map((listener) => listener(event)));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
