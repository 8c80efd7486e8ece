import { describe, expect, it } from 'vitest';
import { PlanningManager } from '../../src/scheduler/planning-manager.js';
import { unprotectedBreakRisk } from '../../src/scheduler/promise-risk.js';
import { cluster, hours, job, T0 } from './support.js';

describe('the risk of a promise without fault tolerance', () => {
  it('is the chance that one of its nodes fails during its run', () => {
    // 32 nodes for 48 h at 0.02 a node and day: 1.28 failures expected.
    expect(unprotectedBreakRisk(32, 48 * 3600, 0.02)).toBeCloseTo(1 - Math.exp(-1.28), 12);
    expect(unprotectedBreakRisk(1, 3600, 0)).toBe(0);
  });
});

describe('admission of a Legacy deadline job at risk', () => {
  // 40 nodes for 24 h at 0.02: 0.8 failures expected, a 55 % risk.
  const big = (id: string, level: 'Legacy' | 'Standard' = 'Legacy') =>
    job({ id, kind: 'Deadline', level, nodes: 40, runtimeSeconds: 24 * 3600, deadline: T0 + hours(72) });

  it('is refused above promiseRiskLimit, naming the risk and what to ask for instead', () => {
    const pm = new PlanningManager(cluster(40));
    const decision = pm.admit(big('a'), T0);
    expect(decision.accepted).toBe(false);
    if (decision.accepted) return;
    expect(decision.reason).toContain('a failure of any of its 40 node(s) during its 24 h run breaks it');
    expect(decision.reason).toContain('the risk is 55 %, above the 50 % it accepts (promiseRiskLimit)');
    expect(decision.reason).toContain('ask for Standard or a higher level');
  });

  it('is accepted within the limit, at a checkpointed level, or with the limit at 1', () => {
    expect(new PlanningManager(cluster(40, { timing: { promiseRiskLimit: 0.6 } })).admit(big('a'), T0).accepted).toBe(
      true,
    );
    expect(new PlanningManager(cluster(40)).admit(big('a', 'Standard'), T0).accepted).toBe(true);
    expect(new PlanningManager(cluster(40, { timing: { promiseRiskLimit: 1 } })).admit(big('a'), T0).accepted).toBe(
      true,
    );
  });

  it('weighs the failure rate the site has learned', () => {
    // 8 nodes for 24 h: 15 % at the configured 0.02, refused once the nodes fail far more often.
    const small = (id: string) =>
      job({ id, kind: 'Deadline', level: 'Legacy', nodes: 8, runtimeSeconds: 24 * 3600, deadline: T0 + hours(200) });
    const pm = new PlanningManager(cluster(8, { timing: { nodeFailuresPriorNodeDays: 8 } }));
    expect(pm.admit(small('a'), T0).accepted).toBe(true);
    pm.release('a');
    for (let i = 1; i <= 8; i++) {
      pm.nodeFailed(`n0${i}`, T0 + hours(1));
      pm.nodeRepaired(`n0${i}`, T0 + hours(2));
    }
    const after = pm.admit(small('b'), T0 + hours(2));
    expect(after.accepted).toBe(false);
    expect(!after.accepted && after.reason).toContain('(promiseRiskLimit)');
  });

  it('does not refuse a renegotiation of a promise already made', () => {
    const pm = new PlanningManager(cluster(40, { timing: { promiseRiskLimit: 1 } }));
    expect(pm.admit(big('a'), T0).accepted).toBe(true);
    const strict = new PlanningManager(cluster(40));
    expect(strict.probe(big('a'), T0, { replacing: 'a' }).accepted).toBe(true);
  });
});
