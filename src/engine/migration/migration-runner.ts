import type { Agreement, MigrationRecord } from '../../domain/agreement.js';
import type { GuaranteeTerm } from '../../domain/terms.js';
import type { AgreementService } from '../agreements/agreement-service.js';
import { systemActor } from '../audit/audit-notes.js';
import type { MigrationController, MigrationReport } from './migration-controller.js';
import { collectMigrationJobs } from './migration-jobs.js';
import type { PlanningService } from '../planning/planning-service.js';
import type { AgreementRepository } from '../ports.js';

export interface MigrationRunnerDeps {
  controller: MigrationController;
  repository: AgreementRepository;
  agreements: AgreementService;
  plan: PlanningService;
  termsOf(agreement: Agreement): GuaranteeTerm[];
  onReport?(report: MigrationReport): void;
  onProblem?(message: string, details: { agreementId?: string; error?: unknown }): void;
}

/**
 * Runs the Migration Controller over every Observed agreement still planned here, one run at
 * a time (a failure during a run waits for it), and notes on each problematic agreement
 * that stayed why it stayed: the customer's policy, no compatible peer, an offer dearer than
 * the penalty, ... (the violation that follows is then explained on the agreement itself).
 */
export class MigrationRunner {
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: MigrationRunnerDeps) {}

  run(now: Date): Promise<MigrationReport> {
    const run = this.running.then(() => this.once(now));
    this.running = run.catch(() => undefined);
    return run;
  }

  /** `record` of the controller: where the job went, on the local agreement. */
  async record(id: string, migration: MigrationRecord): Promise<void> {
    await this.deps.agreements.change(id, (a) => ({ ...a, migratedTo: migration, updatedAt: migration.at }), {
      actor: systemActor,
      action: 'migrated',
      details: {
        peer: migration.peer,
        remoteAgreementId: migration.remoteAgreementId,
        remoteAddress: migration.remoteAddress,
        price: { ...migration.price },
        ...(migration.penalty ? { penalty: { ...migration.penalty } } : {}),
      },
    });
  }

  private async once(now: Date): Promise<MigrationReport> {
    const { plan, repository, termsOf } = this.deps;
    const terms = (agreement: Agreement): GuaranteeTerm[] => {
      try {
        return termsOf(agreement);
      } catch (error) {
        this.deps.onProblem?.('the guarantee terms could not be read: the penalty at stake counts as none', {
          agreementId: agreement.id,
          error,
        });
        return [];
      }
    };
    const jobs = collectMigrationJobs(await repository.list({ state: 'Observed' }), plan, now, terms);
    const report = await this.deps.controller.run(jobs, now);
    await plan.settle();
    for (const job of report.jobs) {
      if (!job.problematic || job.migrated) continue;
      try {
        await this.deps.agreements.change(job.agreementId, (a) => ({ ...a, updatedAt: now }), {
          actor: systemActor,
          action: 'not-migrated',
          details: {
            reason: job.reason ?? null,
            detail: job.detail,
            unsolved: job.unsolved ?? false,
            ...(job.penalty ? { penaltyAtStake: { ...job.penalty } } : {}),
          },
        });
      } catch (error) {
        this.deps.onProblem?.('noting why a problematic job was not migrated failed', {
          agreementId: job.agreementId,
          error,
        });
      }
    }
    this.deps.onReport?.(report);
    return report;
  }
}
