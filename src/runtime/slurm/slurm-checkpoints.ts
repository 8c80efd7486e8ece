import { execFile } from 'node:child_process';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exists, highestNumbered } from '../job-directories.js';

const run = promisify(execFile);

/**
 * A job's checkpoints under Slurm (docs/operations.md, "Checkpoint contract"). The
 * application writes its state into the live directory (`<job dir>/checkpoint`, its
 * WSAG_CHECKPOINT_DIR) and then `checkpoint.done`; the server archives the directory as
 * `<job dir>/checkpoints/checkpoint-<n>.tar`, one file that is the checkpoint's reference
 * (and what a migration sends). A restart unpacks the archive into a fresh live directory.
 */
export class CheckpointFiles {
  static readonly marker = 'checkpoint.done';

  constructor(private readonly jobDir: string) {}

  /** WSAG_CHECKPOINT_DIR: where the application writes its state. */
  get live(): string {
    return join(this.jobDir, 'checkpoint');
  }

  get marker(): string {
    return join(this.live, CheckpointFiles.marker);
  }

  private get archives(): string {
    return join(this.jobDir, 'checkpoints');
  }

  /** Before signalling: the live directory exists and holds no completion mark. */
  async prepareRequest(): Promise<void> {
    await mkdir(this.live, { recursive: true });
    await rm(this.marker, { force: true });
  }

  /** The live directory as the next archive, written whole or not at all. */
  async archive(): Promise<string> {
    await mkdir(this.archives, { recursive: true });
    const path = join(this.archives, `checkpoint-${(await this.lastSequence()) + 1}.tar`);
    await run('tar', ['-cf', `${path}.tmp`, '-C', this.live, `--exclude=./${CheckpointFiles.marker}`, '.']);
    await rename(`${path}.tmp`, path);
    return path;
  }

  /** A fresh live directory holding the checkpoint `reference` (an archive), for a restart. */
  async restore(reference: string): Promise<void> {
    await rm(this.live, { recursive: true, force: true });
    await mkdir(this.live, { recursive: true });
    if (!(await exists(reference))) throw new Error(`checkpoint ${reference} is gone`);
    await run('tar', ['-xf', reference, '-C', this.live]);
    await rm(this.marker, { force: true });
  }

  /** An empty live directory (a job that starts from the beginning). */
  async fresh(): Promise<void> {
    await rm(this.live, { recursive: true, force: true });
    await mkdir(this.live, { recursive: true });
  }

  /** Nothing will restart from the job's checkpoints any more (002 section 3.3.4). */
  async removeAll(): Promise<void> {
    await rm(this.archives, { recursive: true, force: true });
    await rm(this.live, { recursive: true, force: true });
  }

  /** The highest archive number (0 when there is none): numbering goes on after a server restart. */
  private lastSequence(): Promise<number> {
    return highestNumbered(this.archives, /^checkpoint-(\d+)\.tar$/);
  }
}
