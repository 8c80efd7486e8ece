import { describe, expect, it } from 'vitest';
import { assessPenalty } from '../../src/domain/compensation.js';
import { describeMs, durationMs } from '../../src/domain/duration.js';
import {
  appendFact,
  newExecutionRecord,
  type ExecutionFact,
  type ExecutionRecord,
} from '../../src/domain/execution.js';
import { evaluateGuarantee, nextCheck, type GuaranteeContext } from '../../src/domain/guarantee-evaluation.js';
import type { Compensation, GuaranteeLevel, GuaranteeTerm, KpiTarget } from '../../src/domain/terms.js';

const T0 = Date.UTC(2026, 10, 23, 0, 0, 0);
const s = (seconds: number) => new Date(T0 + seconds * 1000);
const first = ['n01', 'n02', 'n03', 'n04'];
const second = ['n05', 'n02', 'n03', 'n04'];
const deadline = s(5000);

function replay(facts: ExecutionFact[]): ExecutionRecord {
  return facts.reduce(appendFact, newExecutionRecord('job-1'));
}

/**
 * The run of the scheduler's worked example (4 checkpoints, t_compint 720 s, t_cp 120 s,
 * t_init 30 s): checkpoints written at 30 + 840 i s; node n01 fails at 1800 s, after the 2nd;
 * the job restarts from it at once on n05 and completes at `end` (4230 s as planned).
 */
function startToOutage(): ExecutionFact[] {
  return [
    { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes: first },
    { kind: 'phase', at: s(30), phase: 'Running', nodes: first },
    { kind: 'checkpoint', at: s(870), interval: 1, reference: 'cp-1' },
    { kind: 'checkpoint', at: s(1710), interval: 2, reference: 'cp-2' },
    { kind: 'outage', at: s(1800), node: 'n01' },
  ];
}

function restartAndFinish(end: number, fromInterval = 2): ExecutionFact[] {
  return [
    { kind: 'phase', at: s(1800), phase: 'PreRuntime', nodes: second },
    { kind: 'phase', at: s(1830), phase: 'Running', nodes: second },
    { kind: 'restart', at: s(1830), nodes: second, fromInterval, reference: `cp-${fromInterval}`, cause: 'outage' },
    { kind: 'checkpoint', at: s(2670), interval: 3, reference: 'cp-3' },
    { kind: 'checkpoint', at: s(3510), interval: 4, reference: 'cp-4' },
    ...finish(end),
  ];
}

function finish(end: number): ExecutionFact[] {
  return [
    { kind: 'phase', at: s(end), phase: 'StageOut', nodes: second },
    { kind: 'completed', at: s(end) },
    { kind: 'phase', at: s(end), phase: 'PostRuntime', nodes: [] },
    { kind: 'closed', at: s(end) },
  ];
}

function term(target: KpiTarget, penalties: Compensation[] = [], rewards: Compensation[] = []): GuaranteeTerm {
  return { name: 'Term', serviceScope: ['ComputeJob'], kpiName: target.kind, target, penalties, rewards };
}

const completedBy = (penalties: Compensation[] = [], rewards: Compensation[] = []) =>
  term({ kind: 'CompletedBy', at: deadline }, penalties, rewards);
const perHalfHour: Compensation = {
  assessmentInterval: { timeInterval: 'PT30M' },
  valueUnit: 'EUR',
  amount: 50,
  cap: 500,
};

function context(
  now: Date,
  level: GuaranteeLevel = 'Standard',
  extra: Partial<GuaranteeContext> = {},
): GuaranteeContext {
  return { now, level, coveredOutages: 1, ...extra };
}

describe('CompletedBy', () => {
  it('is NotDetermined while the job may still complete by the deadline', () => {
    const record = replay(startToOutage());
    const e = evaluateGuarantee(completedBy([perHalfHour]), record, context(s(2000)));
    expect(e).toEqual({
      term: 'Term',
      kpi: 'CompletedBy',
      state: 'NotDetermined',
      explanation: 'not completed yet; deadline 2026-11-23T01:23:20Z is 50 min away',
    });
  });

  it('past the deadline without completion: late so far, judged (and its penalty assessed) when the job completes', () => {
    const record = replay(startToOutage());
    const e = evaluateGuarantee(completedBy([perHalfHour]), record, context(s(5000 + 45 * 60), 'Legacy'));
    expect(e).toEqual({
      term: 'Term',
      kpi: 'CompletedBy',
      state: 'NotDetermined',
      explanation:
        'not completed by the deadline 2026-11-23T01:23:20Z: 45 min late at 2026-11-23T02:08:20Z, judged when it has completed',
    });
    // Completed 45 min late: two started half hours, 2 x 50 EUR (Legacy pays), once, on the whole measure.
    const late = evaluateGuarantee(
      completedBy([perHalfHour]),
      replay([...startToOutage(), ...restartAndFinish(5000 + 45 * 60)]),
      context(s(9000), 'Legacy'),
    );
    expect(late.state).toBe('Violated');
    expect(late.penalty).toEqual({
      amount: 100,
      currency: 'EUR',
      lines: [{ per: 'PT30M', units: 2, rate: 50, amount: 100, capped: false, currency: 'EUR' }],
    });
  });

  it('is Fulfilled when the job completed in time, with a reward for every whole interval to spare', () => {
    const record = replay([...startToOutage(), ...restartAndFinish(4230)]);
    // 5000 - 4230 = 770 s to spare: two whole 5-minute intervals, 2 x 10 EUR.
    const e = evaluateGuarantee(
      completedBy([perHalfHour], [{ assessmentInterval: { timeInterval: 'PT5M' }, valueUnit: 'EUR', amount: 10 }]),
      record,
      context(s(6000)),
    );
    expect(e.state).toBe('Fulfilled');
    expect(e.explanation).toBe(
      'completed at 2026-11-23T01:10:30Z, 12 min 50 s before the deadline 2026-11-23T01:23:20Z',
    );
    expect(e.reward?.amount).toBe(20);
    expect(e.penalty).toBeUndefined();
  });

  it('charges every started assessment interval of lateness, up to the cap', () => {
    // Completed 61 min late: two started hours.
    const record = replay([...startToOutage(), ...restartAndFinish(5000 + 61 * 60)]);
    const perHour = (cap?: number): Compensation => ({
      assessmentInterval: { timeInterval: 'PT1H' },
      valueUnit: 'EUR',
      amount: 100,
      ...(cap !== undefined ? { cap } : {}),
    });
    const uncapped = evaluateGuarantee(completedBy([perHour()]), record, context(s(9000), 'Full'));
    expect(uncapped.penalty?.amount).toBe(200);
    const capped = evaluateGuarantee(completedBy([perHour(150)]), record, context(s(9000), 'Full'));
    expect(capped.penalty).toEqual({
      amount: 150,
      currency: 'EUR',
      lines: [{ per: 'PT1H', units: 2, rate: 100, amount: 150, capped: true, currency: 'EUR' }],
    });
    // A count interval charges the violation itself.
    const once = evaluateGuarantee(
      completedBy([{ assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 75 }]),
      record,
      context(s(9000), 'Full'),
    );
    expect(once.penalty?.amount).toBe(75);
  });

  it('a job given up is Violated; lateness counts to when it was given up, at least one interval', () => {
    const record = replay([
      ...startToOutage(),
      { kind: 'failed', at: deadline, cause: 'abandoned', reason: 'left the plan unsolved' },
    ]);
    const e = evaluateGuarantee(completedBy([perHalfHour]), record, context(s(20000), 'Legacy'));
    expect(e.state).toBe('Violated');
    expect(e.explanation).toBe(
      'never completed: the job ended at 2026-11-23T01:23:20Z (left the plan unsolved); deadline 2026-11-23T01:23:20Z',
    );
    expect(e.penalty?.amount).toBe(50);
  });

  it('needs no timed look: only the completion or the end of the job decides it', () => {
    const t = completedBy();
    expect(nextCheck(t, replay(startToOutage()), context(s(2000)))).toBeUndefined();
    expect(nextCheck(t, replay(startToOutage()), context(s(6000)))).toBeUndefined();
    expect(nextCheck(t, replay([...startToOutage(), ...restartAndFinish(4230)]), context(s(4230)))).toBeUndefined();
  });
});

describe('liability of the guarantee levels (002 section 3.2.2)', () => {
  // Late after an outage, with checkpoints taken as planned and a restart from the last one.
  const lateAfterOutage = replay([...startToOutage(), ...restartAndFinish(5000 + 40 * 60)]);
  const judged = (record: ExecutionRecord, level: GuaranteeLevel, extra: Partial<GuaranteeContext> = {}) =>
    evaluateGuarantee(completedBy([perHalfHour]), record, context(s(20000), level, extra));

  it('the same late completion: Legacy and Full pay, Standard and Enhanced are excused, Background promised nothing', () => {
    const owed = (level: GuaranteeLevel) => judged(lateAfterOutage, level).penalty?.amount ?? 0;
    const excused = (level: GuaranteeLevel) => judged(lateAfterOutage, level).excusedPenalty?.amount ?? 0;
    // 40 min late: two started half hours, 100 EUR assessed at every level.
    expect(
      ['Background', 'Legacy', 'Standard', 'Enhanced', 'Full'].map((l) => [
        l,
        owed(l as GuaranteeLevel),
        excused(l as GuaranteeLevel),
      ]),
    ).toEqual([
      ['Background', 0, 100],
      ['Legacy', 100, 0],
      ['Standard', 0, 100],
      ['Enhanced', 0, 100],
      ['Full', 100, 0],
    ]);
    expect(judged(lateAfterOutage, 'Standard').liability).toBe(
      "not liable: a resource outage hit the job and Standard's mechanisms were applied (checkpoints as planned, restarts from the last checkpoint; Standard restarts on local spare resources only when some are free)",
    );
    expect(judged(lateAfterOutage, 'Full').liability).toMatch(/^liable: Full pays the penalty for any violation/);
  });

  it('Standard pays when a planned checkpoint was not taken', () => {
    const facts = startToOutage();
    facts.splice(3, 1, { kind: 'checkpointMissed', at: s(1710), interval: 2, reason: 'checkpointer timed out' });
    const record = replay([...facts, ...restartAndFinish(5000 + 40 * 60, 1)]);
    const e = judged(record, 'Standard');
    expect(e.penalty?.amount).toBe(100);
    expect(e.liability).toBe(
      'liable: Standard checkpoints regularly, but the checkpoint securing interval 2 was not taken at 2026-11-23T00:28:30Z (checkpointer timed out)',
    );
  });

  it('Standard and Enhanced pay for a violation no outage explains', () => {
    const record = replay([
      { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes: first },
      { kind: 'phase', at: s(30), phase: 'Running', nodes: first },
      { kind: 'phase', at: s(5100), phase: 'StageOut', nodes: first },
      { kind: 'completed', at: s(5100) },
    ]);
    for (const level of ['Standard', 'Enhanced'] as const) {
      expect(judged(record, level).penalty?.amount).toBe(50);
      expect(judged(record, level).liability).toMatch(/no resource outage hit the job/);
    }
  });

  it('Standard and Enhanced pay when the provider suspended the job', () => {
    const record = replay([
      { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes: first },
      { kind: 'phase', at: s(30), phase: 'Running', nodes: first },
      { kind: 'suspended', at: s(600), reason: 'a problematic job needed the nodes' },
      { kind: 'phase', at: s(4000), phase: 'PreRuntime', nodes: first },
      { kind: 'phase', at: s(4030), phase: 'Running', nodes: first },
      { kind: 'restart', at: s(4030), nodes: first, fromInterval: 0, cause: 'suspension' },
      { kind: 'phase', at: s(7630), phase: 'StageOut', nodes: first },
      { kind: 'completed', at: s(7630) },
    ]);
    expect(judged(record, 'Enhanced').penalty?.amount).toBeGreaterThan(0);
    expect(judged(record, 'Enhanced').liability).toMatch(/the provider suspended the job at 2026-11-23T00:10:00Z/);
  });

  it('a restart from an older checkpoint than the last is not the agreed mechanism', () => {
    const record = replay([...startToOutage(), ...restartAndFinish(5000 + 40 * 60, 1)]);
    expect(judged(record, 'Standard').liability).toBe(
      'liable: the restart at 2026-11-23T00:30:30Z resumed from interval 1 though the checkpoint of interval 2 existed; Standard restarts from the last checkpoint',
    );
  });

  it('Enhanced pays when a covered outage was not followed by a restart; Standard does not (no spare promised)', () => {
    const record = replay([
      ...startToOutage(),
      { kind: 'failed', at: s(6000), cause: 'abandoned', reason: 'no spare node' },
    ]);
    expect(judged(record, 'Enhanced').penalty?.amount).toBe(50); // given up 1000 s after the deadline: one started half hour
    expect(judged(record, 'Enhanced').liability).toMatch(
      /Enhanced keeps spare resources for 1 outage\(s\), but the job was not restarted after node n01 failed/,
    );
    expect(judged(record, 'Standard').penalty).toBeUndefined();
    expect(judged(record, 'Standard').excusedPenalty?.amount).toBe(50);
  });

  it('Enhanced is not liable beyond its covered outages', () => {
    const record = replay([
      ...startToOutage(),
      { kind: 'phase', at: s(1800), phase: 'PreRuntime', nodes: second },
      { kind: 'phase', at: s(1830), phase: 'Running', nodes: second },
      { kind: 'restart', at: s(1830), nodes: second, fromInterval: 2, reference: 'cp-2', cause: 'outage' },
      { kind: 'outage', at: s(2000), node: 'n05' },
      { kind: 'failed', at: s(6000), cause: 'abandoned', reason: 'no spare node left' },
    ]);
    const e = judged(record, 'Enhanced');
    expect(e.penalty).toBeUndefined();
    expect(e.liability).toMatch(/^not liable: resource outages hit the job .*; 2 outages, 1 covered$/);
    // Covering two outages, the second one unserved makes Enhanced liable.
    expect(judged(record, 'Enhanced', { coveredOutages: 2 }).penalty?.amount).toBe(50);
  });

  it('no level pays for a job that failed by itself', () => {
    const record = replay([
      { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes: first },
      { kind: 'phase', at: s(30), phase: 'Running', nodes: first },
      { kind: 'failed', at: s(100), cause: 'application', reason: 'exit code 3' },
    ]);
    const e = judged(record, 'Full');
    expect(e.state).toBe('Violated');
    expect(e.penalty).toBeUndefined();
    expect(e.liability).toBe("not liable: the job itself failed (exit code 3), not the provider's resources");
  });
});

describe('StartBy', () => {
  const record = replay(startToOutage());
  it('Fulfilled when computation started in time, Violated by how late it started', () => {
    expect(evaluateGuarantee(term({ kind: 'StartBy', at: s(60) }), record, context(s(100))).state).toBe('Fulfilled');
    const late = evaluateGuarantee(
      term({ kind: 'StartBy', at: s(0) }, [{ assessmentInterval: { timeInterval: 'PT1M' }, amount: 5 }]),
      record,
      context(s(100), 'Full'),
    );
    expect(late.state).toBe('Violated');
    expect(late.explanation).toBe('started at 2026-11-23T00:00:30Z, 30 s after the latest start 2026-11-23T00:00:00Z');
    expect(late.penalty).toMatchObject({ amount: 5, currency: '' });
  });

  it('NotDetermined until it starts or ends; Violated when it ends without having started', () => {
    const waiting = newExecutionRecord('job-1');
    expect(evaluateGuarantee(term({ kind: 'StartBy', at: s(60) }), waiting, context(s(59))).state).toBe(
      'NotDetermined',
    );
    expect(evaluateGuarantee(term({ kind: 'StartBy', at: s(60) }), waiting, context(s(61))).explanation).toBe(
      'not started by the latest start 2026-11-23T00:01:00Z: 1 s late at 2026-11-23T00:01:01Z, judged when it has started',
    );
    const givenUp = appendFact(waiting, {
      kind: 'failed',
      at: s(61),
      cause: 'abandoned',
      reason: 'left the plan unsolved',
    });
    expect(evaluateGuarantee(term({ kind: 'StartBy', at: s(60) }), givenUp, context(s(61))).state).toBe('Violated');
  });
});

describe('NodesAvailable', () => {
  // The window starts when the run hands the nodes over (30 s, after their preparation).
  const window = { start: s(30), end: s(7200) };
  const nodes = (penalties: Compensation[] = [], rewards: Compensation[] = []) =>
    term({ kind: 'NodesAvailable', nodes: 4 }, penalties, rewards);
  const restartedAfter10Minutes = replay([
    ...startToOutage(),
    { kind: 'phase', at: s(2400), phase: 'PreRuntime', nodes: second },
    { kind: 'phase', at: s(2430), phase: 'Running', nodes: second },
  ]);

  it('is Violated, once the window is over, for the time the job had fewer nodes in it, charged per started interval or per gap', () => {
    const penalties: Compensation[] = [
      { assessmentInterval: { timeInterval: 'PT5M' }, valueUnit: 'EUR', amount: 20 },
      { assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 30 },
    ];
    // While the window runs the shortfall is reported, not assessed: no penalty on the first tick.
    expect(
      evaluateGuarantee(nodes(penalties), restartedAfter10Minutes, context(s(3000), 'Legacy', { window })),
    ).toMatchObject({ state: 'NotDetermined', explanation: expect.stringMatching(/ so far .*judged when it ends$/) });
    const e = evaluateGuarantee(nodes(penalties), restartedAfter10Minutes, context(s(7200), 'Legacy', { window }));
    expect(e.state).toBe('Violated');
    // 1800 s to 2430 s without the nodes handed over (the restart's preparation counts: it was not planned before
    // the window): 10 min 30 s, three started 5-minute intervals (60 EUR), one gap (30 EUR).
    expect(e.explanation).toBe(
      'fewer than 4 node(s) for 10 min 30 s of the window 2026-11-23T00:00:30Z to 2026-11-23T02:00:00Z (1 time(s), first from 2026-11-23T00:30:00Z)',
    );
    expect(e.penalty?.lines.map((l) => [l.per, l.units, l.amount])).toEqual([
      ['PT5M', 3, 60],
      ['1 violation', 1, 30],
    ]);
    expect(e.penalty?.amount).toBe(90);
  });

  it('counts a gap that is still open up to now', () => {
    const e = evaluateGuarantee(nodes(), replay(startToOutage()), context(s(2000), 'Legacy', { window }));
    expect(e.explanation).toMatch(/^fewer than 4 node\(s\) for 3 min 20 s of the window .* so far/);
  });

  it("counts a preparation that runs into the window: the nodes are not the holder's until handed over", () => {
    const e = evaluateGuarantee(
      nodes(),
      replay(startToOutage()),
      context(s(2000), 'Legacy', { window: { start: s(0), end: s(7200) } }),
    );
    expect(e.explanation).toMatch(
      /^fewer than 4 node\(s\) for 3 min 50 s of the window .* so far \(first from 2026-11-23T00:00:00Z\)/,
    );
  });

  it("a job given up inside its window leaves the rest of the window unserved: Violated at once, to the window's end", () => {
    const record = replay([
      ...startToOutage(),
      { kind: 'failed', at: s(1800), cause: 'abandoned', reason: 'left the plan unsolved' },
    ]);
    const e = evaluateGuarantee(
      nodes(),
      record,
      context(s(1800), 'Legacy', { window: { start: s(30), end: s(7200) } }),
    );
    expect(e.state).toBe('Violated');
    expect(e.explanation).toMatch(/^fewer than 4 node\(s\) for 1 h 30 min of the window/);
  });

  it('is Fulfilled once the window is over with the nodes handed over throughout, and earns its reward once', () => {
    // Prepared before the window, handed over a second before it starts.
    const record = replay([
      { kind: 'phase', at: s(-31), phase: 'PreRuntime', nodes: first },
      { kind: 'phase', at: s(-1), phase: 'Running', nodes: first },
    ]);
    const reward: Compensation = { assessmentInterval: { timeInterval: 'PT1H' }, valueUnit: 'EUR', amount: 15 };
    expect(evaluateGuarantee(nodes([], [reward]), record, context(s(7000), 'Legacy', { window })).state).toBe(
      'NotDetermined',
    );
    const e = evaluateGuarantee(nodes([], [reward]), record, context(s(7200), 'Legacy', { window }));
    expect(e.state).toBe('Fulfilled');
    expect(e.reward?.amount).toBe(15);
  });

  it('without a window, judges the run: a restart at the instant of the outage keeps the nodes available', () => {
    const record = replay([...startToOutage(), ...restartAndFinish(4230)]);
    expect(evaluateGuarantee(nodes(), record, context(s(5000))).state).toBe('Fulfilled');
    const idle = replay(startToOutage());
    expect(evaluateGuarantee(nodes(), idle, context(s(1800))).state).toBe('NotDetermined');
    // Open-ended: only the end of the run decides; given up idle, it is Violated.
    expect(nextCheck(nodes(), idle, context(s(1800)))).toBeUndefined();
    const givenUp = appendFact(idle, {
      kind: 'failed',
      at: s(2400),
      cause: 'abandoned',
      reason: 'left the plan unsolved',
    });
    expect(evaluateGuarantee(nodes(), givenUp, context(s(2400))).state).toBe('Violated');
  });

  it('with a window, looks again when the window ends', () => {
    expect(nextCheck(nodes(), restartedAfter10Minutes, context(s(3000), 'Legacy', { window }))).toEqual(
      new Date(window.end.getTime() + 1),
    );
  });
});

describe('MaxCheckpointInterval', () => {
  const run = replay([...startToOutage(), ...restartAndFinish(4230)]);
  // Computation between save points: 840, 840, 90 (cut by the outage), 840, 840, 720 s.

  it('is Fulfilled when no stretch of computation went longer without a checkpoint', () => {
    const e = evaluateGuarantee(
      term(
        { kind: 'MaxCheckpointInterval', interval: 'PT15M' },
        [],
        [{ assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 5 }],
      ),
      run,
      context(s(5000)),
    );
    expect(e.state).toBe('Fulfilled');
    expect(e.explanation).toBe('at most 14 min of computation between checkpoints (objective PT15M)');
    expect(e.reward?.amount).toBe(5);
  });

  it('is Violated by every longer stretch, and Standard is liable: the interval is its own mechanism', () => {
    const e = evaluateGuarantee(
      term({ kind: 'MaxCheckpointInterval', interval: 'PT10M' }, [
        { assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 10 },
      ]),
      run,
      context(s(5000)),
    );
    expect(e.state).toBe('Violated');
    // Five stretches over 600 s (four of 840 s, one of 720 s).
    expect(e.explanation).toBe(
      '5 stretch(es) of computation longer than PT10M without a checkpoint; the longest 14 min',
    );
    expect(e.penalty?.amount).toBe(50);
    expect(e.liability).toBe('liable: the checkpoint interval is itself the mechanism Standard agreed to apply');
  });

  it('while running: NotDetermined, a longer stretch reported so far; judged when the job ends', () => {
    const running = replay(startToOutage().slice(0, 3)); // running since 30 s, checkpoint at 870 s
    const t = term({ kind: 'MaxCheckpointInterval', interval: 'PT15M' });
    expect(evaluateGuarantee(t, running, context(s(1000))).state).toBe('NotDetermined');
    expect(nextCheck(t, running, context(s(1000)))).toBeUndefined();
    expect(evaluateGuarantee(t, running, context(s(1771)))).toMatchObject({
      state: 'NotDetermined',
      explanation: expect.stringMatching(/^1 stretch\(es\) .* so far/),
    });
    const failed = appendFact(running, { kind: 'failed', at: s(1771), cause: 'application', reason: 'exit code 1' });
    expect(evaluateGuarantee(t, failed, context(s(1771))).state).toBe('Violated');
  });

  it('cannot judge an interval measured in months', () => {
    const e = evaluateGuarantee(term({ kind: 'MaxCheckpointInterval', interval: 'P1M' }), run, context(s(5000)));
    expect(e.state).toBe('NotDetermined');
    expect(e.explanation).toMatch(/uses years or months, which have no fixed length/);
  });
});

describe('other KPIs and business values', () => {
  it('a custom KPI is not measured, so it stays NotDetermined', () => {
    const e = evaluateGuarantee(
      term({ kind: 'Custom', kpiName: 'Throughput' }),
      replay(startToOutage()),
      context(s(9000)),
    );
    expect(e).toMatchObject({ state: 'NotDetermined', explanation: 'KPI Throughput is not one the server measures' });
    expect(
      nextCheck(term({ kind: 'Custom', kpiName: 'Throughput' }), replay(startToOutage()), context(s(9000))),
    ).toBeUndefined();
  });

  it('says when a penalty cannot be assessed instead of guessing', () => {
    const e = evaluateGuarantee(
      completedBy([{ assessmentInterval: { timeInterval: 'P1Y' }, amount: 10 }]),
      replay([...startToOutage(), ...restartAndFinish(8000)]),
      context(s(9000), 'Full'),
    );
    expect(e.state).toBe('Violated');
    expect(e.penalty).toBeUndefined();
    expect(e.explanation).toMatch(/; business value not assessed: duration "P1Y" uses years or months/);
  });

  it('counts violations in groups of the assessment count, started groups charged', () => {
    const penalty = assessPenalty([{ assessmentInterval: { count: 3 }, amount: 10 }], { durationMs: 0, count: 4 });
    expect(penalty?.lines[0]).toMatchObject({ per: '3 violations', units: 2, amount: 20 });
  });

  it('adds lines in one currency and lists others', () => {
    const penalty = assessPenalty(
      [
        { assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 10 },
        { assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 5 },
        { assessmentInterval: { count: 1 }, valueUnit: 'USD', amount: 7 },
      ],
      { durationMs: 0, count: 1 },
    );
    expect(penalty?.amount).toBe(15);
    expect(penalty?.currency).toBe('EUR');
    expect(penalty?.lines).toHaveLength(3);
  });
});

describe('durations', () => {
  it('reads xs:duration in fixed units', () => {
    expect(durationMs('PT30M')).toBe(30 * 60_000);
    expect(durationMs('PT1H30M')).toBe(90 * 60_000);
    expect(durationMs('P1DT2S')).toBe(86_400_000 + 2000);
    expect(durationMs('P2W')).toBe(14 * 86_400_000);
    expect(durationMs('PT0.5S')).toBe(500);
  });

  it('refuses what is not a duration, or has no fixed length', () => {
    expect(() => durationMs('PT')).toThrow(/is not an xs:duration/);
    expect(() => durationMs('30 minutes')).toThrow(/is not an xs:duration/);
    expect(() => durationMs('P1M')).toThrow(/years or months/);
  });

  it('describes milliseconds for people', () => {
    expect(describeMs(3_660_000)).toBe('1 h 1 min');
    expect(describeMs(770_000)).toBe('12 min 50 s');
    expect(describeMs(0)).toBe('0 s');
  });
});
