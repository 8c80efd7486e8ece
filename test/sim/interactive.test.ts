import { describe, expect, it } from 'vitest';
import { compareInteractive, parseCluster, parseWorkload } from '../../src/sim/index.js';
import { withWarmPool } from '../../src/sim/interactive.js';
import { chosenByHash } from '../../src/sim/selection.js';
import { wsag } from '../cli/support.js';
import { noSetUp } from './support.js';

/**
 * Interactive jobs in the simulator (docs/scheduler.md). Four nodes, no set-up times. A
 * best-effort job takes all four from 0 for two hours; at 600 s a 2-node job arrives. With
 * --interactive 1 every job is interactive, so the workload is built with ids the hash
 * leaves out for the batch job and takes for the session (checked below).
 */
const cluster = parseCluster({
  nodes: [{ count: 4, prefix: 'n', memoryGB: 32, cpus: 8 }],
  timing: noSetUp,
});
const share = 0.5;
const salt = 0x1a7e;
const batchId = ['b0', 'b1', 'b2', 'b3', 'b4', 'b5'].find((id) => !chosenByHash(id, share, salt)) as string;
const sessionId = ['s0', 's1', 's2', 's3', 's4', 's5'].find((id) => chosenByHash(id, share, salt)) as string;
const workload = parseWorkload({
  jobs: [
    { id: batchId, arrival: 0, kind: 'best-effort', level: 'Legacy', nodes: 4, estimate: 7200 },
    { id: sessionId, arrival: 600, kind: 'deadline', level: 'Standard', nodes: 2, estimate: 1200, deadline: 86_400 },
  ],
});

describe('wsag sim --interactive', () => {
  it('suspending the batch job starts the session at once; taking free nodes only refuses it', () => {
    const c = compareInteractive(workload, cluster, { share, boundSeconds: 5 });
    expect(c.freeOnly).toMatchObject({ interactive: 1, started: 0, refused: 1, suspensions: 0 });
    // The batch job ran 600 s on 4 nodes and has no checkpoints: it starts again after the session
    // (1800 s) and needs 600 s x 4 nodes more; it now ends at 1800 + 7200 instead of 7200: impact 1800 / 7200.
    expect(c.suspend).toMatchObject({
      interactive: 1,
      started: 1,
      refused: 0,
      startDelay: { p50: 0, p99: 0, max: 0, mean: 0 },
      suspensions: 1,
      suspendedJobs: 1,
      lostNodeHours: 0.67,
      meanRuntimeImpact: 0.25,
    });
  });

  it('on a site whose nodes take 30 s to prepare, starts sessions only on nodes kept warm', () => {
    const slow = parseCluster({
      nodes: [{ count: 4, prefix: 'n', memoryGB: 32, cpus: 8 }],
      timing: {
        nodeInitSeconds: 30,
        storageInitSecondsPerGB: 0,
        storageRollbackSecondsPerGB: 0,
        storageMountSeconds: 0,
        deinitSeconds: 0,
        handoverSeconds: 1,
        slowdownFactor: 1,
      },
    });
    // No warm node: 31 s of preparation, more than the 5 s bound, whatever is suspended.
    expect(compareInteractive(workload, slow, { share, boundSeconds: 5 }).suspend).toMatchObject({
      started: 0,
      refused: 1,
      suspensions: 0,
    });
    // The last two nodes kept warm: the best-effort job running there is suspended and the 2-node session starts on them.
    const warm = compareInteractive(workload, slow, { share, boundSeconds: 5, warmNodes: 2 });
    expect(warm.suspend).toMatchObject({ started: 1, refused: 0, suspensions: 1 });
    expect(warm.freeOnly).toMatchObject({ started: 0, refused: 1 });
    expect(withWarmPool(slow, 2).nodes.map((n) => n.warm === true)).toEqual([false, false, true, true]);
  });

  it("caps the sessions and prints both policies beside CrossBroker's figures", async () => {
    // A 1-node session of 600 s: the batch job needs all 4 nodes, so it starts again at 1200 s: impact (600 + 600) / 7200.
    const c = compareInteractive(workload, cluster, { share, boundSeconds: 5, maxNodes: 1, maxSeconds: 600 });
    expect(c.suspend).toMatchObject({ started: 1, suspensions: 1, meanRuntimeImpact: 1200 / 7200 });
    const result = await wsag([
      'sim',
      '--workload',
      'workloads/small.json',
      '--interactive',
      '0.5',
      '--session-nodes',
      '2',
    ]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(
      'Interactive jobs (docs/scheduler.md): 10 jobs, 50.0 % interactive, at most 2 nodes, start within 5 s, 1 warm node',
    );
    expect(result.out.at(-2)).toMatch(/^CrossBroker \(Fernández del Castillo 2008/);
    expect((await wsag(['sim', '--workload', 'workloads/small.json', '--interactive', '0'])).err[0]).toBe(
      'error: --interactive expects the share of jobs made interactive, above 0 and at most 1, got "0"',
    );
  });
});
