import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

export interface WalCheckpointerOptions {
  /** How often the thread checkpoints. */
  intervalMs: number;
  /** The log's length, in frames (pages), past which the connection has it start over. */
  restartFrames: number;
}

/** Every 50 ms; the log starts over past 4,096 frames (16 MB of 4 KiB pages). */
export const defaultCheckpointing: WalCheckpointerOptions = { intervalMs: 50, restartFrames: 4096 };

/** What SQLite does when nobody checkpoints for it: after every commit that leaves 1,000 frames or more. */
const SQLITE_AUTOCHECKPOINT = 1000;

/**
 * Checkpoints a connection's write-ahead log (copies its pages into the database file) on a
 * thread of its own.
 *
 * Why: SQLite checkpoints inside the commit that takes the log past 1,000 pages, on the
 * thread that commits, and with synchronous=NORMAL it syncs the log and the database file
 * there. On the server that thread is the event loop: measured, a third of what an
 * agreement's insert cost it (docs/benchmarks.md). Here the connection's automatic
 * checkpoints are off and a thread with a connection of its own runs PASSIVE checkpoints,
 * which neither wait for nor block the connection's writes.
 *
 * A log is only started over by a write that finds every frame copied, which a thread
 * racing the writes seldom leaves behind; so when the thread reports the log past
 * `restartFrames`, it pauses and the connection checkpoints once itself, between its
 * writes (only the frames since the thread's last pass are left), and its next write starts
 * the log over.
 * Should the thread fail, the connection goes back to SQLite's own checkpoints.
 */
export class WalCheckpointer {
  /** The thread, for tests. */
  readonly thread: Worker;
  private state: 'background' | 'inline' | 'closed' = 'background';
  /** The thread asked for a checkpoint while a transaction was open. */
  private waiting = false;

  constructor(
    private readonly db: Database.Database,
    options: WalCheckpointerOptions = defaultCheckpointing,
  ) {
    db.pragma('wal_autocheckpoint = 0');
    // A small young generation: the thread allocates little, and without --max-semi-space-size V8's default would let
    // it keep 32 MiB.
    this.thread = new Worker(new URL('./wal-checkpoint-worker.mjs', import.meta.url), {
      workerData: { file: db.name, ...options },
      resourceLimits: { maxYoungGenerationSizeMb: 3 },
    });
    // A process may end with its store open (the CLI's commands): the thread does not keep it alive.
    this.thread.unref();
    this.thread.on('message', (report: { log: number } | { error: string }) => {
      if ('error' in report) this.fallBack(`the checkpoint thread failed: ${report.error}`);
      else this.finishCheckpoint();
    });
    this.thread.on('error', (error) => this.fallBack(`the checkpoint thread failed: ${error.message}`));
    this.thread.on('exit', (code) => this.fallBack(`the checkpoint thread ended (exit code ${code})`));
  }

  /** Who checkpoints: the thread, or (after it failed) the connection's own commits. */
  get mode(): 'background' | 'inline' | 'closed' {
    return this.state;
  }

  /** Ends the thread (its connection closes on it); before the connection itself closes. */
  close(): void {
    if (this.state === 'background') this.thread.postMessage('close');
    this.state = 'closed';
  }

  /**
   * Runs the checkpoint the thread asked for if it had to wait for a transaction (the
   * connection's write group) to end; call after each commit.
   */
  committed(): void {
    if (this.waiting) this.finishCheckpoint();
  }

  private finishCheckpoint(): void {
    if (this.state !== 'background' || !this.db.open) return;
    // Inside a transaction the checkpoint cannot run: it runs after the commit (`committed`).
    this.waiting = this.db.inTransaction;
    if (this.waiting) return;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
      this.thread.postMessage('finished');
    } catch (error) {
      this.fallBack(`a checkpoint failed: ${(error as Error).message}`);
    }
  }

  private fallBack(why: string): void {
    if (this.state !== 'background') return;
    this.state = 'inline';
    void this.thread.terminate();
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
    process.emitWarning(`${why}; ${this.db.name} is checkpointed by its commits again`, {
      code: 'WSAG_WAL_CHECKPOINT',
    });
  }
}
