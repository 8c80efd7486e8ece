import type { Application } from '../domain/terms.js';

/**
 * The resource-manager port: what plan execution asks of whatever actually runs jobs on
 * nodes. The plan executor decides *when* (the scheduler's plan); the resource manager does
 * it and reports back what only it can see (a job finished, a job failed). Seed 002 section
 * 4.2.6: the Execution Manager reaches the subsystems through such an API.
 *
 * Implementations: `SimulatedResourceManager` (tests, simulation), `LocalProcessResourceManager`
 * (the default: local child processes and checkpoint files). A batch system plugs in here:
 * for Slurm, `prepare` would create a reservation on the nodes and run the prolog (node
 * health, storage), `start` submit with `sbatch --nodelist --time` (the walltime from
 * `expectedRunMs`, restarts passing the checkpoint), `checkpoint` ask the job's checkpointer
 * (a signal via `scancel --signal`, or the site's checkpoint tool) and return its image,
 * `stop` be `scancel`, `stageOut` copy results out, `cleanup` run the epilog and delete the
 * reservation; `finished` and `failed` come from job state changes (sacct, or slurmctld events).
 */
export interface ResourceManager {
  /** Pre-runtime: set the nodes up for the job (environment, storage; a restored snapshot for a restart). */
  prepare(job: PreparedJob): Promise<void>;
  /** Starts computing, fresh or from a checkpoint this resource manager returned. */
  start(launch: JobLaunch): Promise<void>;
  /** Takes a checkpoint of the running job; resolves to its reference once it is complete and usable for a restart. */
  checkpoint(jobId: string): Promise<string>;
  /**
   * Stops the job's computation (outage, suspension, end of a planned piece, termination). No `finished` or `failed`
   * follows. Idempotent.
   */
  stop(jobId: string, reason: StopReason): Promise<void>;
  /** Hands the results back to the customer (stage-out, Hovestadt 2006, section 3.3.3). */
  stageOut(jobId: string): Promise<void>;
  /** Post-runtime: releases the nodes; `final` also removes the job's checkpoints (nothing will restart from them). */
  cleanup(jobId: string, final: boolean): Promise<void>;
  /** Subscribes to events; returns a function that unsubscribes. */
  onEvent(listener: (event: ResourceManagerEvent) => void | Promise<void>): () => void;
}

export interface PreparedJob {
  jobId: string;
  nodes: readonly string[];
  /** The piece resumes from a checkpoint (t_initrestart instead of t_initnew, formulas 3.1 and 3.2). */
  restart: boolean;
}

export interface JobLaunch {
  jobId: string;
  nodes: readonly string[];
  /** Reference of the checkpoint to resume from; absent: from the beginning. */
  fromCheckpoint?: string;
  /** t_i: the job's runtime estimate, seconds (what a job description gives a batch system). */
  runtimeSeconds: number;
  /**
   * How long the computation left should take from this start when nothing fails (the
   * plan's intervals and checkpoints): a batch system's walltime, and when the simulated
   * resource manager lets the job finish.
   */
  expectedRunMs: number;
  /** What to run (JSDL POSIXApplication); absent: the resource manager's default job. */
  application?: Application;
  /**
   * The holder's session of a promise with a start time (a reservation window, an interactive
   * session): it holds its nodes for `expectedRunMs` on the real clock, to the window's end. A
   * resource manager's default job then runs that long, never time-scaled like a batch job.
   */
  session?: boolean;
}

export type StopReason = 'outage' | 'suspension' | 'piece-end' | 'terminated';

export type ResourceManagerEvent =
  | { type: 'finished'; jobId: string }
  | {
      type: 'failed';
      jobId: string;
      reason: string /** The node whose failure took the job down, if the resource manager knows it. */;
      node?: string;
    };
