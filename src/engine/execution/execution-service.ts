import type { Agreement } from '../../domain/agreement.js';
import { liveStates, nextAgreementState } from '../../domain/agreement-state-machine.js';
import { serviceTermStateOf, type ExecutionRecord } from '../../domain/execution.js';
import { postRuntimeReport, reportText, type PostRuntimeInput } from '../../domain/post-runtime-report.js';
import { isoTime } from '../../domain/time.js';
import type { ReplanReport } from '../../scheduler/model.js';
import type { AgreementChange } from '../agreements/agreement-changes.js';
import { eventAction, serviceTermsAre, serviceTermsIn } from './execution-notes.js';
import { migrationJson, planSummary } from './execution-summaries.js';
import { lastCheckpoint, lastHandOver } from './run-trail.js';
import type { ExecutionEvent, HandOver, ResumePoint, StoredReport } from './ports.js';
import { ExecutionBook, Unchanged } from './execution-book.js';
export type { ExecutionServiceDeps } from './execution-book.js';

/** What a node failure or repair changed, and what the Migration Controller did about it. */
export interface NodeEventOutcome extends ReplanReport {
  node: string;
  /** Agreements whose plan changed, with an audit entry each. */
  agreements: string[];
  migration?: unknown;
}

/** What happened to the live agreements at start-up. */
export interface ResumeOutcome {
  started: string[];
  /**
   * Jobs that were running when the server stopped: they resume from their last checkpoint (or from the start without
   * one).
   */
  resumed: Array<{ id: string; fromCheckpoint?: string }>;
  completed: string[];
  notExecuted: Array<{ id: string; reason: string }>;
}

type StartOutcome = 'started' | 'not-started' | 'waits-for-checkpoint' | 'no-run-time';

/**
 * The run time of accepted agreements (Hovestadt 2006, section 3.3; docs/operations.md "Run time"):
 * every Observed agreement's planned job is handed to the executor; what the executor
 * reports moves the agreement's service term states (NotReady, Ready/Processing or Idle,
 * Completed), its guarantee term states (Fulfilled, Violated) and, once post-runtime is
 * over, the agreement from Observed to Complete; the post-runtime report is stored. Every
 * change goes through AgreementService.change with an audit note by `system`.
 *
 * Failures: a node failure stops the jobs on it (executor first, so the outage is recorded),
 * the scheduler re-plans, and each affected job gets its new plan; jobs the scheduler gives
 * up are abandoned. Work for one agreement runs in order; `idle()` waits for all of it.
 */
export class ExecutionService extends ExecutionBook {
  // ------------------------------------------------------------------ agreements

  /**
   * Follows every stored agreement change (ObservedAgreementRepository): accepted ones start, ended ones stop, moved
   * ones get their new plan.
   */
  agreementChanged({ before, after, notes }: AgreementChange): void {
    const id = after.id;
    const { executor } = this.deps;
    // Terms known ahead for an agreement that never ran (rejected while Pending, say) are not kept.
    if (!liveStates.includes(after.state) && !executor.has(id)) this.terms.delete(id);
    if (after.state === 'Observed' && before?.state !== 'Observed') {
      this.enqueue(id, () => this.start(after));
    } else if (
      before?.state === 'Observed' &&
      executor.has(id) &&
      (after.state === 'Terminated' || notes.some((n) => n.action === 'expired'))
    ) {
      const why =
        after.state === 'Terminated' ? 'the agreement was terminated' : 'the agreement expired (wsag:ExpirationTime)';
      this.enqueue(id, async () => {
        if (executor.has(id)) await executor.abandon(id, why);
      });
    } else if (after.state === 'Observed' && notes.some((n) => n.action === 'renegotiated')) {
      this.enqueue(id, () => this.renegotiated(after));
    } else if (
      after.state === 'Observed' &&
      executor.has(id) &&
      JSON.stringify(before?.allocation) !== JSON.stringify(after.allocation)
    ) {
      this.enqueue(id, () => this.replan(id));
    }
  }

  /**
   * Hands an Observed agreement's planned job to the executor. Nothing happens if it runs
   * already, moved away, has no booking of its own (it uses a reservation, or its booking was
   * lost), waits for a checkpoint, or there is no run time.
   */
  private async start(agreement: Agreement, resumeFrom?: ResumePoint, handedOver?: HandOver): Promise<StartOutcome> {
    const { executor, plan } = this.deps;
    if (executor.has(agreement.id) || agreement.migratedTo) return 'not-started';
    const planned = plan.job(agreement.id);
    if (!planned) return 'not-started';
    const received = this.received.get(agreement.id);
    if (!received && this.deps.waitsForCheckpoint?.(agreement)) return 'waits-for-checkpoint';
    if (executor.runsJobs) {
      const application = agreement.request.application;
      this.plans.set(agreement.id, planSummary(planned));
      executor.execute(
        planned,
        plan.manager.shape(planned),
        { guaranteeTerms: this.termsFor(agreement), ...(application ? { application } : {}) },
        resumeFrom ?? received,
        handedOver,
      );
      if (executor.has(agreement.id)) return 'started';
    }
    // No run time (WSAG_EXECUTOR=none): nothing is read or kept for a report that will not come.
    this.plans.delete(agreement.id);
    this.terms.delete(agreement.id);
    return 'no-run-time';
  }

  /**
   * A renegotiated agreement: a job that has not computed yet starts over on the new terms; a running one gets the new
   * plan.
   */
  private async renegotiated(agreement: Agreement): Promise<void> {
    const { executor } = this.deps;
    if (!executor.has(agreement.id)) return;
    if (executor.record(agreement.id)?.startedAt === undefined) {
      executor.forget(agreement.id);
      this.terms.delete(agreement.id);
      await this.start(agreement);
      return;
    }
    await this.replan(agreement.id);
  }

  /** The executor gets the scheduler's current plan of the job (a copy). */
  private async replan(id: string): Promise<void> {
    const planned = this.deps.plan.job(id);
    if (planned && this.deps.executor.has(id)) await this.deps.executor.replan(planned);
  }

  // ------------------------------------------------------------------ executor events

  /** Each event is applied in order, with the record as it was when the event happened. */
  protected onEvent(event: ExecutionEvent): void {
    const record = this.deps.executor.record(event.jobId);
    this.enqueue(event.jobId, () => this.apply(event, record));
  }

  private async apply(event: ExecutionEvent, record: ExecutionRecord | undefined): Promise<void> {
    const id = event.jobId;
    if (event.type === 'closed') {
      await this.finish(id, event.at);
      return;
    }
    const noted = eventAction(event);
    const service = record ? serviceTermStateOf(record) : undefined;
    await this.changeObserved(
      id,
      (agreement) => {
        // A job that moved to a peer is served there: only what happened here is noted.
        if (agreement.migratedTo) {
          if (!noted || event.type === 'violated' || event.type === 'fulfilled') throw new Unchanged();
          return { ...agreement, updatedAt: event.at };
        }
        const serviceChanged = service !== undefined && !serviceTermsAre(agreement.serviceTerms, service);
        let guaranteeTerms = agreement.guaranteeTerms;
        if (event.type === 'violated' || event.type === 'fulfilled') {
          const state = event.type === 'violated' ? 'Violated' : 'Fulfilled';
          guaranteeTerms = agreement.guaranteeTerms.map((g) =>
            g.termName === event.evaluation.term ? { ...g, state } : g,
          );
        }
        if (!noted && !serviceChanged) throw new Unchanged();
        return {
          ...agreement,
          serviceTerms: service ? serviceTermsIn(agreement.serviceTerms, service) : agreement.serviceTerms,
          guaranteeTerms,
          updatedAt: event.at,
        };
      },
      noted?.action ?? 'service-state-changed',
      {
        ...(noted?.details ?? (event.type === 'phase' ? { phase: event.phase, nodes: event.nodes } : {})),
        ...(service ? { serviceState: service.subState ? `${service.state}/${service.subState}` : service.state } : {}),
      },
    );
    // The job's nodes are free before its booking ends: waiting jobs may take them (Hovestadt 2006, section 3.5, "job
    // finishes").
    if ((event.type === 'completed' || event.type === 'failed') && this.deps.plan.job(id)) {
      // Not waiting for the other jobs' queues from inside this one's.
      await this.followReplan(this.deps.plan.jobFinished(id, this.deps.clock.now()), false);
    }
  }

  /** Post-runtime is over: the report is written, then the agreement completes with its guarantee terms judged. */
  private async finish(id: string, at: Date): Promise<void> {
    const { executor, repository, reports } = this.deps;
    const record = executor.record(id);
    const agreement = await repository.get(id);
    if (!record || !agreement) {
      executor.forget(id);
      return;
    }
    const judged = agreement.state === 'Observed' && !agreement.migratedTo;
    const evaluations = executor.evaluations(id);
    const notes: string[] = [];
    if (agreement.migratedTo) {
      const m = agreement.migratedTo;
      notes.push(
        `The job moved to ${m.peer} (agreement ${m.remoteAgreementId}, ${m.remoteAddress}) at ` +
          `${isoTime(m.at)}: its guarantee terms are judged there.`,
      );
    } else if (!judged) {
      notes.push(`The agreement was ${agreement.state} before the job ended: its guarantee terms were not judged.`);
    }
    const { report } = postRuntimeReport({
      agreementId: id,
      request: agreement.request,
      guaranteeTerms: this.terms.get(id) ?? [],
      record,
      evaluations: judged ? evaluations : [],
      ...(this.plans.has(id) ? { plan: this.plans.get(id) as NonNullable<PostRuntimeInput['plan']> } : {}),
      generatedAt: this.deps.clock.now(),
    });
    const kept: StoredReport['report'] = {
      ...report,
      ...(notes.length ? { notes } : {}),
      ...(agreement.migratedTo ? { migratedTo: migrationJson(agreement.migratedTo) } : {}),
    };
    const stored: StoredReport = { report: kept, text: reportText(kept) };
    try {
      await reports.save(id, stored);
    } catch (error) {
      this.problem('the post-runtime report could not be stored', id, error);
    }
    if (judged) {
      const byTerm = new Map(evaluations.map((e) => [e.term, e.state]));
      await this.changeObserved(
        id,
        (a) => ({
          ...a,
          state: nextAgreementState(a.state, 'complete'),
          serviceTerms: serviceTermsIn(a.serviceTerms, serviceTermStateOf(record)),
          guaranteeTerms: a.guaranteeTerms.map((g) => ({ ...g, state: byTerm.get(g.termName) ?? g.state })),
          updatedAt: at,
        }),
        'completed',
        {
          outcome: report.happened.outcome,
          penalties: report.totals.penalties.map((m) => ({ ...m })),
          excused: report.totals.excused.map((m) => ({ ...m })),
          rewards: report.totals.rewards.map((m) => ({ ...m })),
        },
      );
    }
    executor.forget(id);
    this.plans.delete(id);
    this.terms.delete(id);
    this.received.delete(id);
    if (this.deps.afterRun) {
      const latest = (await repository.get(id)) ?? agreement;
      await this.deps
        .afterRun(latest)
        .catch((error: unknown) => this.problem('the clean-up after the run failed', id, error));
    }
  }

  // ------------------------------------------------------------------ failures and the plan's clock

  /**
   * A node failed: the executor stops the jobs on it, the scheduler re-plans, each affected job gets its new plan; P
   * goes to the Migration Controller.
   */
  async nodeFailed(node: string, actor: string): Promise<NodeEventOutcome> {
    const now = this.deps.clock.now();
    await this.deps.executor.nodeFailed(node);
    return this.afterNodeEvent(node, this.deps.plan.nodeFailed(node, now), 'node-failed', actor, now);
  }

  /** A node is back: the scheduler re-plans (problems may be solved, gaps filled). */
  async nodeRepaired(node: string, actor: string): Promise<NodeEventOutcome> {
    const now = this.deps.clock.now();
    return this.afterNodeEvent(node, this.deps.plan.nodeRepaired(node, now), 'node-repaired', actor, now);
  }

  private async afterNodeEvent(
    node: string,
    report: ReplanReport,
    action: string,
    actor: string,
    now: Date,
  ): Promise<NodeEventOutcome> {
    await this.followReplan(report);
    const outcomes = new Map<string, string>();
    for (const id of report.moved) outcomes.set(id, 'moved');
    for (const id of report.suspended) outcomes.set(id, 'suspended');
    for (const id of report.solved) outcomes.set(id, 'solved');
    for (const p of report.problematic) if (!outcomes.has(p.id)) outcomes.set(p.id, `problematic: ${p.reason}`);
    const recorded: string[] = [];
    for (const [id, outcome] of outcomes) {
      if (!(await this.deps.repository.get(id))) continue; // a preparatory hold: its negotiation records the move
      try {
        await this.deps.agreements.change(id, (a) => ({ ...a, updatedAt: now }), {
          actor,
          action,
          details: { node, outcome },
        });
        recorded.push(id);
      } catch (error) {
        this.problem(`recording the ${action} on the agreement failed`, id, error);
      }
    }
    const outcome: NodeEventOutcome = { node, ...report, agreements: recorded };
    if (report.problematic.length > 0 && this.deps.onProblems) outcome.migration = await this.deps.onProblems(now);
    return outcome;
  }

  /**
   * Moves the plan's clock (the server's timer): jobs the scheduler gave up unsolved are
   * abandoned (their promise is broken), a node still failed past its block is taken out
   * again and the affected jobs get their new plans.
   */
  async advance(now: Date): Promise<ReplanReport | undefined> {
    const { report, left } = this.deps.plan.advanceReport(now);
    if (report) {
      await this.followReplan(report);
      if (report.problematic.length > 0 && this.deps.onProblems) await this.deps.onProblems(now);
    }
    for (const job of left) {
      if (job.problem === undefined || !this.deps.executor.has(job.id)) continue;
      const reason = `the scheduler gave the job up: ${job.problem}`;
      this.enqueue(job.id, async () => {
        if (this.deps.executor.has(job.id)) await this.deps.executor.abandon(job.id, reason);
      });
    }
    return report;
  }

  /**
   * Stores what the scheduler moved and hands every moved or re-planned job its new plan
   * (queued behind each job's earlier work; `wait`: until they have it).
   */
  private async followReplan(report: ReplanReport, wait = true): Promise<void> {
    await this.deps.plan.settle();
    const ids = new Set([
      ...report.moved,
      ...report.suspended,
      ...report.solved,
      ...report.problematic.map((p) => p.id),
    ]);
    const replans = [...ids]
      .filter((id) => this.deps.executor.has(id))
      .map((id) => this.enqueue(id, () => this.replan(id)));
    if (wait) await Promise.all(replans);
  }

  // ------------------------------------------------------------------ migration

  /**
   * The job moved to a peer: its capacity here is freed (waiting jobs may take it) and its run stops; the agreement
   * stays Observed, migratedTo says where the job went.
   */
  async releaseMigrated(id: string): Promise<void> {
    const now = this.deps.clock.now();
    if (this.deps.plan.job(id)) await this.followReplan(this.deps.plan.jobFinished(id, now));
    if (this.deps.executor.has(id)) {
      const to = (await this.deps.repository.get(id))?.migratedTo;
      await this.enqueue(id, async () => {
        if (this.deps.executor.has(id))
          await this.deps.executor.abandon(
            id,
            `migrated${to ? ` to ${to.peer} (agreement ${to.remoteAgreementId})` : ''}`,
          );
      });
    }
  }

  /** A checkpoint arrived for a job migrated here: the job starts from it (if it has not computed yet). */
  async checkpointReceived(
    id: string,
    file: string,
    upload: { uploader: string; sizeBytes: number; sha256: string },
  ): Promise<void> {
    const point: ResumePoint = { reference: file, interval: 0 };
    this.received.set(id, point);
    await this.enqueue(id, async () => {
      const { executor } = this.deps;
      let resumes: boolean;
      if (executor.has(id)) resumes = executor.resumeFrom(id, point);
      else {
        const agreement = await this.deps.repository.get(id);
        resumes = agreement?.state === 'Observed' ? (await this.start(agreement, point)) === 'started' : false;
      }
      await this.deps.agreements.change(id, (a) => ({ ...a, updatedAt: this.deps.clock.now() }), {
        actor: upload.uploader,
        action: 'checkpoint-received',
        details: { reference: file, sizeBytes: upload.sizeBytes, sha256: upload.sha256, resumesFromIt: resumes },
      });
      if (!resumes && executor.has(id))
        this.problem('a checkpoint arrived after the job had started computing: it goes on without it', id);
    });
  }

  // ------------------------------------------------------------------ start-up

  /**
   * After a (re)start, with the plan restored: agreements that were waiting start as
   * planned; jobs that were computing when the server stopped resume from their last
   * checkpoint on the audit trail (the restart of the server counts as a planned restart of
   * the job); jobs that had ended but whose agreement was not completed are completed now
   * (their execution record was lost with the process: no report).
   */
  async resume(): Promise<ResumeOutcome> {
    const outcome: ResumeOutcome = { started: [], resumed: [], completed: [], notExecuted: [] };
    if (!this.deps.executor.runsJobs) return outcome; // no run time: no job ran, none starts
    for (const agreement of await this.deps.repository.list({ state: 'Observed' })) {
      if (agreement.migratedTo) continue;
      const id = agreement.id;
      const ran = agreement.serviceTerms.some((t) => t.state !== 'NotReady');
      if (agreement.serviceTerms.length > 0 && agreement.serviceTerms.every((t) => t.state === 'Completed')) {
        await this.changeObserved(
          id,
          (a) => ({ ...a, state: nextAgreementState(a.state, 'complete'), updatedAt: this.deps.clock.now() }),
          'completed',
          {
            note:
              'the job had ended before the server restarted; its execution record was lost with the ' +
              'process, so there is no post-runtime report',
          },
        );
        outcome.completed.push(id);
        continue;
      }
      if (!this.deps.plan.job(id)) {
        if (agreement.request.useReservation === undefined)
          outcome.notExecuted.push({ id, reason: 'no booking in the plan (it could not be booked again at start-up)' });
        continue;
      }
      const point = await lastCheckpoint(this.deps.audit, id);
      if (point?.received) this.received.set(id, point.point);
      const resumeFrom = ran ? point?.point : point?.received ? point.point : undefined;
      // A session whose nodes were handed over keeps them through the restart: the plan never released them.
      const handedOver = ran && agreement.request.window ? await lastHandOver(this.deps.audit, id) : undefined;
      const started = await this.start(agreement, resumeFrom, handedOver);
      if (started === 'no-run-time') continue;
      if (started !== 'started') {
        outcome.notExecuted.push({
          id,
          reason:
            started === 'waits-for-checkpoint'
              ? 'it holds standby capacity and waits for a checkpoint'
              : 'it is not executed here',
        });
        continue;
      }
      if (ran) outcome.resumed.push({ id, ...(resumeFrom ? { fromCheckpoint: resumeFrom.reference } : {}) });
      else outcome.started.push(id);
    }
    return outcome;
  }

  // ------------------------------------------------------------------ plumbing
}
