import { cp, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where a resource manager keeps a job's files: `<directory>/<job id>/` (checkpoints, logs,
 * scripts), and `<directory>/results/<job id>/` for what it stages out. Shared by the local
 * process and the Slurm resource managers, so a job's files are found in one place
 * whichever runs it.
 */
export function jobDirectory(directory: string, jobId: string): string {
  if (!/^[A-Za-z0-9._:-]+$/.test(jobId) || jobId.startsWith('.'))
    throw new RangeError(`job id "${jobId}" cannot name a directory`);
  return join(directory, jobId.replaceAll(':', '_'));
}

/** Results the job left in `<job dir>/output/` are copied to `<directory>/results/<job id>/`. */
export async function stageOutput(directory: string, jobId: string): Promise<void> {
  const output = join(jobDirectory(directory, jobId), 'output');
  if (!(await exists(output))) return;
  await cp(output, join(directory, 'results', jobId.replaceAll(':', '_')), { recursive: true });
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The highest number among the files of `dir` that `pattern` (one capture: the number) matches; 0 when none (or no
 * directory).
 */
export async function highestNumbered(dir: string, pattern: RegExp): Promise<number> {
  if (!(await exists(dir))) return 0;
  let last = 0;
  for (const name of await readdir(dir)) {
    const match = pattern.exec(name);
    if (match) last = Math.max(last, Number(match[1]));
  }
  return last;
}
