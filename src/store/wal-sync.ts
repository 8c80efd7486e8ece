import fs from 'node:fs';
import { promisify } from 'node:util';

const fdatasync = promisify(fs.fdatasync);

/**
 * Makes SQLite's commits durable off the event loop, several at a time.
 *
 * With synchronous=FULL, SQLite calls fdatasync on the write-ahead log at every COMMIT,
 * and better-sqlite3 runs it on the event loop: under load that wait was the largest
 * single cost of a CreateAgreement. The connection therefore commits with
 * synchronous=NORMAL (in WAL mode a commit is then an append that survives the process
 * being killed, though not yet a power cut), and each write waits here until an
 * fdatasync of the log, started after its commit, has finished (fsync works on the file,
 * whichever descriptor asks). One fdatasync runs at a time on libuv's thread pool; writes
 * made while it runs share the next one, and SqliteConnection commits them in one
 * transaction just before it (`commit`), as in a database's group commit. PgConnection
 * groups PostgreSQL's log flushes the same way, with a flush of its own for `sync`.
 */
export class WalSync {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly sync: () => Promise<void>,
    readonly close: () => void = () => {},
    /** Commits what is written but not yet committed (SqliteConnection's write group), just before each sync starts. */
    private readonly commit: () => void = () => {},
  ) {}

  /** A WalSync for the log at `walFile`, opened once: SQLite keeps the file while a connection is open. */
  static forFile(walFile: string, commit?: () => void): WalSync {
    const fd = fs.openSync(walFile, fs.constants.O_RDONLY | fs.constants.O_CREAT, 0o644);
    return new WalSync(
      () => fdatasync(fd),
      () => fs.closeSync(fd),
      commit,
    );
  }

  /** Resolves once everything written before the call is committed and on disk. */
  durable(): Promise<void> {
    if (!this.running) return this.start();
    // The running sync may have started before the caller's commit: the caller needs the one after it.
    this.next ??= this.running.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  private startNext(): Promise<void> {
    this.next = undefined;
    return this.start();
  }

  private start(): Promise<void> {
    let synced: Promise<void>;
    try {
      this.commit();
      synced = this.sync();
    } catch (error) {
      synced = Promise.reject(error);
    }
    const running: Promise<void> = synced.finally(() => {
      if (this.running === running) this.running = undefined;
    });
    this.running = running;
    return running;
  }
}
