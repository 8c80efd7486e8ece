import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeScheduling, scheduleProcess } from '../../src/runtime/cpu-scheduling.js';
import { startServerProcess } from '../support/server-process.js';

/** Linux's scheduling policy of each thread of `pid` (/proc's stat, field 41): 0 SCHED_OTHER, 3 SCHED_BATCH. */
function threadPolicies(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
  });
}

const SCHED_OTHER = 0;
const SCHED_BATCH = 3;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the server threads' CPU scheduling (WSAG_CPU_SCHEDULING)", () => {
  it('leaves the policy alone when asked, or off Linux, and says why', () => {
    expect(scheduleProcess('normal')).toEqual({ policy: 'normal', why: 'WSAG_CPU_SCHEDULING is normal' });
    const elsewhere = scheduleProcess('batch', process.pid, 'darwin');
    expect(elsewhere).toEqual({ policy: 'normal', why: 'SCHED_BATCH is a Linux policy and this is darwin' });
    expect(describeScheduling(elsewhere)).toBe('the default (SCHED_BATCH is a Linux policy and this is darwin)');
  });

  it('puts every thread of a process under SCHED_BATCH with chrt, and names the failure for a process that is gone', async () => {
    // Node's threads (V8's, libuv's) are running once it has printed.
    const child = spawn(process.execPath, ['-e', 'console.log("ready"); setTimeout(() => {}, 30_000)'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      await new Promise((resolve) => child.stdout.once('data', resolve));
      const pid = child.pid as number;
      expect(threadPolicies(pid).every((policy) => policy === SCHED_OTHER)).toBe(true);
      expect(scheduleProcess('batch', pid)).toEqual({ policy: 'SCHED_BATCH' });
      const policies = threadPolicies(pid);
      expect(policies.length).toBeGreaterThan(1);
      expect(policies.every((policy) => policy === SCHED_BATCH)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((resolve) => child.once('exit', resolve));
    const gone = scheduleProcess('batch', child.pid as number);
    expect(gone.policy).toBe('normal');
    expect('why' in gone && gone.why).toMatch(/^chrt failed: /);
  });

  it.each([
    ['normal (the default)', {}, SCHED_OTHER],
    ['batch', { WSAG_CPU_SCHEDULING: 'batch' }, SCHED_BATCH],
  ] as const)(
    'npm start runs every thread, the document threads included, with policy %s',
    async (_name, env, expected) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-sched-'));
      dirs.push(dir);
      const { child } = await startServerProcess(dir, { ...env, WSAG_DOCUMENT_THREADS: '1' });
      try {
        const policies = threadPolicies(child.pid as number);
        expect(policies.length).toBeGreaterThan(5);
        expect(new Set(policies)).toEqual(new Set([expected]));
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    },
    60_000,
  );
});
