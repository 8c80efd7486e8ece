import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Allocation } from '../../src/domain/allocation.js';
import { WsagError } from '../../src/domain/errors.js';
import type { GuaranteeTerm, ServiceRequest } from '../../src/domain/terms.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';

/**
 * No input leaves the scheduler's structures inconsistent. Random offers, many
 * of them failing (times beyond the horizon or not finite, too many nodes, deadlines
 * that cannot be met, objectives the booking would break, windows already taken), are
 * admitted one after the other: every refused one leaves the plan exactly as it was, and
 * at the end the plan equals a plan rebuilt from the accepted bookings alone (what a
 * restart rebuilds from the stored agreements). Runs: WSAG_PROPERTY_RUNS (default 1000).
 */
const runs = Number(process.env.WSAG_PROPERTY_RUNS ?? 1000);
const now = new Date('2026-11-21T12:00:00Z');
const minute = 60_000;
const at = (minutes: number) => new Date(now.getTime() + minutes * minute);

const time = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -60, max: 48 * 60 }).map(at) },
  { weight: 1, arbitrary: fc.constantFrom(new Date(Number.NaN), at(400 * 24 * 60), new Date(8.64e15)) },
);

const offer = fc
  .record({
    nodes: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 1, max: 8 }) },
      { weight: 1, arbitrary: fc.constantFrom(0, 9, 1000, Number.POSITIVE_INFINITY) },
    ),
    shape: fc.constantFrom('window', 'deadline', 'none', 'background'),
    start: time,
    lengthMinutes: fc.integer({ min: 1, max: 12 * 60 }),
    end: fc.option(time),
    completedBy: fc.option(time),
    nodesAvailable: fc.option(fc.integer({ min: 0, max: 10 })),
  })
  .map(({ nodes, shape, start, lengthMinutes, end, completedBy, nodesAvailable }) => {
    const request: ServiceRequest = {
      nodeCount: nodes,
      libraries: [],
      requestKind: 'Binding',
      guaranteeLevel: shape === 'background' ? 'Background' : shape === 'window' ? 'Legacy' : 'Standard',
      maxCoveredOutages: shape === 'deadline' ? 1 : 0,
      securityPolicy: [],
      runtimeSeconds: lengthMinutes * 60,
    };
    const finish = end ?? new Date(start.getTime() + lengthMinutes * minute);
    if (shape === 'window') request.window = { start, end: finish };
    if (shape === 'deadline') {
      request.earliestStart = start;
      request.deadline = finish;
    }
    const terms: GuaranteeTerm[] = [];
    if (completedBy && shape !== 'background')
      terms.push({
        name: 'C',
        serviceScope: ['S'],
        kpiName: 'c',
        target: { kind: 'CompletedBy', at: completedBy },
        penalties: [],
        rewards: [],
      });
    if (nodesAvailable !== null)
      terms.push({
        name: 'N',
        serviceScope: ['S'],
        kpiName: 'n',
        target: { kind: 'NodesAvailable', nodes: nodesAvailable },
        penalties: [],
        rewards: [],
      });
    return { request, terms };
  });

/** The plan as a restart would compare it: every booking's pieces, node by node. */
const snapshot = (plan: PlanningService) => JSON.stringify([...plan.booked()].sort(([a], [b]) => (a < b ? -1 : 1)));

describe('a failed booking leaves the plan exactly as it was', () => {
  it(`over ${runs} random sequences of offers, many of them failing`, () => {
    const cluster = clusterDescription(loadConfig({}, { clusterNodes: 8 }));
    let refused = 0;
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(offer, { minLength: 1, maxLength: 12 }), (offers) => {
        const plan = new PlanningService(cluster);
        const stored: Array<{ key: string; request: ServiceRequest }> = [];
        offers.forEach(({ request, terms }, i) => {
          const before = snapshot(plan);
          let decision: ReturnType<PlanningService['admit']> | undefined;
          try {
            decision = plan.admit(`j${i}`, request, now, undefined, terms);
          } catch (error) {
            // Refused by a named fault (the horizon); anything else is a defect.
            expect(error).toBeInstanceOf(WsagError);
          }
          if (decision?.accepted) {
            accepted++;
            stored.push({ key: `j${i}`, request });
          } else {
            refused++;
            expect(snapshot(plan)).toBe(before);
          }
        });
        // What a restart rebuilds from the stored agreements (their allocations as last stored, moves included) is the plan that is.
        const rebuilt = new PlanningService(cluster);
        for (const { key, request } of stored)
          expect(rebuilt.restoreExact(key, request, plan.allocationOf(key) as Allocation, now)).toBe(true);
        expect(snapshot(rebuilt)).toBe(snapshot(plan));
        // And the plan still admits: a one-node job with a free day ahead.
        const probe = plan.admit(
          'probe',
          {
            nodeCount: 1,
            libraries: [],
            requestKind: 'Binding',
            guaranteeLevel: 'Legacy',
            maxCoveredOutages: 0,
            securityPolicy: [],
            window: { start: at(3 * 24 * 60), end: at(3 * 24 * 60 + 60) },
            runtimeSeconds: 3600,
          },
          now,
        );
        expect(probe.accepted).toBe(true);
      }),
      { numRuns: runs },
    );
    expect(refused).toBeGreaterThan(runs); // the property saw failures, not only successes
    expect(accepted).toBeGreaterThan(runs / 2);
  });
});
