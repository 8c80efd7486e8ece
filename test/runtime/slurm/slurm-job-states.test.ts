import { describe, expect, it } from 'vitest';
import { isActive, outcomeOf, slurmJobName } from '../../../src/runtime/slurm/slurm-jobs.js';
import { walltimeMinutes } from '../../../src/runtime/slurm/slurm-resource-manager.js';

/** What each Slurm job state means for the plan (src/runtime/slurm/slurm-jobs.ts). */
describe('Slurm job states', () => {
  const job = (state: string, exitStatus = 0, reason = 'None') => ({ id: '7', state, reason, exitStatus });

  it('a job still pending, running or being torn down is active; COMPLETED has finished', () => {
    for (const state of ['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED'])
      expect(outcomeOf(job(state))).toEqual({ kind: 'active' });
    expect(isActive('COMPLETED')).toBe(false);
    expect(outcomeOf(job('COMPLETED'))).toEqual({ kind: 'finished' });
  });

  it('every other end is a failure that says why; a node failure is marked as one', () => {
    expect(outcomeOf(job('FAILED', 3 * 256))).toEqual({
      kind: 'failed',
      nodeFailure: false,
      reason: 'Slurm job 7 ended FAILED: the application failed (exit code 3)',
    });
    expect(outcomeOf(job('FAILED', 9))).toMatchObject({
      reason: 'Slurm job 7 ended FAILED: the application failed (signal 9)',
    });
    expect(outcomeOf(job('TIMEOUT'))).toEqual({
      kind: 'failed',
      nodeFailure: false,
      reason: 'Slurm job 7 ended TIMEOUT: the walltime was exceeded',
    });
    expect(outcomeOf(job('NODE_FAIL', 15))).toEqual({
      kind: 'failed',
      nodeFailure: true,
      reason: 'Slurm job 7 ended NODE_FAIL: a node failed',
    });
    expect(outcomeOf(job('CANCELLED'))).toMatchObject({
      reason: 'Slurm job 7 ended CANCELLED: it was cancelled in Slurm, not by wsag-server',
    });
    expect(outcomeOf(job('SPECIAL_EXIT', 0, 'BadConstraints'))).toMatchObject({
      kind: 'failed',
      reason: 'Slurm job 7 ended SPECIAL_EXIT: BadConstraints',
    });
  });

  it('names jobs wsag_<id> with what Slurm names may hold, and rounds the walltime up to minutes with one to spare', () => {
    expect(slurmJobName('3f2a-b:1 x')).toBe('wsag_3f2a-b-1-x');
    expect(walltimeMinutes(1)).toBe(2);
    expect(walltimeMinutes(60_000)).toBe(2);
    expect(walltimeMinutes(60_001)).toBe(3);
  });
});
