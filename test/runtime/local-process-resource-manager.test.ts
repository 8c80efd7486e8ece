import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/runtime/clock.js';
import { LocalProcessResourceManager, type CheckpointFile } from '../../src/runtime/local-process-resource-manager.js';
import { PlanExecutor, type ExecutionEvent } from '../../src/runtime/plan-executor.js';
import type { ResourceManagerEvent } from '../../src/runtime/resource-manager.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, job } from '../scheduler/support.js';

/**
 * Real child processes: the demo job computes for runtime x scale (600 s x 0.001 = 0.6 s),
 * checkpoints into files and resumes from them. Nothing here asserts how long anything
 * takes; waits only let the job make some progress.
 */
let dir: string;
let manager: LocalProcessResourceManager | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wsag-runtime-'));
});

afterEach(async () => {
  await manager?.close();
  manager = undefined;
  await rm(dir, { recursive: true, force: true });
});

function events(rm: LocalProcessResourceManager) {
  const seen: ResourceManagerEvent[] = [];
  const waiters: Array<() => void> = [];
  rm.onEvent((e) => {
    seen.push(e);
    for (const w of waiters.splice(0)) w();
  });
  const next = (type: ResourceManagerEvent['type']) =>
    new Promise<ResourceManagerEvent>((resolve) => {
      const check = () => {
        const found = seen.find((e) => e.type === type);
        if (found) resolve(found);
        else waiters.push(check);
      };
      check();
    });
  return { seen, next };
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function untilLogged(path: string, text: string): Promise<string> {
  for (;;) {
    const log = await readFile(path, 'utf8').catch(() => '');
    if (log.includes(text)) return log;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const launch = { jobId: 'job-1', nodes: ['n01', 'n02'], runtimeSeconds: 600, expectedRunMs: 600_000 };

describe('LocalProcessResourceManager', () => {
  it('checkpoints a running job to a file, stops it without leaving a process, and resumes it from the file', async () => {
    manager = new LocalProcessResourceManager({ directory: dir, cpuTimeScale: 0.001 });
    const seen = events(manager);
    await manager.prepare({ jobId: 'job-1', nodes: launch.nodes, restart: false });
    await manager.start(launch);
    const first = manager.pid('job-1');
    expect(alive(first)).toBe(true);
    const log = join(dir, 'job-1', 'demo-job.log');
    await untilLogged(log, 'start progress=0.0000');
    await new Promise((r) => setTimeout(r, 100));

    const path = await manager.checkpoint('job-1');
    expect(path).toBe(join(dir, 'job-1', 'checkpoint-1.json'));
    const saved = JSON.parse(await readFile(path, 'utf8')) as CheckpointFile;
    expect(saved).toMatchObject({ format: 'wsag-checkpoint/1', jobId: 'job-1', sequence: 1, nodes: ['n01', 'n02'] });
    const progress = saved.job.progress as number;
    expect(progress).toBeGreaterThan(0);
    expect(progress).toBeLessThan(1);

    await manager.stop('job-1', 'outage');
    expect(alive(first)).toBe(false);
    expect(manager.pid('job-1')).toBeUndefined();

    await manager.start({ ...launch, nodes: ['n03', 'n02'], fromCheckpoint: path });
    expect(await seen.next('finished')).toEqual({ type: 'finished', jobId: 'job-1' });
    const lines = (await readFile(log, 'utf8')).split('\n');
    // The second run began where the checkpoint left off.
    expect(lines.filter((l) => l.includes(' start '))[1]).toContain(
      `start progress=${progress.toFixed(4)} resumed-from=${path}`,
    );
    expect(seen.seen.filter((e) => e.type === 'failed')).toEqual([]);

    await manager.cleanup('job-1', true);
    expect((await readdir(join(dir, 'job-1'))).filter((f) => f.startsWith('checkpoint-'))).toEqual([]);
  });

  it('reports a job that exits with an error as failed, with its last words', async () => {
    manager = new LocalProcessResourceManager({
      directory: dir,
      command: { executable: process.execPath, args: ['-e', "console.error('input missing'); process.exit(3)"] },
    });
    const seen = events(manager);
    await manager.start(launch);
    expect(await seen.next('failed')).toEqual({ type: 'failed', jobId: 'job-1', reason: 'exit code 3: input missing' });
  });

  it('kills a job that ignores SIGTERM after the grace period', async () => {
    manager = new LocalProcessResourceManager({
      directory: dir,
      killGraceMs: 100,
      checkpointTimeoutMs: 100,
      command: {
        executable: process.execPath,
        args: ['-e', "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)"],
      },
    });
    const seen = events(manager);
    await manager.start(launch);
    const pid = manager.pid('job-1');
    // It does not speak the checkpoint protocol either.
    await expect(manager.checkpoint('job-1')).rejects.toThrow(/did not answer the checkpoint request within 100 ms/);
    await manager.stop('job-1', 'terminated');
    expect(alive(pid)).toBe(false);
    expect(seen.seen).toEqual([]); // a stop is not a failure
  });

  it('says so when the command cannot be started', async () => {
    manager = new LocalProcessResourceManager({
      directory: dir,
      command: { executable: join(dir, 'no-such-program') },
    });
    await expect(manager.start(launch)).rejects.toThrow(/cannot start job job-1 .*no-such-program.*ENOENT/);
    await expect(manager.checkpoint('job-1')).rejects.toThrow(/job job-1 is not running/);
  });

  it('refuses a job id that could escape its directory', () => {
    manager = new LocalProcessResourceManager({ directory: dir });
    expect(() => manager?.jobDirectory('../etc')).toThrow(/cannot name a directory/);
    expect(() => new LocalProcessResourceManager({ directory: dir, cpuTimeScale: 0 })).toThrow(
      /cpuTimeScale must be greater than 0/,
    );
  });

  it('runs a planned job end to end on the real clock: starts, checkpoints to files, completes', async () => {
    // A site measured in tens of milliseconds so the whole plan takes well under a second of real time.
    const pm = new PlanningManager(
      cluster(4, {
        timing: {
          nodeInitSeconds: 0.05,
          storageMountSeconds: 0,
          storageInitSecondsPerGB: 0,
          storageRollbackSecondsPerGB: 0,
          deinitSeconds: 0,
          slowdownFactor: 1,
          checkpointSecondsPerNodeGB: 0.003125,
          snapshotSecondsPerGB: 0,
          // The thesis's count: the job checkpoints whatever slack its deadline has.
          checkpointsByNeed: false,
        },
      }),
    );
    const now = Date.now();
    const decision = pm.admit(
      job({ id: 'demo', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 0.6, arrival: now }),
      now,
    );
    if (!decision.accepted) throw new Error(decision.reason);
    manager = new LocalProcessResourceManager({ directory: dir, cpuTimeScale: 1 });
    const seenEvents: ExecutionEvent[] = [];
    const errors: unknown[] = [];
    const closed = new Promise<void>((resolve) => {
      const executor = new PlanExecutor({
        clock: new SystemClock((e) => errors.push(e)),
        resourceManager: manager as LocalProcessResourceManager,
        listener: (e) => {
          seenEvents.push(e);
          if (e.type === 'closed') resolve();
        },
        onError: (e) => errors.push(e),
      });
      executor.execute(decision.job, pm.shape(decision.job));
    });
    await closed;
    const types = seenEvents.map((e) => e.type);
    expect(types).toContain('completed');
    expect(seenEvents.filter((e) => e.type === 'checkpoint').length).toBeGreaterThanOrEqual(1);
    const log = await readFile(join(dir, 'demo', 'demo-job.log'), 'utf8');
    expect(log).toMatch(/checkpoint progress=0\.\d+/);
    expect(log).toContain('done');
    expect(errors).toEqual([]);
  });
});
