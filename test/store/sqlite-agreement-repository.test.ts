import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteAgreementRepository, SqliteStore } from '../../src/store/index.js';
import { SqliteConnection } from '../../src/store/sqlite-connection.js';
import { migrations } from '../../src/store/sqlite-migrations.js';
import { agreementRepositoryContract } from './agreement-repository.suite.js';
import { makeAgreement, makeFullAgreement } from './fixtures/make-agreement.js';

const dir = mkdtempSync(join(tmpdir(), 'wsag-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `db-${files++}.sqlite`);

agreementRepositoryContract('SqliteAgreementRepository (memory)', () => SqliteAgreementRepository.memory());
agreementRepositoryContract('SqliteAgreementRepository (file)', () => SqliteAgreementRepository.open(freshFile()));

describe('SqliteAgreementRepository on a file', () => {
  it('creates the parent directory and puts the database in WAL mode', async () => {
    const file = join(dir, 'nested', 'deeper', 'wsag.sqlite');
    const repo = SqliteAgreementRepository.open(file);
    await repo.insert(makeAgreement());
    // journal_mode is stored in the file, so a second connection sees it while the first is open.
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT max(version) AS v FROM schema_version').get()).toEqual({ v: migrations.length });
    raw.close();
    await repo.close();
    expect(existsSync(file)).toBe(true);
  });

  it('keeps a page cache of 4 MB, not the 16 MB better-sqlite3 sets', () => {
    const connection = SqliteConnection.open(freshFile());
    expect(connection.statement<[], { cache_size: number }>('PRAGMA cache_size').get()).toEqual({ cache_size: -4000 });
    connection.close();
  });

  it('keeps agreements across close and reopen', async () => {
    const file = freshFile();
    const first = SqliteAgreementRepository.open(file);
    const full = makeFullAgreement();
    await first.insert(full);
    await first.insert(makeAgreement());
    await first.close();

    const second = SqliteAgreementRepository.open(file); // migrations must not re-run
    expect(await second.get(full.id)).toStrictEqual(full);
    expect((await second.list()).map((a) => a.id)).toEqual(['agr-1', 'agr-full']);
    await second.close();
  });

  it('refuses a database written by a newer schema', async () => {
    const file = freshFile();
    await SqliteAgreementRepository.open(file).close();
    const raw = new Database(file);
    raw.prepare('INSERT INTO schema_version (version, applied_at) VALUES (99, 0)').run();
    raw.close();
    expect(() => SqliteAgreementRepository.open(file)).toThrow(/version 99/);
  });

  it('keeps every acknowledged insert, and its audit entry, when the process is killed with SIGKILL', async () => {
    const count = 25;
    const file = freshFile();
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = fileURLToPath(new URL('./fixtures/insert-then-hang.ts', import.meta.url));
    // `node --import tsx`, not `npx tsx`: the tsx CLI runs the script in a grandchild, which
    // SIGKILL on the pid we hold would not reach.
    const child = spawn(process.execPath, ['--import', 'tsx', script, file, String(count)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );

    let acknowledged = 0;
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        acknowledged += chunk
          .toString()
          .split('\n')
          .filter((line) => line === 'inserted').length;
        if (acknowledged >= count) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => reject(new Error(`child exited after ${acknowledged} inserts: ${stderr}`)));
    });
    expect(await exited).toBe('SIGKILL');

    const store = SqliteStore.open(file);
    const ids = (await store.agreements.list()).map((a) => a.id);
    const audited = (await store.audit.entries()).map((e) => e.subject.id);
    await store.close();
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => `crash-${i}`));
    // Each insert's audit entry committed with it.
    expect(audited).toEqual(ids);
  }, 30_000);
});
