import type { Application } from '../../domain/terms.js';

/**
 * The batch script wsag-server submits for one piece of a job. It is a wrapper
 * around the application, not the application itself, for three reasons:
 *  - the checkpoint signal reaches the application alone: `scancel --batch --signal` goes
 *    to the wrapper, which passes it on (Slurm's --full would also hit the application's
 *    helper processes, and a shell that does not trap the signal would die of it);
 *  - the application's exit code is written to `exit-<Slurm job id>` in the job directory,
 *    so a restarted server learns how a job ended even after Slurm has forgotten it;
 *  - `ready-<Slurm job id>` in the job directory says the wrapper passes the signal on: Slurm
 *    reports a job RUNNING before its batch script runs, and a signal sent in between is
 *    lost (seen under load), so the server signals only once the mark is there;
 *  - the environment is exactly the job's: the server submits with --export=NONE, and the
 *    script sets PATH, the WSAG_* variables of the checkpoint contract and the JSDL ones.
 */
export interface BatchScript {
  jobId: string;
  jobDirectory: string;
  checkpointDirectory: string;
  nodes: readonly string[];
  application: Application;
  /** Signal name or number the application gets for a checkpoint. */
  checkpointSignal: string;
  /** The server's own variables (WSAG_*), set after the application's so these win. */
  environment: Record<string, string>;
}

export const defaultPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** What the wrapper of Slurm job `slurmJobId` leaves in the job directory once it passes the checkpoint signal on. */
export function wrapperReadyFile(jobDirectory: string, slurmJobId: string): string {
  return `${jobDirectory}/ready-${slurmJobId}`;
}

export function batchScript(s: BatchScript): string {
  const app = s.application;
  const exitFile = `${s.jobDirectory}/exit-`;
  const workingDirectory = app.workingDirectory ?? s.jobDirectory;
  const redirects = [
    app.input !== undefined ? ` <${quote(app.input)}` : ' </dev/null',
    app.output !== undefined ? ` >${quote(app.output)}` : '',
    app.error !== undefined ? ` 2>${quote(app.error)}` : '',
  ].join('');
  const signal = s.checkpointSignal;
  return [
    '#!/bin/sh',
    `# wsag-server job ${s.jobId} on ${s.nodes.join(',')} (generated: docs/operations.md, "Slurm")`,
    `export PATH=${quote(defaultPath)}`,
    ...app.environment.map(({ name, value }) => `export ${name}=${quote(value)}`),
    ...Object.entries(s.environment).map(([name, value]) => `export ${name}=${quote(value)}`),
    `cd ${quote(workingDirectory)} || { echo "wsag: cannot enter the working directory ` +
      `${escapeDouble(workingDirectory)}" >&2; echo 111 >${quote(exitFile)}"$SLURM_JOB_ID"; exit 111; }`,
    `${[app.executable, ...app.arguments].map(quote).join(' ')}${redirects} &`,
    'child=$!',
    `trap 'kill -${signal} "$child" 2>/dev/null' ${signal}`,
    `trap 'kill -TERM "$child" 2>/dev/null' TERM`,
    `: >${quote(wrapperReadyFile(s.jobDirectory, ''))}"$SLURM_JOB_ID"`,
    '# wait returns early when a signal arrives; wait again until the application has ended',
    'while kill -0 "$child" 2>/dev/null; do wait "$child"; done',
    'wait "$child"; code=$?',
    `echo "$code" >${quote(exitFile)}"$SLURM_JOB_ID"`,
    'exit "$code"',
    '',
  ].join('\n');
}

/** One shell word, whatever it holds: single quotes, with each ' written as '\''. */
export function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function escapeDouble(value: string): string {
  return value.replace(/[\\"$`]/g, (c) => `\\${c}`);
}
