import { appendFact, type ExecutionFact, type ExecutionRecord, type RestartCause } from '../domain/execution.js';
import { evaluateGuarantee, nextCheck, type GuaranteeEvaluation } from '../domain/guarantee-evaluation.js';
import type { ExecutionEvent, ExecutionTerms, ResumePoint } from '../engine/execution/index.js';
import type { JobShape } from '../scheduler/job-timing.js';
import type { PlannedJob } from '../scheduler/model.js';
import type { RuntimeClock } from './clock.js';
import { judgingContext } from './hand-over.js';
import type { PlannedPiece } from './piece-timeline.js';
import { eventOf } from './execution-events.js';
import type { ResourceManager, ResourceManagerEvent } from './resource-manager.js';

export interface PlanExecutorOptions {
  clock: RuntimeClock;
  resourceManager: ResourceManager;
  listener?: (event: ExecutionEvent) => void;
  /** Errors of resource-manager calls that do not change the record (stop, cleanup) and of the listener. */
  onError?: (error: unknown) => void;
}

/** The piece being executed now, and what is set on the clock for it. */
export interface ActivePiece {
  piece: PlannedPiece;
  /** Timers of this piece; cancelled when it ends early (outage, suspension, finish). */
  timers: Array<() => void>;
  /** Checkpoints being written: started at `begin`, counted at `end`. */
  writing: Map<number, Promise<{ reference: string } | { error: string }>>;
}

export interface Run {
  jobId: string;
  job: PlannedJob;
  shape: JobShape;
  terms: ExecutionTerms;
  record: ExecutionRecord;
  active?: ActivePiece;
  /** Starts of planned pieces not begun yet. */
  pending: Array<() => void>;
  /** Pieces begun (start and nodes): a re-plan that still lists them does not run them again. */
  begun: Set<string>;
  /** Why the next piece resumes (after an outage, a suspension, or as planned). */
  resumeCause: RestartCause;
  /** Bumped whenever the active piece ends, so late continuations of its calls do nothing. */
  generation: number;
  /** Facts are appended one task at a time, in the order things happened. */
  queue: Promise<void>;
  states: Map<string, GuaranteeEvaluation['state']>;
  checks: Map<string, () => void>;
  /** A checkpoint the job starts from when it first computes (migrated here, or resumed after a server restart). */
  initial?: ResumePoint;
}

/**
 * What the executor keeps and tells: each run's record, the events it emits, the verdicts it asks for, its queue of
 * work (PlanExecutor drives the runs).
 */
export abstract class PlanExecutorRecords {
  protected readonly runs = new Map<string, Run>();

  protected readonly clock: RuntimeClock;

  protected readonly rm: ResourceManager;

  protected readonly listener: (event: ExecutionEvent) => void;

  protected readonly onError: (error: unknown) => void;

  protected readonly unsubscribe: () => void;

  constructor(options: PlanExecutorOptions) {
    this.clock = options.clock;
    this.rm = options.resourceManager;
    this.listener = options.listener ?? (() => {});
    this.onError = options.onError ?? (() => {});
    this.unsubscribe = this.rm.onEvent((event) => this.onResourceEvent(event));
  }

  /** The job is being executed, or has ended and is not forgotten yet. */
  has(jobId: string): boolean {
    return this.runs.has(jobId);
  }

  /** The job's execution record so far. */
  record(jobId: string): ExecutionRecord | undefined {
    return this.runs.get(jobId)?.record;
  }

  /** Every guarantee term of the job judged now (penalties so far). */
  evaluations(jobId: string): GuaranteeEvaluation[] {
    const run = this.runs.get(jobId);
    if (!run) return [];
    const context = judgingContext(run, this.clock.now());
    return run.terms.guaranteeTerms.map((term) => evaluateGuarantee(term, run.record, context));
  }

  /** Jobs being executed (finished ones included until `forget`). */
  jobs(): string[] {
    return [...this.runs.keys()];
  }

  /** Drops a job whose record has been stored (after `closed`). */
  forget(jobId: string): void {
    const run = this.runs.get(jobId);
    if (!run) return;
    this.cancelAll(run);
    this.runs.delete(jobId);
  }

  protected closeRecord(run: Run): void {
    const at = this.clock.now();
    this.append(run, { kind: 'closed', at });
    for (const cancel of run.checks.values()) cancel();
    run.checks.clear();
  }

  /** Runs `then` (in the job's queue) once t_deinit has passed. */
  protected afterDeinit(run: Run, then: () => void): void {
    const at = new Date(this.clock.now().getTime() + run.shape.timing.tDeinit * 1000);
    this.clock.at(at, () => this.enqueue(run, async () => then()));
  }

  /** Records the fact, reports it, then judges the guarantee terms on the new record. */
  protected append(run: Run, fact: ExecutionFact): void {
    run.record = appendFact(run.record, fact);
    this.emit(eventOf(run.jobId, fact));
    this.judge(run);
  }

  /** Judges every term; reports the ones whose state changed and sets the next check. */
  protected judge(run: Run): void {
    const context = judgingContext(run, this.clock.now());
    for (const term of run.terms.guaranteeTerms) {
      const evaluation = evaluateGuarantee(term, run.record, context);
      const before = run.states.get(term.name) ?? 'NotDetermined';
      run.states.set(term.name, evaluation.state);
      if (evaluation.state !== before) {
        const type =
          evaluation.state === 'Violated' ? 'violated' : evaluation.state === 'Fulfilled' ? 'fulfilled' : undefined;
        if (type) this.emit({ type, jobId: run.jobId, at: context.now, evaluation });
      }
      run.checks.get(term.name)?.();
      run.checks.delete(term.name);
      const next = run.record.closedAt ? undefined : nextCheck(term, run.record, context);
      if (next)
        run.checks.set(
          term.name,
          this.clock.at(next, () => this.enqueue(run, async () => this.judge(run))),
        );
    }
  }

  protected endActive(run: Run): void {
    const active = run.active;
    if (!active) return;
    for (const cancel of active.timers) cancel();
    run.active = undefined;
    run.generation++;
  }

  protected cancelAll(run: Run): void {
    this.endActive(run);
    for (const cancel of run.pending.splice(0)) cancel();
    for (const cancel of run.checks.values()) cancel();
    run.checks.clear();
  }

  protected enqueue(run: Run, task: () => void | Promise<void>): Promise<void> {
    run.queue = run.queue.then(task).catch((error: unknown) => this.onError(error));
    return run.queue;
  }

  protected emit(event: ExecutionEvent): void {
    try {
      this.listener(event);
    } catch (error) {
      this.onError(error);
    }
  }

  /** A call whose failure changes nothing in the record (stop, cleanup): reported, not thrown. */
  protected async quietly(call: Promise<void>): Promise<void> {
    try {
      await call;
    } catch (error) {
      this.onError(error);
    }
  }

  protected abstract onResourceEvent(event: ResourceManagerEvent): Promise<void> | undefined;
}
