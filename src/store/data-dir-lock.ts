import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

/** Who holds a data directory, as the holder wrote it down. */
export interface DataDirOwner {
  pid: number;
  host: string;
  startedAt: string;
}

/** A second server process on the same data directory: it would plan the same nodes twice. */
export class DataDirInUse extends Error {
  override readonly name = 'DataDirInUse';
}

const lockFile = 'wsag.lock';
const ownerFile = 'wsag.lock.json';

/**
 * One writer per data directory. The lock is an exclusive SQLite lock (a POSIX advisory
 * lock underneath) on `wsag.lock`, held while the connection is open: the operating system
 * releases it when the process ends, even by kill -9, so a crash never leaves the
 * directory locked. SQLite also sees its own process's locks, so a second server in the
 * same process is refused as well. `wsag.lock.json` names the holder for the refusal.
 */
export class DataDirLock {
  private constructor(
    private readonly db: Database.Database,
    private readonly dir: string,
  ) {}

  static acquire(dir: string, now: Date = new Date()): DataDirLock {
    mkdirSync(dir, { recursive: true });
    const db = new Database(path.join(dir, lockFile));
    try {
      db.pragma('busy_timeout = 0');
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      throw new DataDirInUse(
        `the data directory ${path.resolve(dir)} is in use by another ` +
          `wsag-server (${describeOwner(readOwner(dir))}); stop it, or give this one its own WSAG_DATA_DIR`,
      );
    }
    const owner: DataDirOwner = { pid: process.pid, host: hostname(), startedAt: now.toISOString() };
    writeFileSync(path.join(dir, ownerFile), `${JSON.stringify(owner)}\n`);
    return new DataDirLock(db, dir);
  }

  /** Idempotent. */
  release(): void {
    if (!this.db.open) return;
    rmSync(path.join(this.dir, ownerFile), { force: true });
    this.db.close();
  }
}

function readOwner(dir: string): DataDirOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path.join(dir, ownerFile), 'utf8')) as Partial<DataDirOwner>;
    return typeof owner.pid === 'number'
      ? { pid: owner.pid, host: String(owner.host ?? '?'), startedAt: String(owner.startedAt ?? '?') }
      : undefined;
  } catch {
    return undefined;
  }
}

function describeOwner(owner: DataDirOwner | undefined): string {
  return owner
    ? `process ${owner.pid} on ${owner.host}, started ${owner.startedAt}`
    : 'a process that has not yet said who it is';
}
