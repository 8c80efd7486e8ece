import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Application } from '../../domain/terms.js';
import { exists, jobDirectory, stageOutput } from '../job-directories.js';
import type { JobLaunch, PreparedJob, ResourceManager, ResourceManagerEvent, StopReason } from '../resource-manager.js';
import { batchScript, wrapperReadyFile } from './slurm-batch-script.js';
import { CheckpointFiles } from './slurm-checkpoints.js';
import { SlurmCommandFailed, type SlurmCli } from './slurm-cli.js';
import { isActive, outcomeOf, slurmJobName, slurmJobs, slurmJobState, type SlurmJob } from './slurm-jobs.js';

export interface SlurmResourceManagerOptions {
  cli: SlurmCli;
  /** Job directories (`<directory>/<job id>/`); must be the same path on every compute node (a shared file system). */
  directory: string;
  partition?: string;
  /**
   * The Slurm reservation of the job's piece on `nodes`, made to exist in Slurm before it resolves
   * (SlurmPlanSync.ensure).
   */
  reservationFor: (jobId: string, nodes: readonly string[]) => Promise<string>;
  /** The default job (no jsdl:Application) computes this many seconds per second of runtime estimate. */
  cpuTimeScale: number;
  /** Default USR1. */
  checkpointSignal?: string;
  /** How long a job may take to write its checkpoint. Default 60 s. */
  checkpointTimeoutMs?: number;
  /** How often a checkpoint's completion or a cancelled job's end is looked for. Default 200 ms. */
  pollMs?: number;
  /** How long a submitted job may take to run its application before it counts as started anyway. Default 60 s. */
  startTimeoutMs?: number;
  /** How long a cancelled job may take to leave its nodes. Default 30 s. */
  stopTimeoutMs?: number;
  log?: (message: string, details: Record<string, unknown>) => void;
}

interface Tracked {
  slurmId: string;
  nodes: readonly string[];
  /**
   * When it began running (Date.now; Infinity until then): a listing taken earlier cannot show its end. 0: adopted from
   * an earlier server run.
   */
  since: number;
}

/** The default job: the example job of the checkpoint contract. */
export const exampleJob = fileURLToPath(new URL('./example-job.sh', import.meta.url));

/**
 * The resource manager in front of Slurm. Each planned piece of a job runs as
 * one Slurm batch job (`sbatch`) in the piece's reservation, on the planned nodes, with a
 * walltime from the plan; the application is the agreement's JSDL POSIXApplication, else
 * the example job. Checkpoints follow the contract in docs/operations.md: the job is
 * signalled and writes its state; the server archives it. Job ends come from Slurm through
 * `observe` (SlurmMonitor polls squeue).
 *
 * What survives the server: `<job dir>/slurm-job` names the Slurm job of the running piece
 * from submission until the server stops it on purpose, and the batch script leaves the
 * application's exit code in `<job dir>/exit-<Slurm id>`. A restarted server that starts
 * the job's piece again adopts that Slurm job instead of submitting another (or learns how
 * it ended), and cancels any other Slurm job of the same agreement: one runs, never two.
 * Stopping the server leaves jobs running in Slurm, to be adopted.
 */
export class SlurmResourceManager implements ResourceManager {
  private readonly tracked = new Map<string, Tracked>();
  private readonly listeners = new Set<(event: ResourceManagerEvent) => void | Promise<void>>();
  private readonly signal: string;
  private readonly pollMs: number;

  constructor(private readonly options: SlurmResourceManagerOptions) {
    this.signal = options.checkpointSignal ?? 'USR1';
    this.pollMs = options.pollMs ?? 200;
  }

  jobDirectory(jobId: string): string {
    return jobDirectory(this.options.directory, jobId);
  }

  /** The Slurm job id of the job's running piece (tests, operators). */
  slurmId(jobId: string): string | undefined {
    return this.tracked.get(jobId)?.slurmId;
  }

  async prepare(job: PreparedJob): Promise<void> {
    await mkdir(this.jobDirectory(job.jobId), { recursive: true });
  }

  async start(launch: JobLaunch): Promise<void> {
    const { jobId } = launch;
    if (this.tracked.has(jobId))
      throw new Error(`job ${jobId} already runs as Slurm job ${this.tracked.get(jobId)?.slurmId}`);
    const dir = this.jobDirectory(jobId);
    await mkdir(dir, { recursive: true });
    const same = (await slurmJobs(this.options.cli)).filter((j) => j.jobId === jobId || j.name === slurmJobName(jobId));
    if (await this.adopt(launch, same)) return;
    for (const stale of same.filter((j) => isActive(j.state))) {
      this.options.log?.('cancelling a Slurm job of an earlier server run: the job starts afresh', {
        jobId,
        slurmJob: stale.id,
      });
      await this.cancel(stale.id);
    }
    const files = new CheckpointFiles(dir);
    if (launch.fromCheckpoint !== undefined) await files.restore(launch.fromCheckpoint);
    else await files.fresh();
    const reservation = await this.options.reservationFor(jobId, launch.nodes);
    const script = join(dir, 'batch.sh');
    await writeFile(
      script,
      batchScript({
        jobId,
        jobDirectory: dir,
        checkpointDirectory: files.live,
        nodes: launch.nodes,
        application: launch.application ?? this.defaultJob(launch),
        checkpointSignal: this.signal,
        environment: {
          WSAG_JOB_ID: jobId,
          WSAG_JOB_DIR: dir,
          WSAG_CHECKPOINT_DIR: files.live,
          WSAG_CHECKPOINT_SIGNAL: this.signal,
          WSAG_NODES: launch.nodes.join(','),
          WSAG_RUNTIME_SECONDS: String(launch.runtimeSeconds),
          // A session holds its nodes to its end, however long Slurm took to start it.
          ...(launch.session ? { WSAG_SESSION_END: ((Date.now() + launch.expectedRunMs) / 1000).toFixed(3) } : {}),
          ...(launch.fromCheckpoint !== undefined ? { WSAG_RESUME_FROM: files.live } : {}),
        },
      }),
      { mode: 0o700 },
    );
    const answer = await this.options.cli.run('sbatch', [
      '--parsable',
      `--job-name=${slurmJobName(jobId)}`,
      `--comment=${jobId}`,
      `--reservation=${reservation}`,
      `--nodelist=${launch.nodes.join(',')}`,
      `--nodes=${launch.nodes.length}`,
      '--exclusive',
      `--time=${walltimeMinutes(launch.expectedRunMs)}`,
      '--no-requeue',
      '--export=NONE',
      `--chdir=${dir}`,
      `--output=${join(dir, 'slurm-%j.out')}`,
      ...(this.options.partition ? [`--partition=${this.options.partition}`] : []),
      script,
    ]);
    const slurmId = answer.trim().split(';')[0] as string;
    await writeWhole(join(dir, 'slurm-job'), `${slurmId}\n`);
    // Not observed until it runs: "started" must mean computing, and its end come after its start.
    const tracked: Tracked = { slurmId, nodes: [...launch.nodes], since: Number.POSITIVE_INFINITY };
    this.tracked.set(jobId, tracked);
    await this.running(jobId, slurmId);
    tracked.since = Date.now();
  }

  /**
   * Resolves once the job's batch script runs the application (the wrapper's mark) or has
   * ended: Slurm reports RUNNING before that, and a site's hand-over time must cover the
   * whole delay. After `startTimeoutMs` the job counts as started, and the monitor follows it.
   */
  private async running(jobId: string, slurmId: string): Promise<void> {
    const dir = this.jobDirectory(jobId);
    const timeoutMs = this.options.startTimeoutMs ?? 60_000;
    for (const until = Date.now() + timeoutMs; Date.now() < until; await delay(Math.min(this.pollMs, 50))) {
      if (this.tracked.get(jobId)?.slurmId !== slurmId) return;
      if ((await exists(wrapperReadyFile(dir, slurmId))) || (await exists(join(dir, `exit-${slurmId}`)))) return;
    }
    this.options.log?.('Slurm has not started the job in time; it counts as started and is followed from here', {
      jobId,
      slurmJob: slurmId,
      waitedSeconds: timeoutMs / 1000,
    });
  }

  async checkpoint(jobId: string): Promise<string> {
    const job = this.tracked.get(jobId);
    if (!job) throw new Error(`job ${jobId} is not running`);
    const state = await slurmJobState(this.options.cli, job.slurmId);
    if (state !== 'RUNNING')
      throw new Error(`Slurm job ${job.slurmId} is ${state ?? 'unknown to Slurm'}, not RUNNING: no checkpoint`);
    const files = new CheckpointFiles(this.jobDirectory(jobId));
    const timeoutMs = this.options.checkpointTimeoutMs ?? 60_000;
    const until = Date.now() + timeoutMs;
    const waitFor = async (file: string, late: string) => {
      while (!(await exists(file))) {
        if (this.tracked.get(jobId) !== job) throw new Error(`job ${jobId} ended before its checkpoint was complete`);
        if (Date.now() > until) throw new Error(late);
        await delay(this.pollMs);
      }
    };
    // A job submitted by this run has a wrapper that marks when it passes the signal on (an adopted job's may predate
    // the mark).
    if (job.since > 0)
      await waitFor(
        wrapperReadyFile(this.jobDirectory(jobId), job.slurmId),
        `Slurm job ${job.slurmId} reported RUNNING, but its batch script had not started within ` +
          `${timeoutMs / 1000} s: no checkpoint`,
      );
    await files.prepareRequest();
    await this.options.cli.run('scancel', ['--batch', `--signal=${this.signal}`, job.slurmId]);
    await waitFor(
      files.marker,
      `Slurm job ${job.slurmId} did not complete its checkpoint (${CheckpointFiles.marker}) within ` +
        `${timeoutMs / 1000} s of SIG${this.signal}`,
    );
    return files.archive();
  }

  /** Cancels the job's Slurm job and waits until it has left its nodes. Idempotent. */
  async stop(jobId: string, _reason: StopReason): Promise<void> {
    const job = this.tracked.get(jobId);
    if (!job) return;
    this.tracked.delete(jobId);
    // Stopped on purpose: a restarted server must not adopt it (written before scancel, so a crash between leaves an
    // orphan to cancel, not a job to adopt).
    await rm(join(this.jobDirectory(jobId), 'slurm-job'), { force: true });
    await this.cancel(job.slurmId);
  }

  stageOut(jobId: string): Promise<void> {
    return stageOutput(this.options.directory, jobId);
  }

  async cleanup(jobId: string, final: boolean): Promise<void> {
    await this.stop(jobId, 'terminated');
    if (final) await new CheckpointFiles(this.jobDirectory(jobId)).removeAll();
  }

  onEvent(listener: (event: ResourceManagerEvent) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Jobs stay in Slurm when the server stops: the next start adopts them. */
  async close(): Promise<void> {}

  /** The job is being run in Slurm by this server. */
  tracks(slurmId: string): boolean {
    return [...this.tracked.values()].some((t) => t.slurmId === slurmId);
  }

  /**
   * What Slurm says of the jobs (`slurmJobs`, listed at `listedAt`): each tracked job that
   * ended is reported once, finished or failed (a node failure naming the node).
   */
  async observe(jobs: readonly SlurmJob[], listedAt: number): Promise<void> {
    for (const [jobId, job] of [...this.tracked]) {
      if (job.since > listedAt) continue;
      const listed = jobs.find((j) => j.id === job.slurmId);
      const outcome = listed ? outcomeOf(listed) : await this.endedUnlisted(jobId, job);
      if (!outcome || outcome.kind === 'active' || this.tracked.get(jobId) !== job) continue;
      this.tracked.delete(jobId);
      const event: ResourceManagerEvent =
        outcome.kind === 'finished'
          ? { type: 'finished', jobId }
          : {
              type: 'failed',
              jobId,
              reason: outcome.reason,
              ...(outcome.nodeFailure && listed?.nodes[0] ? { node: listed.nodes[0] } : {}),
            };
      await Promise.all([...this.listeners].map((listener) => listener(event)));
    }
  }

  /** Cancels every job of the server in Slurm that no agreement runs (after a restart). */
  async cancelOrphans(runs: (jobId: string) => boolean): Promise<string[]> {
    const orphans = (await slurmJobs(this.options.cli)).filter(
      (j) => isActive(j.state) && !this.tracks(j.id) && !runs(j.jobId),
    );
    for (const orphan of orphans) await this.cancel(orphan.id);
    return orphans.map((o) => o.id);
  }

  /** A Slurm job of an earlier server run that this start takes over, if there is one. */
  private async adopt(launch: JobLaunch, same: readonly SlurmJob[]): Promise<boolean> {
    const file = join(this.jobDirectory(launch.jobId), 'slurm-job');
    const recorded = (await readText(file))?.trim();
    if (!recorded) return false;
    const job = same.find((j) => j.id === recorded);
    const sameNodes = job !== undefined && [...job.nodes].sort().join(',') === [...launch.nodes].sort().join(',');
    const ended = job ? !isActive(job.state) : (await this.exitCode(launch.jobId, recorded)) !== undefined;
    if ((job && isActive(job.state) && sameNodes) || ended) {
      this.tracked.set(launch.jobId, { slurmId: recorded, nodes: [...launch.nodes], since: 0 });
      this.options.log?.('adopted the Slurm job of an earlier server run', {
        jobId: launch.jobId,
        slurmJob: recorded,
        state: job?.state ?? 'ended',
      });
      return true;
    }
    // Lost (Slurm forgot it and it left no exit code) or on other nodes than planned now: it runs again.
    await rm(file, { force: true });
    return false;
  }

  /** The outcome of a tracked job Slurm no longer lists: from its exit file. */
  private async endedUnlisted(jobId: string, job: Tracked) {
    const code = await this.exitCode(jobId, job.slurmId);
    if (code === 0) return { kind: 'finished' as const };
    return {
      kind: 'failed' as const,
      nodeFailure: false,
      reason:
        code === undefined
          ? `Slurm no longer knows job ${job.slurmId}, and it left no exit code`
          : `the application failed (exit code ${code})`,
    };
  }

  private async exitCode(jobId: string, slurmId: string): Promise<number | undefined> {
    const text = await readText(join(this.jobDirectory(jobId), `exit-${slurmId}`));
    return text === undefined || text.trim() === '' ? undefined : Number(text.trim());
  }

  private defaultJob(launch: JobLaunch): Application {
    // A session holds its nodes to its window's end; a batch job runs time-scaled.
    const seconds = Math.max(
      0.1,
      launch.session ? launch.expectedRunMs / 1000 : launch.runtimeSeconds * this.options.cpuTimeScale,
    );
    return { executable: exampleJob, arguments: [seconds.toFixed(1)], environment: [] };
  }

  /** scancel, then waits until Slurm has the job ended (its nodes free for what follows). */
  private async cancel(slurmId: string): Promise<void> {
    try {
      await this.options.cli.run('scancel', [slurmId]);
    } catch (error) {
      if (!(error instanceof SlurmCommandFailed)) throw error; // an ended job: nothing to cancel
    }
    for (
      const until = Date.now() + (this.options.stopTimeoutMs ?? 30_000);
      Date.now() < until;
      await delay(this.pollMs)
    ) {
      const state = await slurmJobState(this.options.cli, slurmId);
      if (state === undefined || !isActive(state)) return;
    }
    throw new Error(
      `Slurm job ${slurmId} was cancelled but has not ended within ${(this.options.stopTimeoutMs ?? 30_000) / 1000} s`,
    );
  }
}

/**
 * Slurm's walltime is in minutes: the plan's run, rounded up, with a minute for Slurm's own start-up (the reservation's
 * end bounds it anyway).
 */
export function walltimeMinutes(expectedRunMs: number): number {
  return Math.max(1, Math.ceil(expectedRunMs / 60_000)) + 1;
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function writeWhole(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
