import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalProcessResourceManager } from '../../src/runtime/local-process-resource-manager.js';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, job, T0 } from '../scheduler/support.js';
import { at, copy, paper, secondsOf, simulatedRuntime } from './support.js';

/**
 * Starting a job from a checkpoint it did not take here: one received from another provider
 * (a migrated job, interval 0) or its own after the server restarted (the intervals it had
 * secured). The paper site: t_init 30 s, 4 checkpoints, t_compint 720 s, t_cp 120 s.
 */
function planned(): { pm: PlanningManager; job: PlannedJob } {
  const pm = new PlanningManager(cluster(8, { timing: paper }));
  const decision = pm.admit(
    job({
      id: 'a',
      kind: 'Deadline',
      level: 'Standard',
      nodes: 4,
      runtimeSeconds: 3600,
      coveredOutages: 1,
      deadline: T0 + 5000_000,
    }),
    T0,
  );
  if (!decision.accepted) throw new Error(decision.reason);
  return { pm, job: pm.job('a') as PlannedJob };
}

describe('PlanExecutor resume points', () => {
  it('starts a job from a given checkpoint: the resource manager gets it, the record has a planned restart, the work left is what follows it', async () => {
    const { pm, job: a } = planned();
    const runtime = simulatedRuntime();
    runtime.executor.execute(
      copy(a),
      pm.shape(a),
      { guaranteeTerms: [] },
      { reference: 'cp-from-before', interval: 2 },
    );
    await runtime.clock.runUntilIdle();
    expect(runtime.rm.callsOf('prepare', 'a').map((c) => c.restart)).toEqual([true]);
    expect(runtime.rm.callsOf('start', 'a').map((c) => c.fromCheckpoint)).toEqual(['cp-from-before']);
    const record = runtime.executor.record('a');
    expect(record?.restarts).toEqual([
      { at: at(30), nodes: a.segments[0]?.nodes, fromInterval: 2, reference: 'cp-from-before', cause: 'planned' },
    ]);
    // Three intervals and two checkpoints after it: 30 + 3 x 720 + 2 x 120.
    expect(secondsOf(record?.completedAt)).toBe(30 + 3 * 720 + 2 * 120);
    expect(runtime.errors).toEqual([]);
  });

  it('takes a resume point only before the job first computes', async () => {
    const { pm, job: a } = planned();
    const runtime = simulatedRuntime();
    runtime.executor.execute(copy(a), pm.shape(a), { guaranteeTerms: [] });
    expect(runtime.executor.resumeFrom('a', { reference: 'received', interval: 0 })).toBe(true);
    expect(runtime.executor.resumeFrom('nobody', { reference: 'received', interval: 0 })).toBe(false);
    await runtime.clock.advanceTo(at(60));
    expect(runtime.rm.callsOf('start', 'a').map((c) => c.fromCheckpoint)).toEqual(['received']);
    expect(runtime.executor.resumeFrom('a', { reference: 'too-late', interval: 0 })).toBe(false);
  });
});

describe('LocalProcessResourceManager after a restart', () => {
  it('numbers new checkpoints after the files a previous server left, so none is overwritten', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wsag-runtime-seq-'));
    const manager = new LocalProcessResourceManager({ directory: dir, cpuTimeScale: 0.01 });
    try {
      const jobDir = manager.jobDirectory('j');
      await mkdir(jobDir, { recursive: true });
      await writeFile(join(jobDir, 'checkpoint-3.json'), '{"format":"wsag-checkpoint/1","job":{"progress":0.5}}\n');
      await manager.start({
        jobId: 'j',
        nodes: ['n1'],
        runtimeSeconds: 600,
        expectedRunMs: 600_000,
        fromCheckpoint: join(jobDir, 'checkpoint-3.json'),
      });
      expect(await manager.checkpoint('j')).toBe(join(jobDir, 'checkpoint-4.json'));
      expect((await readdir(jobDir)).filter((f) => f.startsWith('checkpoint-')).sort()).toEqual([
        'checkpoint-3.json',
        'checkpoint-4.json',
      ]);
    } finally {
      await manager.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
