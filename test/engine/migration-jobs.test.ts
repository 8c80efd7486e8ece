import { describe, expect, it } from 'vitest';
import type { Agreement } from '../../src/domain/agreement.js';
import type { ServiceRequest } from '../../src/domain/terms.js';
import { arrivalAt, collectMigrationJobs, peerRequestFor } from '../../src/engine/migration/migration-jobs.js';
import { copyOf, planWhatIf } from '../../src/engine/migration/migration-schedule.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import { cluster } from '../scheduler/support.js';

/** The worked figures below take the thesis's checkpoint count (3.16) for every job. */
const thesisCount = { checkpointsByNeed: false };

/**
 * The controller's inputs from the real planning scheduler: 8 nodes of 16 GB. A (4 nodes, 1 h,
 * due 15:00) and B (4 nodes, 5 h, due 17:45, no slack) start at 12:00 side by side. At 12:30 a
 * node of A fails: A cannot restart in time on the 3 nodes left while B holds the other 4,
 * so A is in P; without B it could run at once.
 */
const T0 = new Date('2026-11-23T12:00:00Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const request = (over: Partial<ServiceRequest>): ServiceRequest => ({
  nodeCount: 4,
  libraries: [],
  requestKind: 'Binding',
  guaranteeLevel: 'Standard',
  maxCoveredOutages: 1,
  securityPolicy: [],
  runtimeSeconds: 3600,
  ...over,
});
const agreement = (id: string, req: ServiceRequest, over: Partial<Agreement> = {}): Agreement => ({
  id,
  templateId: 'deadline-job-v1',
  templateName: 'deadline-job',
  initiator: 'CN=alice',
  state: 'Observed',
  serviceTerms: [],
  guaranteeTerms: [],
  request: req,
  document: '<wsag:AgreementOffer/>',
  createdAt: T0,
  updatedAt: T0,
  ...over,
});

function scenario() {
  const plan = new PlanningService(cluster(8, { timing: thesisCount }));
  const a = agreement('A', request({ runtimeSeconds: 3600, deadline: at(180) }));
  const b = agreement('B', request({ runtimeSeconds: 5 * 3600, deadline: at(345) }));
  for (const x of [a, b]) expect(plan.admit(x.id, x.request, T0).accepted).toBe(true);
  const failed = plan.allocationOf('A')?.segments?.[0]?.nodeIds[0] as string;
  const report = plan.nodeFailed(failed, at(30));
  expect(report.problematic.map((p) => p.id)).toEqual(['A']);
  return { plan, a, b };
}

describe('the jobs the Migration Controller weighs, from the plan', () => {
  it('what each job has left, how big its checkpoint is, and by when it must resume elsewhere', () => {
    const { plan, a, b } = scenario();
    const terms = collectMigrationJobs(
      [a, b, agreement('gone', request({}), { state: 'Terminated' })],
      plan,
      at(30),
      () => [],
    );
    expect(terms.map((j) => j.agreementId)).toEqual(['A', 'B']);
    const [jobA, jobB] = terms;
    // A: 8 intervals of 454.5 s with 64 s checkpoints after 35 s of initialisation; by 12:30 three checkpoints were
    // written ((1800 - 35) / 518.5 = 3.4), so 5 intervals are left: 3600 s x 5/8 = 2250 s of the customer's runtime.
    // Resuming takes 35 (restart) + 5 x 454.5 + 4 x 64 + 15 (deinit) = 2578.5 s, 2579 s in whole seconds:
    // it must resume by 15:00 - 2579 s = 14:17:01. The checkpoint holds 4 nodes x 16 GB: 65536 MB.
    expect(jobA).toMatchObject({
      kind: 'Deadline',
      running: false,
      checkpointMB: 65536,
      remainingRuntimeSeconds: 2250,
      resumeSeconds: 2579,
      latestStart: new Date('2026-11-23T14:17:01Z'),
    });
    expect(jobA?.problem).toContain('node n01 failed');
    // B keeps running: 17 intervals of 1069.4 s with 64 s checkpoints, one written by 12:30, 16 left.
    expect(jobB).toMatchObject({ running: true, checkpointMB: 65536, remainingRuntimeSeconds: (5 * 3600 * 16) / 17 });
    expect(jobB?.problem).toBeUndefined();
  });

  it('a job that has not run has no checkpoint to move', () => {
    const plan = new PlanningService(cluster(8, { timing: thesisCount }));
    const later = agreement('later', request({ earliestStart: at(120), deadline: at(300) }));
    expect(plan.admit('later', later.request, T0).accepted).toBe(true);
    const [job] = collectMigrationJobs([later], plan, T0, () => []);
    expect(job).toMatchObject({ checkpointMB: 0, running: false, remainingRuntimeSeconds: 3600 });
  });

  it('what a peer is asked: the work left, from when the checkpoint is there, by the same deadline', () => {
    const { plan, a } = scenario();
    const [job] = collectMigrationJobs([a], plan, at(30), () => []);
    if (!job) throw new Error('no job');
    // 65536 MB at 100 MB/s: 655.36 s, so at 12:40:56 (rounded up to the second).
    expect(arrivalAt(job, 100, at(30))).toEqual(new Date('2026-11-23T12:40:56Z'));
    const asked = peerRequestFor(job, 100, at(30), 'site-a');
    expect(asked.name).toBe('migrated: agreement A from site-a');
    // The offer declares the 65536 MB checkpoint it resumes from: the peer takes no other.
    expect(asked.request).toEqual({
      ...a.request,
      earliestStart: new Date('2026-11-23T12:40:56Z'),
      runtimeSeconds: 2250,
      requestKind: 'Binding',
      resumesFromCheckpointBytes: 65536 * 1024 * 1024,
    });
  });
});

describe('the copy of the schedule (step 7)', () => {
  it('tells whether P shrinks without a job, and leaves the schedule itself as it was', () => {
    const { plan } = scenario();
    const before = [...plan.booked().entries()];
    const whatIf = planWhatIf(plan.manager, () => at(30));
    expect(whatIf.problematic().map((p) => p.id)).toEqual(['A']);
    expect(whatIf.problematicWithout(['B'])).toEqual([]);
    expect(whatIf.problematicWithout([])).toEqual(whatIf.problematic());
    expect([...plan.booked().entries()]).toEqual(before);
    expect(plan.manager.problematic().map((p) => p.id)).toEqual(['A']);
  });

  it('copies every job at its place and keeps the failed node blocked', () => {
    const { plan } = scenario();
    const copy = copyOf(plan.manager);
    expect([...copy.allJobs()].map((j) => [j.spec.id, j.segments])).toEqual(
      [...plan.manager.allJobs()].map((j) => [j.spec.id, j.segments]),
    );
    expect(copy.mm.bookingsOf('failure:n01')).toEqual(plan.manager.mm.bookingsOf('failure:n01'));
  });
});
