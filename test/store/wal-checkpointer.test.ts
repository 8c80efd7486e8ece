import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openServerStore } from '../../src/assembly/store.js';
import { loadConfig } from '../../src/engine/configuration/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { defaultCheckpointing, WalCheckpointer } from '../../src/store/wal-checkpointer.js';
import { auditLogContract } from './audit-log.suite.js';
import { makeFullNegotiation } from './fixtures/make-negotiation.js';
import { negotiationRepositoryContract } from './negotiation-repository.suite.js';

const dir = mkdtempSync(join(tmpdir(), 'wsag-checkpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `db-${files++}.sqlite`);

negotiationRepositoryContract(
  'SqliteNegotiationRepository (checkpoints on a thread)',
  () => SqliteStore.open(freshFile(), { checkpointInBackground: true }).negotiations,
);
auditLogContract('SqliteAuditLog (checkpoints on a thread)', () =>
  SqliteStore.open(freshFile(), { checkpointInBackground: true }),
);

/** A WAL database with a table of rows of 6,000 bytes. */
function walDatabase(): { db: Database.Database; file: string; write: (n: number) => void } {
  const file = freshFile();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO rows (id, body) VALUES (?, ?)');
  return { db, file, write: (n) => insert.run(n, `${n}:`.padEnd(6000, 'x')) };
}

const open: Array<{ db: Database.Database; checkpointer: WalCheckpointer }> = [];
afterEach(() => {
  for (const { db, checkpointer } of open.splice(0)) {
    checkpointer.close();
    db.close();
  }
  vi.restoreAllMocks();
});

/** Resolves once the database file is larger than `size` (or after 10 s): only a checkpoint writes to it, and the tests' connections make none. */
async function fileLargerThan(file: string, size: number): Promise<void> {
  for (let waited = 0; statSync(file).size <= size && waited < 10_000; waited += 10) await sleep(10);
}

/** Resolves once the database file has grown after `write`. */
async function threadCopying(file: string, write: () => void): Promise<void> {
  const before = statSync(file).size;
  write();
  await fileLargerThan(file, before);
}

function checkpointed(db: Database.Database, options: { intervalMs: number; restartFrames: number }): WalCheckpointer {
  const checkpointer = new WalCheckpointer(db, options);
  open.push({ db, checkpointer });
  return checkpointer;
}

describe('WalCheckpointer', () => {
  it("turns the connection's own checkpoints off and copies the log into the database file on its thread", async () => {
    const { db, file, write } = walDatabase();
    checkpointed(db, { intervalMs: 5, restartFrames: Number.MAX_SAFE_INTEGER });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = statSync(file).size;
    for (let n = 0; n < 50; n++) write(n);
    // A pass of the thread may start amid the writes and copy only some: wait for all of them.
    await fileLargerThan(file, before + 50 * 6000);
    expect(statSync(file).size).toBeGreaterThan(before + 50 * 6000);
  });

  it('starts its thread with a small young generation (it allocates little)', () => {
    const { db } = walDatabase();
    expect(checkpointed(db, defaultCheckpointing).thread.resourceLimits?.maxYoungGenerationSizeMb).toBe(3);
  });

  it('runs a checkpoint the thread asked for while a transaction was open once it commits', async () => {
    const { db, file, write } = walDatabase();
    const checkpointer = checkpointed(db, { intervalMs: 5, restartFrames: 64 });
    await threadCopying(file, () => write(-1));
    // As the server's write groups do: every report of the thread arrives inside a transaction.
    for (let n = 0; n < 6000; n++) {
      db.exec('BEGIN IMMEDIATE');
      write(n);
      await new Promise(setImmediate);
      db.exec('COMMIT');
      checkpointer.committed();
    }
    expect(statSync(`${file}-wal`).size).toBeLessThan(20 * 2 ** 20);
    expect(db.prepare('SELECT count(*) FROM rows WHERE id >= 0').pluck().get()).toBe(6000);
  });

  it('has the connection start the log over once it is past restartFrames, though writes never pause', async () => {
    const { db, file, write } = walDatabase();
    checkpointed(db, { intervalMs: 5, restartFrames: 64 });
    await threadCopying(file, () => write(-1));
    // 6,000 rows of more than three pages each: a log of 80 MiB if it never started over. The
    // writes leave the thread no quiet moment to catch up in, so the connection must finish;
    // they come far faster than a server's, so the log gets past restartFrames by more.
    for (let n = 0; n < 6000; n++) {
      write(n);
      await new Promise(setImmediate);
    }
    expect(statSync(`${file}-wal`).size).toBeLessThan(20 * 2 ** 20);
    expect(db.prepare('SELECT count(*) FROM rows WHERE id >= 0').pluck().get()).toBe(6000);
    const reader = new Database(file, { readonly: true });
    expect(reader.prepare('SELECT body FROM rows WHERE id = 5999').pluck().get()).toMatch(/^5999:x+$/);
    reader.close();
  });

  it("goes back to the commits' own checkpoints, with a warning, when its thread ends", async () => {
    const warning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const { db } = walDatabase();
    const checkpointer = checkpointed(db, { intervalMs: 5, restartFrames: 64 });
    await checkpointer.thread.terminate();
    expect(checkpointer.mode).toBe('inline');
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(warning).toHaveBeenCalledWith(
      expect.stringMatching(/^the checkpoint thread ended \(exit code \d+\); .* is checkpointed by its commits again$/),
      { code: 'WSAG_WAL_CHECKPOINT' },
    );
  });

  it('ends its thread when the store closes, without a warning', async () => {
    const warning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const { db } = walDatabase();
    const checkpointer = new WalCheckpointer(db, { intervalMs: 5, restartFrames: 64 });
    const ended = once(checkpointer.thread, 'exit');
    checkpointer.close();
    db.close();
    expect(await ended).toEqual([0]);
    expect(checkpointer.mode).toBe('closed');
    expect(warning).not.toHaveBeenCalled();
  });

  it("checkpoints the server's store (openServerStore) long before SQLite would", async () => {
    const dataDir = mkdtempSync(join(dir, 'data-'));
    const store = await openServerStore(loadConfig({}, { dataDir }));
    const file = join(dataDir, 'wsag.db');
    const before = statSync(file).size;
    // Twenty negotiations are some sixty frames: SQLite's own checkpoint waits for 1,000.
    for (let n = 0; n < 20; n++) await store.negotiations.insert(makeFullNegotiation({ id: `neg-${n}` }));
    await threadCopying(file, () => {});
    expect(statSync(file).size).toBeGreaterThan(before);
    await store.close();
  });
});
