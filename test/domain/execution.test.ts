import { describe, expect, it } from 'vitest';
import {
  appendFact,
  completesAgreement,
  currentPhase,
  lastCheckpoint,
  newExecutionRecord,
  serviceTermStateOf,
  type ExecutionFact,
  type ExecutionRecord,
} from '../../src/domain/execution.js';

const T0 = Date.UTC(2026, 10, 23, 0, 0, 0);
const s = (seconds: number) => new Date(T0 + seconds * 1000);
const nodes = ['n01', 'n02', 'n03', 'n04'];

function replay(facts: ExecutionFact[], record = newExecutionRecord('job-1')): ExecutionRecord {
  return facts.reduce(appendFact, record);
}

describe('execution record', () => {
  it('records a run with a restart after an outage, and the service term state follows it', () => {
    const states: string[] = [];
    let record = newExecutionRecord('job-1');
    const step = (fact: ExecutionFact) => {
      record = appendFact(record, fact);
      const st = serviceTermStateOf(record);
      states.push(st.subState ? `${st.state}/${st.subState}` : st.state);
    };
    step({ kind: 'phase', at: s(0), phase: 'PreRuntime', nodes });
    step({ kind: 'phase', at: s(30), phase: 'Running', nodes });
    step({ kind: 'checkpoint', at: s(870), interval: 1, reference: 'cp-1' });
    step({ kind: 'outage', at: s(1800), node: 'n01' });
    step({ kind: 'phase', at: s(1800), phase: 'PreRuntime', nodes: ['n05', 'n02', 'n03', 'n04'] });
    step({ kind: 'phase', at: s(1830), phase: 'Running', nodes: ['n05', 'n02', 'n03', 'n04'] });
    step({
      kind: 'restart',
      at: s(1830),
      nodes: ['n05', 'n02', 'n03', 'n04'],
      fromInterval: 1,
      reference: 'cp-1',
      cause: 'outage',
    });
    step({ kind: 'phase', at: s(4000), phase: 'StageOut', nodes: ['n05', 'n02', 'n03', 'n04'] });
    step({ kind: 'completed', at: s(4000) });
    step({ kind: 'phase', at: s(4000), phase: 'PostRuntime', nodes: [] });
    expect(completesAgreement(record)).toBe(false);
    step({ kind: 'closed', at: s(4015) });

    expect(states).toEqual([
      'NotReady', // preparing: the service cannot be used yet
      'Ready/Processing',
      'Ready/Processing',
      'Ready/Idle', // interrupted
      'Ready/Idle', // preparing the restart
      'Ready/Processing',
      'Ready/Processing',
      'Ready/Processing', // staging out
      'Completed',
      'Completed',
      'Completed',
    ]);
    expect(record.startedAt).toEqual(s(30));
    expect(record.completedAt).toEqual(s(4000));
    expect(record.closedAt).toEqual(s(4015));
    expect(completesAgreement(record)).toBe(true);
    expect(record.outages).toEqual([{ at: s(1800), node: 'n01' }]);
    expect(record.restarts).toEqual([
      { at: s(1830), nodes: ['n05', 'n02', 'n03', 'n04'], fromInterval: 1, reference: 'cp-1', cause: 'outage' },
    ]);
    expect(lastCheckpoint(record)).toEqual({ at: s(870), interval: 1, reference: 'cp-1' });
    // Phases are closed spans in order; the outage ended the first run and opened an Idle span of no length.
    expect(
      record.phases.map((p) => [
        p.phase,
        (p.start.getTime() - T0) / 1000,
        p.end ? (p.end.getTime() - T0) / 1000 : undefined,
      ]),
    ).toEqual([
      ['PreRuntime', 0, 30],
      ['Running', 30, 1800],
      ['Idle', 1800, 1800],
      ['PreRuntime', 1800, 1830],
      ['Running', 1830, 4000],
      ['StageOut', 4000, 4000],
      ['PostRuntime', 4000, 4015],
    ]);
    expect(currentPhase(record)).toBeUndefined();
  });

  it('is immutable: appending returns a new record and leaves the old one as it was', () => {
    const before = replay([{ kind: 'phase', at: s(0), phase: 'PreRuntime', nodes }]);
    const after = appendFact(before, { kind: 'phase', at: s(30), phase: 'Running', nodes });
    expect(before.phases).toHaveLength(1);
    expect(before.phases[0]?.end).toBeUndefined();
    expect(before.startedAt).toBeUndefined();
    expect(after.phases).toHaveLength(2);
  });

  it('closes a suspension when the job resumes from it', () => {
    const record = replay([
      { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes },
      { kind: 'phase', at: s(30), phase: 'Running', nodes },
      { kind: 'suspended', at: s(600), reason: 'a problematic job needed the nodes' },
      { kind: 'phase', at: s(3600), phase: 'PreRuntime', nodes },
      { kind: 'phase', at: s(3630), phase: 'Running', nodes },
      { kind: 'restart', at: s(3630), nodes, fromInterval: 0, cause: 'suspension' },
    ]);
    expect(record.suspensions).toEqual([
      { at: s(600), reason: 'a problematic job needed the nodes', resumedAt: s(3630) },
    ]);
    expect(serviceTermStateOf(record)).toEqual({ state: 'Ready', subState: 'Processing' });
  });

  it('a failure ends the job: it lets go of the nodes and the service term is Completed', () => {
    const record = replay([
      { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes },
      { kind: 'phase', at: s(30), phase: 'Running', nodes },
      { kind: 'failed', at: s(100), cause: 'application', reason: 'exit code 1' },
    ]);
    expect(currentPhase(record)).toBe('Idle');
    expect(record.failure).toEqual({ at: s(100), cause: 'application', reason: 'exit code 1' });
    expect(serviceTermStateOf(record)).toEqual({ state: 'Completed' });
    expect(() => appendFact(record, { kind: 'phase', at: s(120), phase: 'PreRuntime', nodes })).toThrow(
      /job job-1: phase at .*: the job has ended; only PostRuntime or Idle may follow/,
    );
    const closed = appendFact(appendFact(record, { kind: 'phase', at: s(100), phase: 'PostRuntime', nodes: [] }), {
      kind: 'closed',
      at: s(115),
    });
    expect(completesAgreement(closed)).toBe(true);
  });

  it('a job given up before it ever ran closes without phases', () => {
    const record = replay([
      { kind: 'failed', at: s(10), cause: 'abandoned', reason: 'left the plan unsolved' },
      { kind: 'closed', at: s(10) },
    ]);
    expect(record.phases).toEqual([]);
    expect(serviceTermStateOf(record)).toEqual({ state: 'Completed' });
  });

  describe('refuses facts that cannot follow', () => {
    const running = replay([
      { kind: 'phase', at: s(0), phase: 'PreRuntime', nodes },
      { kind: 'phase', at: s(30), phase: 'Running', nodes },
    ]);
    const cases: Array<[string, ExecutionRecord, ExecutionFact, RegExp]> = [
      [
        'a fact earlier than the last',
        running,
        { kind: 'checkpoint', at: s(10), interval: 1, reference: 'x' },
        /earlier than the last fact/,
      ],
      [
        'Running without PreRuntime',
        newExecutionRecord('job-1'),
        { kind: 'phase', at: s(0), phase: 'Running', nodes },
        /Running cannot follow no phase/,
      ],
      [
        'a checkpoint while preparing',
        replay([{ kind: 'phase', at: s(0), phase: 'PreRuntime', nodes }]),
        { kind: 'checkpoint', at: s(5), interval: 1, reference: 'x' },
        /checkpoints are taken while Running, not PreRuntime/,
      ],
      [
        'completion without stage-out',
        running,
        { kind: 'completed', at: s(40) },
        /a job completes when its results are staged out, not in Running/,
      ],
      [
        'an outage of an idle job',
        replay([{ kind: 'outage', at: s(40), node: 'n01' }], running),
        { kind: 'outage', at: s(50), node: 'n02' },
        /an outage interrupts a job holding nodes, not one in Idle/,
      ],
      [
        'a restart before computation resumes',
        replay([{ kind: 'outage', at: s(40), node: 'n01' }], running),
        { kind: 'restart', at: s(50), nodes, fromInterval: 0, cause: 'outage' },
        /when computation resumes \(Running\), not in Idle/,
      ],
      [
        'closing a job that has not ended',
        running,
        { kind: 'closed', at: s(40) },
        /closed only after the job completed or failed/,
      ],
    ];
    for (const [name, record, fact, message] of cases) {
      it(name, () => expect(() => appendFact(record, fact)).toThrow(message));
    }

    it('anything after the record was closed', () => {
      const closed = replay([
        { kind: 'failed', at: s(10), cause: 'abandoned', reason: 'terminated' },
        { kind: 'closed', at: s(10) },
      ]);
      expect(() => appendFact(closed, { kind: 'phase', at: s(20), phase: 'PreRuntime', nodes })).toThrow(
        /the record was closed at/,
      );
    });
  });
});
