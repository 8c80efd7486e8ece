import fc from 'fast-check';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInputs, parseCluster, parseWorkload, simulate } from '../../src/sim/index.js';
import { projectRoot } from '../support/server.js';

/**
 * An accepted promise, without failures, is always kept: the plan books every piece of work
 * the provider must do (preparing nodes before a window, releasing them after it,
 * initialising, checkpointing), so nothing the plan left out can break it. Over the 10k
 * workload, and over random workloads on a small cluster with set-up times.
 */
describe('without failures, every accepted promise is kept', () => {
  it('workloads/10k.json with its failures taken out: 0 violations of any kind, every accepted job completed', () => {
    const { workload, cluster } = loadInputs(path.join(projectRoot, 'workloads', '10k.json'), undefined, {
      failureRate: 0,
    });
    const report = simulate(workload, cluster);
    expect(report.failures.events).toBe(0);
    expect(report.violations).toMatchObject({
      total: 0,
      deadlineMissed: 0,
      reservationNotHonoured: 0,
      leftInP: 0,
      stillInP: 0,
    });
    expect(report.requests.total.completed).toBe(report.requests.total.accepted);
    expect(report.requests.reservation.accepted).toBeGreaterThan(1000);
    expect(report.requests.deadline.accepted).toBeGreaterThan(1000);
  });

  const job = fc.record({
    kind: fc.constantFrom('reservation', 'deadline', 'best-effort', 'background'),
    level: fc.constantFrom('Legacy', 'Standard', 'Enhanced'),
    arrival: fc.integer({ min: 0, max: 7200 }),
    ahead: fc.integer({ min: 0, max: 3600 }),
    nodes: fc.integer({ min: 1, max: 4 }),
    estimate: fc.integer({ min: 60, max: 3600 }),
    slack: fc.double({ min: 1, max: 4, noNaN: true }),
  });

  it('random workloads on 6 nodes with set-up and release times', () => {
    const cluster = parseCluster({
      nodes: [{ count: 6, prefix: 'n', memoryGB: 32, cpus: 8 }],
      timing: { nodeInitSeconds: 45, storageMountSeconds: 5, deinitSeconds: 20, handoverSeconds: 1 },
    });
    fc.assert(
      fc.property(fc.array(job, { minLength: 1, maxLength: 30 }), (jobs) => {
        const workload = parseWorkload({
          jobs: jobs.map((j, i) => {
            const base = { id: `j${i}`, arrival: j.arrival, nodes: j.nodes, value: 1, penalty: 10 };
            if (j.kind === 'reservation')
              return {
                ...base,
                kind: j.kind,
                level: j.level,
                window: { start: j.arrival + j.ahead, end: j.arrival + j.ahead + j.estimate },
              };
            if (j.kind === 'deadline')
              return {
                ...base,
                kind: j.kind,
                level: j.level,
                estimate: j.estimate,
                deadline: j.arrival + Math.ceil(j.estimate * j.slack) + 600,
              };
            return {
              ...base,
              kind: j.kind,
              ...(j.kind === 'best-effort' ? { level: 'Legacy' } : {}),
              estimate: j.estimate,
            };
          }),
        });
        const report = simulate(workload, cluster);
        expect(report.violations.total, JSON.stringify(report.violated)).toBe(0);
        expect(report.requests.total.completed).toBe(report.requests.total.accepted);
      }),
      { numRuns: 60 },
    );
  });
});
