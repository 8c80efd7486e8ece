import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/scheduler/model.js';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { defaultSiteTiming } from '../../src/scheduler/site.js';
import { paper } from './support.js';

/**
 * A node fails while a waiting deadline job must make room for another job's replacement node: placed again before
 * the failure itself is booked, it must not land over best-effort work booked on the failing node (SLA searches look
 * past such work). Found by a random replay of arrivals, finishes, failures and repairs on five nodes; before the fix
 * the last failure stopped with "node double-booked: failure:n1 ... overlaps j9 ...".
 */
type Event =
  | ['advance', number]
  | [
      'admit',
      {
        id: string;
        kind: JobSpec['kind'];
        level: JobSpec['level'];
        nodes: number;
        runtimeSeconds: number;
        deadline?: number;
        window?: [number, number];
      },
    ]
  | ['finish' | 'fail' | 'repair', string, number];

const events: Event[] = [
  ['advance', 0],
  ['admit', { id: 'j0', kind: 'Deadline', level: 'Standard', nodes: 3, runtimeSeconds: 14400, deadline: 25200 }],
  ['advance', 960],
  ['admit', { id: 'j1', kind: 'Deadline', level: 'Enhanced', nodes: 2, runtimeSeconds: 1800, deadline: 29760 }],
  ['advance', 1260],
  ['admit', { id: 'j2', kind: 'BestEffort', level: 'Standard', nodes: 4, runtimeSeconds: 1800 }],
  ['advance', 1800],
  ['admit', { id: 'j3', kind: 'Deadline', level: 'Enhanced', nodes: 2, runtimeSeconds: 14400, deadline: 16200 }],
  ['advance', 1800],
  ['admit', { id: 'j4', kind: 'Deadline', level: 'Legacy', nodes: 4, runtimeSeconds: 1800, deadline: 12600 }],
  ['advance', 2940],
  ['finish', 'j0', 2940],
  ['advance', 3780],
  ['advance', 4920],
  ['fail', 'n5', 4920],
  ['advance', 4920],
  ['repair', 'n5', 4920],
  ['advance', 6060],
  [
    'admit',
    { id: 'j5', kind: 'Reservation', level: 'Enhanced', nodes: 1, runtimeSeconds: 3600, window: [13260, 16860] },
  ],
  ['advance', 6300],
  ['fail', 'n1', 6300],
  ['advance', 7020],
  ['admit', { id: 'j6', kind: 'BestEffort', level: 'Legacy', nodes: 2, runtimeSeconds: 1800 }],
  ['advance', 8040],
  ['repair', 'n1', 8040],
  ['advance', 8520],
  ['admit', { id: 'j7', kind: 'BestEffort', level: 'Legacy', nodes: 3, runtimeSeconds: 7200 }],
  ['advance', 9480],
  ['admit', { id: 'j8', kind: 'Deadline', level: 'Enhanced', nodes: 3, runtimeSeconds: 3600, deadline: 41880 }],
  ['advance', 10320],
  ['admit', { id: 'j9', kind: 'Deadline', level: 'Standard', nodes: 2, runtimeSeconds: 7200, deadline: 49920 }],
  ['advance', 10920],
  ['finish', 'j7', 10920],
  ['advance', 11040],
  ['admit', { id: 'j10', kind: 'BestEffort', level: 'Legacy', nodes: 3, runtimeSeconds: 1800 }],
  ['advance', 11640],
  ['fail', 'n4', 11640],
  ['advance', 12060],
  [
    'admit',
    { id: 'j11', kind: 'Reservation', level: 'Standard', nodes: 2, runtimeSeconds: 3600, window: [22860, 26460] },
  ],
  ['advance', 12900],
  ['admit', { id: 'j12', kind: 'BestEffort', level: 'Legacy', nodes: 1, runtimeSeconds: 14400 }],
  ['advance', 13140],
  ['advance', 13320],
  ['admit', { id: 'j13', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 1800 }],
  ['advance', 13680],
  ['fail', 'n5', 13680],
  ['advance', 14160],
  [
    'admit',
    { id: 'j14', kind: 'Reservation', level: 'Standard', nodes: 1, runtimeSeconds: 1800, window: [24960, 26760] },
  ],
  ['advance', 14280],
  ['fail', 'n1', 14280],
];

const T0 = Date.UTC(2026, 10, 23);
const at = (seconds: number) => T0 + seconds * 1000;

function replay(): PlanningManager {
  const pm = new PlanningManager({
    nodes: Array.from({ length: 5 }, (_, i) => ({ id: `n${i + 1}`, memoryGB: 16, cpus: 8 })),
    // The paper's site (support.ts), with checkpoints by need and no hand-over.
    timing: { ...defaultSiteTiming, ...paper, checkpointsByNeed: true, handoverSeconds: 0 },
    peerStandbyNodes: 0,
  });
  let now = T0;
  for (const event of events) {
    if (event[0] === 'advance') {
      now = at(event[1]);
      pm.advance(now);
    } else if (event[0] === 'admit') {
      const { deadline, window, ...rest } = event[1];
      pm.admit(
        {
          ...rest,
          coveredOutages: 1,
          storageGB: 0,
          requirements: {},
          value: 1,
          arrival: now,
          ...(deadline !== undefined ? { deadline: at(deadline) } : {}),
          ...(window ? { window: { start: at(window[0]), end: at(window[1]) } } : {}),
        },
        now,
      );
    } else if (event[0] === 'finish') pm.jobFinished(event[1], at(event[2]));
    else if (event[0] === 'fail') pm.nodeFailed(event[1], at(event[2]));
    else pm.nodeRepaired(event[1], at(event[2]));
  }
  return pm;
}

describe('a failing node while jobs make room for a replacement', () => {
  it('keeps every placement off the failing node until its failure is booked', () => {
    const pm = replay();
    const n1 = pm.mm.timeline(pm.mm.nodeIndex('n1')).bookings;
    const failure = n1.find((b) => b.owner === 'failure:n1');
    expect(failure).toBeDefined();
    expect(n1.filter((b) => b !== failure && b.start < (failure?.end ?? 0) && b.end > (failure?.start ?? 0))).toEqual(
      [],
    );
  });
});
