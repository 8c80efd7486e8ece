import type { Agreement } from '../../domain/agreement.js';
import { UnknownResource } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import type { PostRuntimeInput } from '../../domain/post-runtime-report.js';
import type { GuaranteeTerm } from '../../domain/terms.js';
import type { AgreementService } from '../agreements/agreement-service.js';
import { systemActor } from '../audit/audit-notes.js';
import type { PlanningService } from '../planning/planning-service.js';
import type { AgreementRepository, AuditDetails, AuditLog, Clock } from '../ports.js';
import type { ExecutionEvent, JobExecutor, ReportStore, ResumePoint, StoredReport } from './ports.js';
import type { CheckpointData } from '../migration/ports.js';

export interface ExecutionServiceDeps {
  repository: AgreementRepository;
  agreements: AgreementService;
  plan: PlanningService;
  executor: JobExecutor;
  clock: Clock;
  reports: ReportStore;
  /** The agreement's guarantee terms, read from its document (an XML adapter). */
  termsOf(agreement: Agreement): GuaranteeTerm[];
  /** The audit trail: after a restart, the last checkpoint of a job that was running is found there. */
  audit?: AuditLog;
  /**
   * Agreements that hold capacity and wait for a checkpoint before they run (remote standby for another provider's Full
   * job); default none.
   */
  waitsForCheckpoint?(agreement: Agreement): boolean;
  /** Called after a re-plan left problematic jobs (the Migration Controller runs there). */
  onProblems?(now: Date): Promise<unknown>;
  /** Called once an agreement's run is over and its report written (releasing a remote standby). */
  afterRun?(agreement: Agreement): Promise<void>;
  /** Problems that fail no request (a change that could not be stored, a report that could not be written). */
  onProblem?(message: string, details: { agreementId?: string; error?: unknown }): void;
}

/** Thrown inside a change to leave the agreement as it is. */
export class Unchanged extends Error {}

/**
 * What the execution service keeps: each agreement's work queue and terms, the audited state changes, the problems it
 * reports (ExecutionService follows the runs).
 */
export abstract class ExecutionBook {
  protected readonly queues = new Map<string, Promise<void>>();

  protected readonly pending = new Set<Promise<void>>();

  /** The plan each job started with, for its report. */
  protected readonly plans = new Map<string, NonNullable<PostRuntimeInput['plan']>>();

  protected readonly terms = new Map<string, GuaranteeTerm[]>();

  /** Checkpoints received for jobs migrated here, by agreement. */
  protected readonly received = new Map<string, ResumePoint>();

  constructor(protected readonly deps: ExecutionServiceDeps) {
    deps.executor.subscribe((event) => this.onEvent(event));
  }

  /**
   * The guarantee terms of an agreement about to be stored, as the factory read them from the offer: its job need not
   * read the document again.
   */
  knowTerms(agreementId: string, terms: readonly GuaranteeTerm[]): void {
    this.terms.set(agreementId, [...terms]);
  }

  /** The agreement was not stored after all. */
  forgetTerms(agreementId: string): void {
    if (!this.deps.executor.has(agreementId)) this.terms.delete(agreementId);
  }

  protected termsFor(agreement: Agreement): GuaranteeTerm[] {
    let terms = this.terms.get(agreement.id);
    if (!terms) {
      try {
        terms = this.deps.termsOf(agreement);
      } catch (error) {
        this.problem(
          'the guarantee terms could not be read from the agreement document; none are judged',
          agreement.id,
          error,
        );
        terms = [];
      }
      this.terms.set(agreement.id, terms);
    }
    return terms;
  }

  /** The stored post-runtime report of an agreement the caller may read. */
  async report(id: string, caller: Caller): Promise<StoredReport> {
    await this.deps.agreements.get(id, caller);
    const stored = await this.deps.reports.read(id);
    if (!stored)
      throw new UnknownResource(
        `no post-runtime report for agreement "${id}" yet: it is written when the job's post-runtime is over`,
      );
    return stored;
  }

  /**
   * The job's latest checkpoint as data to send to a peer; the job stays here (a failed transfer leaves it as it was).
   */
  async checkpointOf(id: string): Promise<CheckpointData | undefined> {
    const record = this.deps.executor.record(id);
    const last = record?.checkpoints[record.checkpoints.length - 1];
    const reference = last?.reference ?? this.received.get(id)?.reference;
    return reference === undefined ? undefined : this.deps.executor.checkpointData(reference);
  }

  /** Resolves once every queued piece of work is done (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  protected async changeObserved(
    id: string,
    update: (a: Agreement) => Agreement,
    action: string,
    details: AuditDetails,
  ): Promise<void> {
    try {
      await this.deps.agreements.change(
        id,
        (a) => {
          if (a.state !== 'Observed') throw new Unchanged();
          return update(a);
        },
        { actor: systemActor, action, details },
      );
    } catch (error) {
      if (error instanceof Unchanged) return;
      this.problem(`storing "${action}" on the agreement failed`, id, error);
    }
  }

  /** Runs `work` after the agreement's earlier work; errors are reported, never thrown at the caller. */
  protected enqueue(id: string, work: () => Promise<unknown>): Promise<void> {
    const run = (this.queues.get(id) ?? Promise.resolve()).then(work).then(
      () => undefined,
      (error: unknown) => this.problem('run-time work failed', id, error),
    );
    this.queues.set(id, run);
    this.pending.add(run);
    void run.finally(() => {
      this.pending.delete(run);
      if (this.queues.get(id) === run) this.queues.delete(id);
    });
    return run;
  }

  protected problem(message: string, agreementId?: string, error?: unknown): void {
    this.deps.onProblem?.(message, {
      ...(agreementId !== undefined ? { agreementId } : {}),
      ...(error !== undefined ? { error } : {}),
    });
  }

  protected abstract onEvent(event: ExecutionEvent): void;
}
