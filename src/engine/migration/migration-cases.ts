import { isoTime } from '../../domain/time.js';
import type { MigrationJob } from './migration-jobs.js';
import type { Peer } from './peers.js';
import type { NotMigratedReason, JobMigration, MigrationCase, MigrationRun } from './migration-model.js';

export function newCase(
  job: MigrationJob,
  problematic: boolean,
  peers: readonly Peer[],
  problem: string | undefined,
): MigrationCase {
  const report: JobMigration = {
    agreementId: job.agreementId,
    problematic,
    migrated: false,
    detail: '',
    dropped: [],
    offers: [],
  };
  if (problematic) report.problem = problem ?? job.problem ?? 'problematic';
  return { job, problematic, targets: [...peers], report, done: false, listed: problematic };
}

export function open(run: MigrationRun): MigrationCase[] {
  return run.cases.filter((c) => !c.done);
}

export function conclude(c: MigrationCase, reason: NotMigratedReason, detail: string): void {
  c.done = true;
  c.report.reason = reason;
  c.report.detail = detail;
}

export function drop(c: MigrationCase, peer: Peer, step: string, reason: string): void {
  c.targets = c.targets.filter((t) => t !== peer);
  c.report.dropped.push({ peer: peer.name, step, reason });
}

export function droppedText(c: MigrationCase): string {
  return c.report.dropped.map((d) => `${d.peer}: ${d.reason}`).join('; ') || 'no peers configured';
}

export function refusalsText(c: MigrationCase): string {
  return c.report.offers
    .filter((o) => o.refused)
    .map((o) => o.refused)
    .join('; ');
}

export function promiseOf(job: MigrationJob): number {
  return job.request.deadline?.getTime() ?? job.request.window?.end.getTime() ?? Number.NEGATIVE_INFINITY;
}

export function latestText(job: MigrationJob): string {
  const by = job.request.window
    ? "the reservation's start"
    : `to finish by the deadline ${job.request.deadline ? isoTime(job.request.deadline) : ''}`;
  return `${Number.isFinite(job.latestStart.getTime()) ? isoTime(job.latestStart) : 'none'} (${by})`;
}
