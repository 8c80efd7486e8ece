import { describe, expect, it } from 'vitest';
import { planFor } from '../../src/scheduler/checkpoint-plan.js';
import { expectedCompletion, pieceMs, shapeOf } from '../../src/scheduler/job-timing.js';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { plannedPieces, remainingRunMs } from '../../src/runtime/piece-timeline.js';
import { admitted, cluster, hours, job, reservedAtTwoHours, T0 } from '../scheduler/support.js';
import { at, completionTerm, copy, failNode, paper, secondsOf, simulatedRuntime } from './support.js';

/**
 * The scheduler's worked example (002 section 3.4): 3600 s on 4 nodes covering two outages
 * gets 7 checkpoints, t_compint 450 s, t_cp 120 s; with t_init 30 s the i-th checkpoint is
 * written at 30 + 570 i s and the job completes at 30 + 3600 + 7 x 120 = 4470 s (t_minslot).
 */
function worked(level: 'Standard' | 'Enhanced' = 'Standard') {
  const pm = new PlanningManager(cluster(8, { timing: paper }));
  const decision = pm.admit(
    job({
      id: 'a',
      kind: 'Deadline',
      level,
      nodes: 4,
      runtimeSeconds: 3600,
      coveredOutages: 2,
      deadline: T0 + hours(2),
    }),
    T0,
  );
  if (!decision.accepted) throw new Error(decision.reason);
  return pm;
}

function execute(pm: PlanningManager, runtime = simulatedRuntime()) {
  const planned = pm.job('a') as PlannedJob;
  runtime.executor.execute(copy(planned), pm.shape(planned), { guaranteeTerms: [completionTerm(at(7200))] });
  return runtime;
}

describe('planned phases of a piece', () => {
  it('times checkpoints and the end as the scheduler does', () => {
    const pm = worked();
    const planned = pm.job('a') as PlannedJob;
    const [piece] = plannedPieces(planned, pm.shape(planned));
    expect(
      piece?.checkpoints.map((c) => [secondsOf(new Date(c.begin)), secondsOf(new Date(c.end)), c.interval]),
    ).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => [30 + 570 * i - 120, 30 + 570 * i, i]));
    expect(secondsOf(new Date(piece?.computeEnd as number))).toBe(4470);
    // The same sum as the scheduler's pieceMs and its expected completion.
    expect(piece?.deinitEnd).toBe(T0 + pieceMs(pm.shape(planned), planned.checkpoints, 8, false, 0, true));
    expect(piece?.deinitEnd).toBe(expectedCompletion(planned, pm.shape(planned)));
    // Everything left from the start: 8 x 450 + 7 x 120 = 4440 s; after 3 secured intervals 5 x 450 + 4 x 120.
    expect(remainingRunMs(planned, 0)).toBe(4440_000);
    expect(remainingRunMs(planned, 3)).toBe(2730_000);
  });
});

describe('PlanExecutor', () => {
  it('runs the phases at the planned times: pre-runtime, start, 7 checkpoints, stage-out, post-runtime', async () => {
    const runtime = execute(worked());
    await runtime.clock.runUntilIdle();
    const phases = runtime.events
      .filter((e) => e.type === 'phase')
      .map((e) => (e.type === 'phase' ? [e.phase, secondsOf(e.at)] : []));
    expect(phases).toEqual([
      ['PreRuntime', 0],
      ['Running', 30],
      ['StageOut', 4470],
      ['PostRuntime', 4470],
    ]);
    const record = runtime.executor.record('a');
    expect(record?.checkpoints.map((c) => secondsOf(c.at))).toEqual([600, 1170, 1740, 2310, 2880, 3450, 4020]);
    expect(runtime.rm.calls.map((c) => `${c.op}@${secondsOf(c.at)}`)).toEqual([
      'prepare@0',
      'start@30',
      ...[480, 1050, 1620, 2190, 2760, 3330, 3900].map((t) => `checkpoint@${t}`), // writing begins t_cp before each counts
      'stageOut@4470',
      'cleanup@4470',
    ]);
    expect(runtime.rm.callsOf('cleanup')[0]?.final).toBe(true);
    expect(runtime.events.map((e) => e.type).slice(-4)).toEqual(['completed', 'fulfilled', 'phase', 'closed']);
    expect(runtime.errors).toEqual([]);
  });

  it('loses a checkpoint that was being written when the node failed, as the scheduler does', async () => {
    const pm = worked();
    const runtime = execute(pm);
    // The 3rd checkpoint is written from 1620 s to 1740 s; n01 fails at 1680 s.
    await failNode(runtime, pm, 'n01', 1680, 'a');
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('a');
    const ran = (pm.job('a') as PlannedJob).segments[0];
    expect(ran?.intervals).toBe(2); // the scheduler counted two secured intervals
    expect(record?.restarts[0]?.fromInterval).toBe(2);
    // Restart: 1680 + 30; six intervals left: 1710 + 6 x 450 + 5 x 120 = 5010 s.
    expect(secondsOf(record?.completedAt)).toBe(5010);
    expect(record?.checkpoints.map((c) => c.interval)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("runs a job in planned pieces: stops after a piece's last checkpoint and resumes from it", async () => {
    const site = cluster(8, { timing: paper }).timing;
    const spec = job({
      id: 'p',
      kind: 'Deadline',
      level: 'Standard',
      nodes: 2,
      runtimeSeconds: 3600,
      coveredOutages: 2,
    });
    const shape = shapeOf(spec, site);
    const planned: PlannedJob = {
      spec,
      checkpoints: planFor(shape.timing, 7),
      outagesLeft: 2,
      segments: [
        // Piece 1: 3 intervals and 3 checkpoints, done at 30 + 3 x 570 = 1740 s.
        { start: T0, end: at(2000).getTime(), nodes: ['n01', 'n02'], spare: [], restart: false, intervals: 3 },
        // Piece 2 from 3000 s: restart 30 s, 5 intervals, 4 checkpoints: 3030 + 5 x 450 + 4 x 120 = 5760 s.
        {
          start: at(3000).getTime(),
          end: at(6000).getTime(),
          nodes: ['n03', 'n04'],
          spare: [],
          restart: true,
          intervals: 5,
        },
      ],
    };
    const runtime = simulatedRuntime();
    runtime.executor.execute(planned, shape);
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('p');
    expect(record?.phases.map((p) => [p.phase, secondsOf(p.start)])).toEqual([
      ['PreRuntime', 0],
      ['Running', 30],
      ['PostRuntime', 1740],
      ['Idle', 1740],
      ['PreRuntime', 3000],
      ['Running', 3030],
      ['StageOut', 5760],
      ['PostRuntime', 5760],
    ]);
    expect(record?.restarts).toEqual([
      {
        at: at(3030),
        nodes: ['n03', 'n04'],
        fromInterval: 3,
        reference: record?.checkpoints[2]?.reference,
        cause: 'planned',
      },
    ]);
    expect(record?.checkpoints.map((c) => [secondsOf(c.at), c.interval])).toEqual([
      [600, 1],
      [1170, 2],
      [1740, 3],
      [3600, 4],
      [4170, 5],
      [4740, 6],
      [5310, 7],
    ]);
    expect(runtime.rm.callsOf('stop').map((c) => [c.reason, secondsOf(c.at)])).toEqual([['piece-end', 1740]]);
    expect(runtime.rm.callsOf('cleanup').map((c) => c.final)).toEqual([false, true]);
  });

  it('a job given up while a piece is being deinitialised closes after its own post-runtime', async () => {
    const site = cluster(8, { timing: { ...paper, deinitSeconds: 15 } }).timing;
    const spec = job({
      id: 'p',
      kind: 'Deadline',
      level: 'Standard',
      nodes: 2,
      runtimeSeconds: 3600,
      coveredOutages: 2,
    });
    const shape = shapeOf(spec, site);
    const planned: PlannedJob = {
      spec,
      checkpoints: planFor(shape.timing, 7),
      outagesLeft: 2,
      // One piece of 3 intervals: its last checkpoint is written at 1740 s, deinitialised by 1755 s.
      segments: [
        { start: T0, end: at(2000).getTime(), nodes: ['n01', 'n02'], spare: [], restart: false, intervals: 3 },
      ],
    };
    const runtime = simulatedRuntime();
    runtime.executor.execute(planned, shape);
    await runtime.clock.advanceTo(at(1745));
    await runtime.executor.abandon('p', 'terminated by the initiator');
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('p');
    expect(record?.phases.map((p) => [p.phase, secondsOf(p.start), secondsOf(p.end)])).toEqual([
      ['PreRuntime', 0, 30],
      ['Running', 30, 1740],
      ['PostRuntime', 1740, 1760],
    ]);
    expect(secondsOf(record?.closedAt)).toBe(1760); // given up at 1745 s, deinitialised for 15 s
    expect(runtime.errors).toEqual([]);
  });

  it('suspends a running job whose piece a re-plan removed, and records the resumption', async () => {
    const pm = worked();
    const runtime = execute(pm);
    await runtime.clock.advanceTo(at(1000));
    const planned = copy(pm.job('a') as PlannedJob);
    // The scheduler moves the rest of the job (1 interval secured) to 3000 s on other nodes.
    const moved: PlannedJob = {
      ...planned,
      segments: [
        { ...(planned.segments[0] as PlannedJob['segments'][number]), end: at(1000).getTime(), intervals: 1 },
        {
          start: at(3000).getTime(),
          end: at(8000).getTime(),
          nodes: ['n05', 'n06', 'n07', 'n08'],
          spare: [],
          restart: true,
          intervals: 7,
        },
      ],
    };
    await runtime.executor.replan(moved);
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('a');
    expect(record?.suspensions).toEqual([
      { at: at(1000), reason: 'the scheduler re-planned the job', resumedAt: at(3030) },
    ]);
    expect(record?.restarts[0]).toMatchObject({
      fromInterval: 1,
      cause: 'suspension',
      nodes: ['n05', 'n06', 'n07', 'n08'],
    });
    expect(runtime.rm.callsOf('stop').map((c) => c.reason)).toEqual(['suspension']);
    // 3030 + 7 x 450 + 6 x 120 = 6900 s.
    expect(secondsOf(record?.completedAt)).toBe(6900);
  });

  it('keeps a running piece the new plan keeps', async () => {
    const pm = worked();
    const runtime = execute(pm);
    await runtime.clock.advanceTo(at(1000));
    await runtime.executor.replan(copy(pm.job('a') as PlannedJob));
    await runtime.clock.runUntilIdle();
    expect(runtime.executor.record('a')?.suspensions).toEqual([]);
    expect(runtime.rm.callsOf('prepare')).toHaveLength(1);
    expect(secondsOf(runtime.executor.record('a')?.completedAt)).toBe(4470);
  });

  it('stops a piece that yields where the new plan ends it sooner, and runs the rest later', async () => {
    const pm = new PlanningManager(cluster(4, { timing: paper }));
    const spec = job({ id: 'a', kind: 'BestEffort', level: 'Legacy', nodes: 2, runtimeSeconds: 3600 });
    const piece = {
      start: T0,
      end: at(3630).getTime(),
      nodes: ['n01', 'n02'],
      spare: [],
      restart: false,
      intervals: 1,
    };
    const planned: PlannedJob = {
      spec,
      segments: [{ ...piece, yields: true }],
      checkpoints: planFor(shapeOf(spec, pm.cluster.timing).timing, 0),
      outagesLeft: 0,
    };
    const runtime = simulatedRuntime();
    runtime.executor.execute(copy(planned), shapeOf(spec, pm.cluster.timing), { guaranteeTerms: [] });
    await runtime.clock.advanceTo(at(1000));
    // SLA work needs n01 from 2000 s: the job stops then and goes on at 5000 s on other nodes, from the start.
    await runtime.executor.replan({
      ...planned,
      segments: [
        { ...piece, end: at(2000).getTime(), intervals: 0, yields: true },
        { ...piece, start: at(5000).getTime(), end: at(8630).getTime(), nodes: ['n03', 'n04'] },
      ],
    });
    await runtime.clock.runUntilIdle();
    const stops = runtime.rm.callsOf('stop');
    expect(stops.map((c) => c.reason)).toEqual(['piece-end']);
    expect(runtime.rm.callsOf('start').map((c) => c.nodes)).toEqual([
      ['n01', 'n02'],
      ['n03', 'n04'],
    ]);
    expect(secondsOf(runtime.executor.record('a')?.completedAt)).toBe(8630);
  });

  it('runs best-effort work the scheduler started in a short gap: a piece to its checkpoint, the rest later', async () => {
    const { pm } = reservedAtTwoHours();
    const long = admitted(
      pm,
      job({ id: 'a', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 4 * 3600 }),
    );
    const [piece, rest] = long.segments;
    const runtime = simulatedRuntime();
    runtime.executor.execute(copy(long), pm.shape(long), { guaranteeTerms: [] });
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('a');
    expect(runtime.rm.callsOf('stop').map((c) => c.reason)).toEqual(['piece-end']);
    expect(record?.restarts).toEqual([
      expect.objectContaining({ fromInterval: piece?.intervals, cause: 'planned', nodes: rest?.nodes }),
    ]);
    expect(record?.checkpoints.filter((c) => c.at.getTime() <= (piece?.end as number))).toHaveLength(
      piece?.intervals as number,
    );
    expect(record?.completedAt?.getTime()).toBeGreaterThan(rest?.start as number);
    expect(record?.completedAt?.getTime()).toBeLessThanOrEqual(rest?.end as number);
  });

  it('records a checkpoint the resource manager could not take as missed', async () => {
    const runtime = simulatedRuntime();
    runtime.rm.failNext('checkpoint', 'checkpointer out of space');
    execute(worked('Standard'), runtime);
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('a');
    expect(record?.missedCheckpoints).toEqual([{ at: at(600), interval: 1, reason: 'checkpointer out of space' }]);
    expect(record?.checkpoints.map((c) => c.interval)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(runtime.events.find((e) => e.type === 'checkpointMissed')).toMatchObject({
      interval: 1,
      reason: 'checkpointer out of space',
    });
  });

  it('a job that fails by itself ends; one the resource manager reports failed with a node is an outage', async () => {
    const runtime = execute(worked());
    await runtime.clock.advanceTo(at(700));
    await runtime.rm.failJob('a', 'exit code 2');
    await runtime.clock.runUntilIdle();
    expect(runtime.executor.record('a')?.failure).toEqual({ at: at(700), cause: 'application', reason: 'exit code 2' });
    expect(runtime.events.map((e) => e.type)).toContain('closed');

    const other = execute(worked());
    await other.clock.advanceTo(at(700));
    await other.rm.failJob('a', 'node lost', 'n03');
    expect(other.executor.record('a')?.outages).toEqual([{ at: at(700), node: 'n03' }]);
    expect(other.executor.record('a')?.failure).toBeUndefined();
  });

  it('completes early when the job finishes early: no more checkpoints', async () => {
    const runtime = execute(worked());
    await runtime.clock.advanceTo(at(1200));
    await runtime.rm.finishJob('a');
    await runtime.clock.runUntilIdle();
    expect(secondsOf(runtime.executor.record('a')?.completedAt)).toBe(1200);
    expect(runtime.rm.callsOf('checkpoint')).toHaveLength(2);
  });

  it('reports an overrun at the booked end of the last piece', async () => {
    const runtime = simulatedRuntime();
    runtime.rm.setRunFactor('a', 1.1);
    execute(worked(), runtime);
    await runtime.clock.runUntilIdle();
    // Booked to 4470 s; the job needs 4440 x 1.1 = 4884 s from 30 s.
    expect(runtime.events.filter((e) => e.type === 'overrun').map((e) => secondsOf(e.at))).toEqual([4470]);
    expect(secondsOf(runtime.executor.record('a')?.completedAt)).toBe(4914);
  });

  it('a resource manager that cannot prepare the nodes fails the job', async () => {
    const runtime = simulatedRuntime();
    runtime.rm.failNext('prepare', 'node n02 does not answer');
    execute(worked(), runtime);
    await runtime.clock.runUntilIdle();
    expect(runtime.executor.record('a')?.failure).toEqual({
      at: at(0),
      cause: 'resource-manager',
      reason: 'prepare failed: node n02 does not answer',
    });
    expect(runtime.executor.record('a')?.closedAt).toEqual(at(0));
  });

  it('a job given up before it started closes without running', async () => {
    const runtime = execute(worked());
    // Given up at T0, before the clock runs the piece's start.
    await runtime.executor.abandon('a', 'terminated by the initiator');
    await runtime.clock.runUntilIdle();
    expect(runtime.rm.calls).toEqual([]);
    expect(runtime.executor.record('a')).toMatchObject({
      phases: [],
      failure: { cause: 'abandoned', reason: 'terminated by the initiator' },
      closedAt: at(0),
    });
  });

  it('refuses to execute a job twice and to re-plan one it does not know', async () => {
    const pm = worked();
    const runtime = execute(pm);
    const planned = pm.job('a') as PlannedJob;
    expect(() => runtime.executor.execute(planned, pm.shape(planned))).toThrow(/job a is already being executed/);
    await expect(runtime.executor.replan({ ...planned, spec: { ...planned.spec, id: 'zz' } })).rejects.toThrow(
      /job zz is not being executed/,
    );
  });
});
