import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import { durationMs } from '../../src/domain/duration.js';
import { WsagError } from '../../src/domain/errors.js';
import { requestServingObjectives } from '../../src/domain/objectives.js';
import type { Allocation } from '../../src/domain/allocation.js';
import type { GuaranteeLevel, GuaranteeTerm, KpiTarget, ServiceRequest } from '../../src/domain/terms.js';

/**
 * Admission rule as a property: over random plans (earlier admissions) and random
 * offers with random guarantee terms, no accepted booking breaks an objective of its own
 * agreement at acceptance. The checks below are written independently of
 * src/domain/objectives.ts. Runs: WSAG_PROPERTY_RUNS (default 1000).
 */
const runs = Number(process.env.WSAG_PROPERTY_RUNS ?? 1000);
const now = new Date('2026-11-21T12:00:00Z').getTime();
const minute = 60_000;
const at = (minutes: number) => new Date(now + minutes * minute);

const levels: GuaranteeLevel[] = ['Background', 'Legacy', 'Standard', 'Enhanced'];

const target = fc.oneof(
  fc.integer({ min: -30, max: 24 * 60 }).map((m): KpiTarget => ({ kind: 'CompletedBy', at: at(m) })),
  fc.integer({ min: -30, max: 24 * 60 }).map((m): KpiTarget => ({ kind: 'StartBy', at: at(m) })),
  fc.integer({ min: 1, max: 10 }).map((n): KpiTarget => ({ kind: 'NodesAvailable', nodes: n })),
  fc
    .constantFrom('PT5M', 'PT20M', 'PT1H', 'PT6H')
    .map((i): KpiTarget => ({ kind: 'MaxCheckpointInterval', interval: i })),
);

const offer = fc
  .record({
    nodes: fc.integer({ min: 1, max: 9 }),
    level: fc.constantFrom(...levels),
    shape: fc.constantFrom('window', 'deadline', 'none'),
    startMinutes: fc.integer({ min: 0, max: 12 * 60 }),
    lengthMinutes: fc.integer({ min: 5, max: 6 * 60 }),
    slackMinutes: fc.integer({ min: -10, max: 12 * 60 }),
    targets: fc.array(target, { maxLength: 3 }),
  })
  .map(({ nodes, level, shape, startMinutes, lengthMinutes, slackMinutes, targets }) => {
    const request: ServiceRequest = {
      nodeCount: nodes,
      libraries: [],
      requestKind: 'Binding',
      guaranteeLevel: shape === 'window' ? 'Legacy' : level,
      maxCoveredOutages: level === 'Legacy' || level === 'Background' ? 0 : 1,
      securityPolicy: [],
      runtimeSeconds: lengthMinutes * 60,
    };
    if (shape === 'window') request.window = { start: at(startMinutes), end: at(startMinutes + lengthMinutes) };
    if (shape === 'deadline') {
      request.earliestStart = at(startMinutes);
      request.deadline = at(startMinutes + lengthMinutes + slackMinutes);
    }
    const terms: GuaranteeTerm[] = targets.map((t, i) => ({
      name: `G${i}`,
      serviceScope: ['S'],
      kpiName: t.kind,
      target: t,
      penalties: [],
      rewards: [],
    }));
    return { request, terms };
  });

/** What each objective means for a booking, judged from the plan's own pieces. */
function broken(term: GuaranteeTerm, request: ServiceRequest, booking: Allocation): string | undefined {
  const segments = booking.segments ?? [];
  const booked = {
    first: Math.min(...segments.map((s) => s.start.getTime())),
    last: Math.max(...segments.map((s) => s.end.getTime())),
  };
  // A window's pieces add its nodes' preparation before it and their release after it: the job itself holds them for the window.
  const first = request.window ? Math.max(request.window.start.getTime(), booked.first) : booked.first;
  const last = request.window ? Math.min(request.window.end.getTime(), booked.last) : booked.last;
  const t = term.target;
  switch (t.kind) {
    case 'CompletedBy':
      return last > t.at.getTime()
        ? `completes ${new Date(last).toISOString()} after ${t.at.toISOString()}`
        : undefined;
    case 'StartBy':
      return first > t.at.getTime() ? `starts ${new Date(first).toISOString()} after ${t.at.toISOString()}` : undefined;
    case 'NodesAvailable':
      return segments.some((s) => s.nodeIds.length < t.nodes) ? `a piece has fewer than ${t.nodes} nodes` : undefined;
    case 'MaxCheckpointInterval': {
      const compute =
        booking.checkpoints && booking.checkpoints.count > 0
          ? booking.checkpoints.intervalSeconds * 1000
          : (request.runtimeSeconds ?? 0) * 1000;
      return compute > durationMs(t.interval)
        ? `computes ${compute / 1000} s between save points, objective ${t.interval}`
        : undefined;
    }
    case 'Custom':
      return 'a custom KPI was accepted';
  }
}

describe('the admission rule', () => {
  it(`no accepted booking breaks its own guarantee objectives at acceptance (${runs} random plans and offers)`, () => {
    const cluster = clusterDescription(loadConfig({}, { clusterNodes: 8 }));
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.array(offer, { minLength: 1, maxLength: 8 }), (offers) => {
        const plan = new PlanningService(structuredClone(cluster));
        offers.forEach(({ request, terms }, i) => {
          let served: ServiceRequest;
          try {
            served = requestServingObjectives(request, terms);
          } catch (error) {
            if (!(error instanceof WsagError)) throw error;
            refused++;
            return;
          }
          const decision = plan.admit(`a${i}`, served, new Date(now), undefined, terms);
          if (!decision.accepted) {
            refused++;
            expect(plan.job(`a${i}`)).toBeUndefined(); // a refusal books nothing
            return;
          }
          accepted++;
          for (const term of terms)
            expect(
              broken(term, served, decision.allocation),
              `${term.name} ${JSON.stringify(term.target)}`,
            ).toBeUndefined();
        });
      }),
      { numRuns: runs },
    );
    // The generator must exercise both outcomes, or the property proves nothing.
    expect(accepted).toBeGreaterThan(runs / 4);
    expect(refused).toBeGreaterThan(runs / 4);
  });
});
