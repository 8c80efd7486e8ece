import { expandHostlist } from './slurm-reservations.js';
import { SlurmCommandFailed, scontrolRecords, type SlurmCli } from './slurm-cli.js';

/**
 * Jobs as Slurm reports them (`squeue --json`, which lists finished jobs too until
 * MinJobAge passes), and what each state means for the plan. The server names its jobs
 * `wsag_<job id>` and owns every job with that prefix.
 */
export interface SlurmJob {
  id: string;
  name: string;
  /** Our job id (the server submits it as the Slurm job's comment). */
  jobId: string;
  state: string;
  reason: string;
  nodes: string[];
  /** The reservation it runs in ('' for none). */
  reservation: string;
  /** The wait status (exit code * 256, or the signal). */
  exitStatus: number;
}

export const jobPrefix = 'wsag_';

/** The Slurm job name of `jobId` (Slurm names may not hold ':' or spaces). */
export function slurmJobName(jobId: string): string {
  return `${jobPrefix}${jobId.replace(/[^A-Za-z0-9_.-]/g, '-')}`;
}

/** The job may still run (or is being set up or torn down). */
export function isActive(state: string): boolean {
  return [
    'PENDING',
    'CONFIGURING',
    'RUNNING',
    'COMPLETING',
    'SUSPENDED',
    'REQUEUED',
    'RESIZING',
    'SIGNALING',
    'STAGE_OUT',
  ].includes(state);
}

export type JobOutcome =
  | { kind: 'active' }
  | { kind: 'finished' }
  | { kind: 'failed'; reason: string; nodeFailure: boolean };

/** What Slurm's state of a job says happened to it. */
export function outcomeOf(job: Pick<SlurmJob, 'id' | 'state' | 'reason' | 'exitStatus'>): JobOutcome {
  if (isActive(job.state)) return { kind: 'active' };
  if (job.state === 'COMPLETED') return { kind: 'finished' };
  const status = job.exitStatus;
  const how = status >= 256 ? `exit code ${status >> 8}` : status > 0 ? `signal ${status & 127}` : '';
  const why: Record<string, string> = {
    FAILED: `the application failed (${how || 'no exit code'})`,
    TIMEOUT: 'the walltime was exceeded',
    NODE_FAIL: 'a node failed',
    CANCELLED: 'it was cancelled in Slurm, not by wsag-server',
    OUT_OF_MEMORY: 'it ran out of memory',
    PREEMPTED: 'it was preempted in Slurm',
    BOOT_FAIL: 'its nodes failed to boot',
    DEADLINE: "Slurm's own deadline passed",
  };
  return {
    kind: 'failed',
    reason: `Slurm job ${job.id} ended ${job.state}: ${why[job.state] ?? job.reason}`,
    nodeFailure: job.state === 'NODE_FAIL' || job.state === 'BOOT_FAIL',
  };
}

interface SqueueJob {
  job_id: number;
  name: string;
  comment?: string;
  job_state: string;
  state_reason?: string;
  nodes?: string;
  required_nodes?: string;
  exit_code?: number;
  resv_name?: string;
}

/** The server's jobs Slurm knows, running or recently ended. */
export async function slurmJobs(cli: SlurmCli): Promise<SlurmJob[]> {
  const answer = await cli.json<{ jobs: SqueueJob[] }>('squeue', ['--states=all']);
  return answer.jobs
    .filter((j) => j.name.startsWith(jobPrefix))
    .map((j) => ({
      id: String(j.job_id),
      name: j.name,
      jobId: j.comment ?? '',
      state: j.job_state,
      reason: j.state_reason ?? '',
      // A pending job has no nodes yet: the ones it asked for stand in.
      nodes: expandHostlist(j.nodes || j.required_nodes || ''),
      reservation: j.resv_name ?? '',
      exitStatus: j.exit_code ?? 0,
    }));
}

/** One job's state (`scontrol show job`); undefined when Slurm no longer knows it. */
export async function slurmJobState(cli: SlurmCli, id: string): Promise<string | undefined> {
  try {
    return scontrolRecords(await cli.run('scontrol', ['show', 'job', id, '--oneliner']))[0]?.JobState;
  } catch (error) {
    if (error instanceof SlurmCommandFailed && /Invalid job id/i.test(error.stderr)) return undefined;
    throw error;
  }
}
