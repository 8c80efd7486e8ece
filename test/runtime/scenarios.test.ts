import { describe, expect, it } from 'vitest';
import { completesAgreement, serviceTermStateOf } from '../../src/domain/execution.js';
import { postRuntimeReport } from '../../src/domain/post-runtime-report.js';
import type { GuaranteeLevel, ServiceRequest } from '../../src/domain/terms.js';
import type { PlannedJob } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { cluster, hours, job, minutes, T0 } from '../scheduler/support.js';
import { at, completionTerm, copy, failNode, paper, secondsOf, simulatedRuntime } from './support.js';

/**
 * The node-failure acceptance scenarios, run with the real Planning Manager, the simulated
 * clock and the simulated resource manager. The job: 4 nodes, 3600 s, one covered outage,
 * deadline 5000 s after the start; the site is the scheduler's paper site (t_init 30 s,
 * t_cp 120 s, no deinitialisation, no slowdown). Node n01 fails at 1800 s, halfway.
 *
 * Figures by hand: with one covered outage the optimum is 4 checkpoints (3.16: x = -1 +
 * sqrt(3600 / 120) = 4.48; 4 and 5 tie at 4800 s, the fewer win), t_compint = 3600 / 5 =
 * 720 s; checkpoint i is written at 30 + 840 i s (870, 1710, 2550, 3390). The worst case
 * 30 + 3600 + 4 x 120 + (720 + 30 + 120) = 4980 s fits the deadline of 5000 s. A Legacy job
 * has no checkpoints: 30 + 3600 = 3630 s, also within the deadline without a failure.
 */
const deadline = at(5000);
const term = completionTerm(deadline);

function admitted(level: GuaranteeLevel, otherNodesBusy = 0): PlanningManager {
  const pm = new PlanningManager(cluster(8, { timing: paper }));
  const decision = pm.admit(
    job({
      id: 'a',
      kind: 'Deadline',
      level,
      nodes: 4,
      runtimeSeconds: 3600,
      coveredOutages: 1,
      deadline: deadline.getTime(),
    }),
    T0,
  );
  if (!decision.accepted) throw new Error(decision.reason);
  if (otherNodesBusy > 0) {
    // A reservation takes the other free nodes for three hours: no spare capacity is left in the cluster.
    // Its window starts a minute ahead, so its nodes can be prepared (31 s on the paper site) before it.
    const r = pm.admit(
      job({
        id: 'r',
        kind: 'Reservation',
        level: 'Legacy',
        nodes: otherNodesBusy,
        runtimeSeconds: 3 * 3600,
        window: { start: T0 + minutes(1), end: T0 + hours(3) },
      }),
      T0,
    );
    if (!r.accepted) throw new Error(r.reason);
  }
  return pm;
}

function start(pm: PlanningManager) {
  const runtime = simulatedRuntime();
  const planned = pm.job('a') as PlannedJob;
  runtime.executor.execute(copy(planned), pm.shape(planned), { guaranteeTerms: [term] });
  return runtime;
}

const request = (level: GuaranteeLevel): ServiceRequest => ({
  nodeCount: 4,
  libraries: [],
  runtimeSeconds: 3600,
  deadline,
  requestKind: 'Binding',
  guaranteeLevel: level,
  maxCoveredOutages: 1,
  securityPolicy: [],
});

describe('a node fails halfway through the job', () => {
  it('Standard restarts from its last checkpoint on a spare node and meets its deadline: Fulfilled, no penalty', async () => {
    const pm = admitted('Standard');
    const runtime = start(pm);
    await failNode(runtime, pm, 'n01', 1800, 'a');
    await runtime.clock.runUntilIdle();

    const record = runtime.executor.record('a');
    if (!record) throw new Error('no record');
    // Checkpoints 1 and 2 were written by 1710 s; the 3rd was due at 2550 s.
    expect(record.checkpoints.map((c) => [secondsOf(c.at), c.interval])).toEqual([
      [870, 1],
      [1710, 2],
      // After the restart: computation resumes at 1830 s, checkpoints at 1830 + 840 and + 1680 s.
      [2670, 3],
      [3510, 4],
    ]);
    expect(record.outages).toEqual([{ at: at(1800), node: 'n01' }]);
    const cp2 = record.checkpoints[1]?.reference;
    expect(record.restarts).toEqual([
      { at: at(1830), nodes: ['n02', 'n03', 'n04', 'n05'], fromInterval: 2, reference: cp2, cause: 'outage' },
    ]);
    // Three intervals left: 1830 + 3 x 720 + 2 x 120 = 4230 s, 770 s before the deadline.
    expect(secondsOf(record.completedAt)).toBe(4230);
    expect(runtime.rm.callsOf('start').map((c) => c.fromCheckpoint)).toEqual([undefined, cp2]);

    const [evaluation] = runtime.executor.evaluations('a');
    expect(evaluation).toMatchObject({ term: 'CompletionByDeadline', state: 'Fulfilled' });
    expect(evaluation?.penalty).toBeUndefined();
    expect(evaluation?.excusedPenalty).toBeUndefined();
    expect(
      runtime.events
        .filter((e) => e.type === 'fulfilled' || e.type === 'violated')
        .map((e) => [e.type, secondsOf(e.at)]),
    ).toEqual([['fulfilled', 4230]]);
    expect(serviceTermStateOf(record)).toEqual({ state: 'Completed' });
    expect(completesAgreement(record)).toBe(true);
    expect(runtime.errors).toEqual([]);
  });

  it('Legacy in the same situation cannot restart in time: Violated once given up, the penalty from its assessment interval on the whole lateness', async () => {
    const pm = admitted('Legacy');
    const runtime = start(pm);
    await failNode(runtime, pm, 'n01', 1800, 'a');
    // No checkpoint: a restart needs 3630 s again, 5430 s > 5000 s. The scheduler keeps the job in P, and runs it on
    // n02..n05 up to its deadline on the chance it needs less than its estimate (it needs all of it here).
    expect(pm.problematic().map((p) => p.id)).toEqual(['a']);
    expect(pm.job('a')?.segments.at(-1)).toMatchObject({
      start: at(1800).getTime(),
      end: deadline.getTime(),
      onChance: true,
    });
    await runtime.clock.runUntilIdle();
    await runtime.clock.advanceTo(at(5001));
    // Past the deadline the violation is certain but its measure is not: no verdict, no penalty on the first tick.
    expect(runtime.events.some((e) => e.type === 'violated')).toBe(false);
    expect(runtime.executor.evaluations('a')[0]).toMatchObject({ state: 'NotDetermined' });

    // The scheduler drops the job from P when it next advances, 45 min after the deadline; the provider gives it up.
    await runtime.clock.advanceTo(at(5000 + 45 * 60));
    const { left } = pm.advance(at(5000 + 45 * 60).getTime());
    expect(left.map((j) => j.spec.id)).toEqual(['a']);
    await runtime.executor.abandon('a', 'left the plan unsolved');
    await runtime.clock.runUntilIdle();

    const record = runtime.executor.record('a');
    if (!record) throw new Error('no record');
    expect(record.checkpoints).toEqual([]);
    expect(record.restarts).toEqual([
      { at: at(1830), cause: 'outage', fromInterval: 0, nodes: ['n02', 'n03', 'n04', 'n05'] },
    ]);
    expect(record.failure).toEqual({ at: at(7700), cause: 'abandoned', reason: 'left the plan unsolved' });
    const [evaluation] = runtime.executor.evaluations('a');
    expect(evaluation?.state).toBe('Violated');
    // Written once, when final.
    expect(runtime.events.filter((e) => e.type === 'violated').map((e) => secondsOf(e.at))).toEqual([7700]);
    // Given up 2700 s (45 min) after the deadline: two started half hours, 2 x 50 EUR, below the 500 EUR cap; Legacy pays.
    expect(evaluation?.penalty).toEqual({
      amount: 100,
      currency: 'EUR',
      lines: [{ per: 'PT30M', units: 2, rate: 50, amount: 100, capped: false, currency: 'EUR' }],
    });
    expect(evaluation?.liability).toMatch(/^liable: Legacy/);
    expect(completesAgreement(record)).toBe(true);
    expect(runtime.errors).toEqual([]);
  });

  it('Enhanced keeps its deadline in a full cluster because spare capacity was kept', async () => {
    const pm = admitted('Enhanced', 3);
    const planned = pm.job('a') as PlannedJob;
    expect(planned.segments[0]?.spare).toEqual(['n05']); // booked beside the job; n06-n08 are the reservation's
    const runtime = start(pm);
    await failNode(runtime, pm, 'n01', 1800, 'a');
    await runtime.clock.runUntilIdle();

    const record = runtime.executor.record('a');
    if (!record) throw new Error('no record');
    expect(record.restarts).toEqual([
      {
        at: at(1830),
        nodes: ['n05', 'n02', 'n03', 'n04'],
        fromInterval: 2,
        reference: record.checkpoints[1]?.reference,
        cause: 'outage',
      },
    ]);
    expect(secondsOf(record.completedAt)).toBe(4230);
    const [evaluation] = runtime.executor.evaluations('a');
    expect(evaluation?.state).toBe('Fulfilled');
    expect(evaluation?.penalty).toBeUndefined();
    // Its piece was booked to 4980 s, the worst case: no overrun.
    expect(runtime.events.some((e) => e.type === 'overrun')).toBe(false);
  });

  it('Standard in the same full cluster finds no spare node: Violated, but the penalty is excused', async () => {
    const pm = admitted('Standard', 4);
    const runtime = start(pm);
    await failNode(runtime, pm, 'n01', 1800, 'a');
    await runtime.clock.runUntilIdle();
    await runtime.clock.advanceTo(at(5000 + 45 * 60));
    pm.advance(at(5000 + 45 * 60).getTime());
    await runtime.executor.abandon('a', 'left the plan unsolved');
    await runtime.clock.runUntilIdle();

    const [evaluation] = runtime.executor.evaluations('a');
    expect(evaluation?.state).toBe('Violated');
    expect(evaluation?.penalty).toBeUndefined();
    expect(evaluation?.excusedPenalty?.amount).toBe(100);
    expect(evaluation?.liability).toMatch(
      /^not liable: a resource outage hit the job and Standard's mechanisms were applied .*Standard restarts on local spare resources only when some are free/,
    );
    const record = runtime.executor.record('a');
    if (!record) throw new Error('no record');
    const { report } = postRuntimeReport({
      agreementId: 'agr-2',
      request: request('Standard'),
      guaranteeTerms: [term],
      record,
      evaluations: runtime.executor.evaluations('a'),
      generatedAt: at(7700),
    });
    expect(report.totals).toEqual({ penalties: [], excused: [{ amount: 100, currency: 'EUR' }], rewards: [] });
    expect(report.happened.checkpoints).toMatchObject({ taken: 2, missed: 0 });
  });

  it('the post-runtime report says what was promised, what happened and what is owed', async () => {
    const pm = admitted('Legacy');
    const runtime = start(pm);
    await failNode(runtime, pm, 'n01', 1800, 'a');
    await runtime.clock.advanceTo(at(7700));
    await runtime.executor.abandon('a', 'left the plan unsolved');
    await runtime.clock.runUntilIdle();
    const record = runtime.executor.record('a');
    if (!record) throw new Error('no record');

    const { report, text } = postRuntimeReport({
      agreementId: 'agr-1',
      request: request('Legacy'),
      guaranteeTerms: [term],
      record,
      evaluations: runtime.executor.evaluations('a'),
      plan: { start: at(0), end: at(3630), nodes: ['n01', 'n02', 'n03', 'n04'], checkpoints: 0 },
      generatedAt: at(7700),
    });
    expect(report.happened.outcome).toBe('failed');
    expect(report.happened.outages).toEqual([{ at: '2026-11-23T00:30:00Z', node: 'n01' }]);
    expect(report.happened.checkpoints).toEqual({ planned: 0, taken: 0, missed: 0, list: [] });
    expect(report.guarantees).toEqual([expect.objectContaining({ term: 'CompletionByDeadline', state: 'Violated' })]);
    expect(report.totals).toEqual({ penalties: [{ amount: 100, currency: 'EUR' }], excused: [], rewards: [] });
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    expect(text).toContain('Legacy service on 4 node(s), runtime estimate 1 h, 1 covered outage(s)');
    expect(text).toContain('CompletionByDeadline: completed by 2026-11-23T01:23:20Z');
    expect(text).toContain('outage: node n01 at 2026-11-23T00:30:00Z');
    expect(text).toContain('penalty owed: 100.00 EUR (2 x 50 per PT30M = 100.00 EUR)');
    expect(text).toContain('Totals: penalties 100.00 EUR; excused none; rewards none');
  });
});
