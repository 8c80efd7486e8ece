import { describe, expect, it } from 'vitest';
import type { GuaranteeLevel } from '../../src/domain/terms.js';
import { liabilityOf, type LiabilityFacts } from '../../src/sim/index.js';

/** The simulator's facts judged by the domain's liability rules (src/domain/liability.ts). */
const T0 = Date.parse('2026-01-05T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const plan = {
  count: 5,
  intervalSeconds: 600,
  checkpointSeconds: 100,
  minSlotSeconds: 4160,
  jobMaxSeconds: 4860,
  worstCaseSeconds: 4920,
  outages: 1,
};
const piece = (start: number, end: number, restart: boolean) => ({
  start: T0 + start * 1000,
  end: T0 + end * 1000,
  nodes: ['n1'],
  spare: [],
  restart,
  intervals: 2,
});

function facts(level: GuaranteeLevel, over: Partial<LiabilityFacts> = {}): LiabilityFacts {
  return {
    jobId: 'j',
    level,
    coveredOutages: 1,
    outages: [{ at: at(1000), node: 'n1' }],
    suspensions: [],
    executed: [piece(0, 1000, false)],
    ...over,
  };
}

describe('liability in the simulator', () => {
  it('Full and Legacy pay for any broken promise; Background never', () => {
    expect(liabilityOf(facts('Full')).liable).toBe(true);
    expect(liabilityOf(facts('Legacy')).liable).toBe(true);
    expect(liabilityOf(facts('Background')).liable).toBe(false);
  });

  it('Standard is excused when an outage hit it and its mechanisms were applied', () => {
    expect(liabilityOf(facts('Standard'))).toMatchObject({ liable: false });
  });

  it('Standard and Enhanced pay without an outage behind the violation, after a suspension, or with a changed checkpoint plan', () => {
    expect(liabilityOf(facts('Standard', { outages: [] })).rule).toMatch(/^liable: no resource outage hit the job/);
    expect(liabilityOf(facts('Enhanced', { suspensions: [at(500)] })).rule).toMatch(
      /^liable: the provider suspended the job at 2026-01-05T00:08:20Z/,
    );
    const planChange = { at: at(800), agreed: plan, changed: { ...plan, count: 3, intervalSeconds: 900 }, secured: 1 };
    expect(liabilityOf(facts('Standard', { planChange })).rule).toBe(
      'liable: Standard checkpoints regularly, but the checkpoint securing interval 2 was not taken at 2026-01-05T00:13:20Z ' +
        '(the scheduler changed the checkpoint plan agreed at admission (5 checkpoints every 600 s) to 3 checkpoints every 900 s)',
    );
  });

  it('Enhanced pays for a covered outage it did not restart after, not for one it did', () => {
    expect(liabilityOf(facts('Enhanced')).rule).toMatch(
      /^liable: Enhanced keeps spare resources for 1 outage\(s\), but the job was not restarted after node n1 failed/,
    );
    const restarted = facts('Enhanced', { executed: [piece(0, 1000, false), piece(1000, 3000, true)] });
    expect(liabilityOf(restarted).liable).toBe(false);
  });

  it('a Grid offer the provider declined makes Standard pay, and only Standard', () => {
    const declined =
      'the cheapest offer (120.00 EUR from dear) costs no less than the penalty 100.00 EUR; paying the penalty is cheaper';
    expect(liabilityOf(facts('Standard', { gridDeclined: declined })).rule).toBe(
      `liable: Standard resumes the job on Grid resources when local ones are lacking (Hovestadt 2006, section 3.2.2), but the provider kept it: ${declined}`,
    );
    const restarted = facts('Enhanced', {
      executed: [piece(0, 1000, false), piece(1000, 3000, true)],
      gridDeclined: declined,
    });
    expect(liabilityOf(restarted).liable).toBe(false);
  });
});
