import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirInUse, DataDirLock } from '../src/store/data-dir-lock.js';
import { startServerProcess } from './support/server-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-one-writer-'));

describe('one writer per data directory (case 6)', () => {
  it('a second server on the same WSAG_DATA_DIR refuses to start, naming the directory and the running process; kill -9 frees it', async () => {
    const dataDir = tempDir();
    const env = { WSAG_CLUSTER_NODES: '4' };
    const first = await startServerProcess(dataDir, env);
    children.push(first.child);

    const refused = await startServerProcess(dataDir, env).then(
      (second) => {
        children.push(second.child);
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(refused).toContain(
      `the data directory ${path.resolve(dataDir)} is in use by another wsag-server (process ${first.child.pid} on ${os.hostname()}`,
    );
    expect(refused).toMatch(/^server exited with 1: wsag-server: /);

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const third = await startServerProcess(dataDir, env);
    children.push(third.child);
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it('holds within one process too, and is free again once released', () => {
    const dir = tempDir();
    const lock = DataDirLock.acquire(dir);
    expect(() => DataDirLock.acquire(dir)).toThrow(DataDirInUse);
    expect(() => DataDirLock.acquire(dir)).toThrow(`(process ${process.pid} on ${os.hostname()}, started `);
    lock.release();
    DataDirLock.acquire(dir).release();
  });
});
