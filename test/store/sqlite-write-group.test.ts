import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditService } from '../../src/engine/audit/audit-service.js';
import { SqliteStore } from '../../src/store/index.js';
import { makeAgreement } from './fixtures/make-agreement.js';

const dir = mkdtempSync(join(tmpdir(), 'wsag-write-group-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `db-${files++}.sqlite`);

/** The agreement ids another connection (another process) can read: what is committed. */
function committedIds(file: string): string[] {
  const raw = new Database(file, { readonly: true });
  try {
    return raw.prepare('SELECT id FROM agreements ORDER BY id').pluck().all() as string[];
  } finally {
    raw.close();
  }
}

const notes = [{ at: new Date(0), actor: 'tester', action: 'created', details: {} }];

describe('SqliteConnection write groups', () => {
  it('commits the writes made while the log is being synced together, and answers them once that commit is synced', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    // a starts a sync at once; b and c come while it runs, so they wait for the next one.
    const writes = ['a', 'b', 'c'].map((id) => store.agreements.insert(makeAgreement({ id }), notes));
    // a is committed; b and c are in the group's open transaction, not yet visible elsewhere.
    expect(committedIds(file)).toEqual(['a']);
    expect(await store.agreements.get('c')).toBeDefined(); // the connection reads its own writes
    await Promise.all(writes);
    expect(committedIds(file)).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  it('keeps the other writes of a group when one of them fails, and the audit chain whole', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    const first = store.agreements.insert(makeAgreement({ id: 'a' }), notes);
    const group = Promise.allSettled([
      store.agreements.insert(makeAgreement({ id: 'b' }), notes),
      store.agreements.insert(makeAgreement({ id: 'b' }), notes),
      store.agreements.insert(makeAgreement({ id: 'c' }), notes),
    ]);
    await first;
    const settled = await group;
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/agreement b already exists/);
    expect(committedIds(file)).toEqual(['a', 'b', 'c']);
    const chain = await new AuditService({ audit: store.audit, agreements: store.agreements }).verifyChain();
    expect(chain).toMatchObject({ entries: 3 });
    expect(chain.firstBroken).toBeUndefined();
    await store.close();
  });

  it('commits a group whose only write failed before asking for durability, so it never holds the write lock', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    const first = store.agreements.insert(makeAgreement({ id: 'a' }), notes);
    // Opens a group (the sync of a's commit is running), then throws before awaiting durability.
    await expect(store.agreements.update(makeAgreement({ id: 'missing' }), notes)).rejects.toThrow(/does not exist/);
    await first;
    // Another process can take the write lock again: nothing is left open.
    const other = new Database(file, { timeout: 0 });
    try {
      for (let waited = 0; waited < 2000; waited += 10) {
        try {
          other.exec('BEGIN IMMEDIATE');
          break;
        } catch {
          await sleep(10);
        }
      }
      expect(other.inTransaction).toBe(true);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    await store.close();
  });
});
