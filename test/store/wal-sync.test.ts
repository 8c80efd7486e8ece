import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalSync } from '../../src/store/wal-sync.js';

/** A sync function whose calls the test finishes by hand. */
function manualSync() {
  const calls: Array<{ finish(): void; fail(error: Error): void }> = [];
  const sync = () => new Promise<void>((resolve, reject) => calls.push({ finish: resolve, fail: reject }));
  return { calls, sync };
}

const settled = async (promise: Promise<unknown>) => {
  let state = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('WalSync', () => {
  it('syncs once for a lone write and resolves when that sync is done', async () => {
    const { calls, sync } = manualSync();
    const walSync = new WalSync(sync);
    const durable = walSync.durable();
    expect(calls).toHaveLength(1);
    expect(await settled(durable)).toBe('pending');
    calls[0]?.finish();
    expect(await settled(durable)).toBe('resolved');
  });

  it('makes writes committed while a sync runs wait for one more sync, which they share', async () => {
    const { calls, sync } = manualSync();
    const walSync = new WalSync(sync);
    const first = walSync.durable();
    // Committed after the first sync started: that sync may not cover them.
    const later = [walSync.durable(), walSync.durable(), walSync.durable()];
    expect(calls).toHaveLength(1);
    calls[0]?.finish();
    expect(await settled(first)).toBe('resolved');
    expect(calls).toHaveLength(2);
    for (const p of later) expect(await settled(p)).toBe('pending');
    calls[1]?.finish();
    for (const p of later) expect(await settled(p)).toBe('resolved');
    // Nothing running: the next write starts its own sync.
    walSync.durable();
    expect(calls).toHaveLength(3);
  });

  it('fails the writes a failed sync was to cover, and syncs afresh for the next', async () => {
    const { calls, sync } = manualSync();
    const walSync = new WalSync(sync);
    const first = walSync.durable();
    const second = walSync.durable();
    calls[0]?.fail(new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    expect(calls).toHaveLength(2);
    calls[1]?.finish();
    await expect(second).resolves.toBeUndefined();
  });

  it('commits what is written just before each sync starts, and fails the writes whose commit fails', async () => {
    const { calls, sync } = manualSync();
    const order: string[] = [];
    let failCommit = false;
    const walSync = new WalSync(
      async () => {
        order.push('sync');
        await sync();
      },
      () => {},
      () => {
        order.push('commit');
        if (failCommit) throw new Error('SQLITE_FULL');
      },
    );
    const first = walSync.durable();
    const second = walSync.durable();
    expect(order).toEqual(['commit', 'sync']);
    failCommit = true;
    calls[0]?.finish();
    await first;
    await expect(second).rejects.toThrow('SQLITE_FULL');
    expect(order).toEqual(['commit', 'sync', 'commit']);
    failCommit = false;
    const third = walSync.durable();
    expect(order).toEqual(['commit', 'sync', 'commit', 'commit', 'sync']);
    calls[1]?.finish();
    await expect(third).resolves.toBeUndefined();
  });

  it('syncs a real file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-sync-'));
    const walSync = WalSync.forFile(path.join(dir, 'db-wal'));
    try {
      await walSync.durable();
      expect(fs.existsSync(path.join(dir, 'db-wal'))).toBe(true);
    } finally {
      walSync.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
