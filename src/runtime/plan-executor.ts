import { currentPhase, hasEnded, lastCheckpoint, newExecutionRecord, type ExecutionFact } from '../domain/execution.js';
import type { ExecutionEvent, ExecutionTerms, HandOver, ResumePoint } from '../engine/execution/index.js';
import type { JobShape } from '../scheduler/job-timing.js';
import type { PlannedJob } from '../scheduler/model.js';
import { heldPiece, heldSince } from './hand-over.js';
import { expectedRunMs, pieceKey, plannedPieces, sameNodes, type PlannedPiece } from './piece-timeline.js';
import type { ResourceManagerEvent } from './resource-manager.js';
import { PlanExecutorRecords, type ActivePiece, type Run } from './plan-executor-records.js';
export type { PlanExecutorOptions } from './plan-executor-records.js';

/** The engine declares what the executor reports and judges by (src/engine/ports.ts); this adapter implements it. */
export type { ExecutionEvent, ExecutionTerms, ResumePoint };

/**
 * Executes the scheduler's plan on a clock through a resource manager (Hovestadt 2006, section
 * 3.3): at each planned piece's start the nodes are prepared (pre-runtime), after t_init the
 * job starts (from its last checkpoint if it ran before), checkpoints are taken at the
 * planned times, and when the resource manager reports the job finished its results are
 * staged out and the nodes deinitialised (post-runtime). Every step is a fact in the job's
 * execution record; guarantee terms are judged after each fact and when a deadline passes.
 *
 * It does not plan: on `nodeFailed` it stops the jobs running on the node and waits; the
 * scheduler's new plan (`replan`) says where and when they restart. Call `nodeFailed` before
 * handing the scheduler's re-plan to `replan`, so the outage is recorded as such.
 */
export class PlanExecutor extends PlanExecutorRecords {
  /**
   * Starts executing a planned job: its pieces run at their planned times. With
   * `resumeFrom`, it first computes from that checkpoint (recorded as a planned restart);
   * with `handedOver`, a session holds its nodes since then and starts again at once.
   */
  execute(
    job: PlannedJob,
    shape: JobShape,
    terms: ExecutionTerms = { guaranteeTerms: [] },
    resumeFrom?: ResumePoint,
    handedOver?: HandOver,
  ): void {
    const jobId = job.spec.id;
    if (this.runs.has(jobId)) throw new Error(`job ${jobId} is already being executed`);
    const run: Run = {
      jobId,
      job,
      shape,
      terms,
      record: newExecutionRecord(jobId),
      pending: [],
      begun: new Set(),
      resumeCause: 'planned',
      generation: 0,
      queue: Promise.resolve(),
      states: new Map(),
      checks: new Map(),
      ...(resumeFrom ? { initial: { ...resumeFrom } } : {}),
    };
    this.runs.set(jobId, run);
    const pieces = plannedPieces(job, shape);
    const held = handedOver && heldPiece(job, pieces, handedOver, this.clock.now().getTime());
    if (held && handedOver) {
      run.begun.add(pieceKey(held));
      run.record = heldSince(run.record, handedOver.at, held.nodes);
      const active: ActivePiece = { piece: held, timers: [], writing: new Map() };
      run.active = active;
      const generation = ++run.generation;
      void this.enqueue(run, () => this.launch(run, active, generation, true));
    }
    this.schedulePieces(run, pieces);
    this.judge(run);
  }

  /** Before the job first computes: it will start from `point`. False when it has computed already (or is unknown). */
  resumeFrom(jobId: string, point: ResumePoint): boolean {
    const run = this.runs.get(jobId);
    if (!run || run.record.startedAt !== undefined || hasEnded(run.record)) return false;
    run.initial = { ...point };
    return true;
  }

  /**
   * A node failed: every job computing (or being prepared, or staging out) on it is stopped
   * and recorded as interrupted by an outage. It then waits for `replan`.
   */
  async nodeFailed(node: string): Promise<void> {
    await Promise.all([...this.runs.values()].map((run) => this.enqueue(run, () => this.interrupt(run, node))));
  }

  /**
   * The scheduler's new plan for a job (after a failure, a repair, a suspension, a move):
   * pieces not begun are replaced by the new plan's. A piece that is running stays if the new
   * plan keeps it (same start and nodes), and stops where the plan now ends it sooner (a
   * best-effort job that yields to SLA work); otherwise the job is suspended. A job without any
   * future piece waits, Idle, for the next plan or `abandon`.
   */
  replan(job: PlannedJob, shape?: JobShape): Promise<void> {
    const run = this.runs.get(job.spec.id);
    if (!run) return Promise.reject(new Error(`job ${job.spec.id} is not being executed`));
    return this.enqueue(run, async () => {
      if (hasEnded(run.record)) return;
      run.job = job;
      if (shape) run.shape = shape;
      for (const cancel of run.pending.splice(0)) cancel();
      const pieces = plannedPieces(job, run.shape);
      const now = this.clock.now().getTime();
      const active = run.active;
      if (active) {
        const kept = pieces.find(
          (p) => p.start === active.piece.start && sameNodes(p.nodes, active.piece.nodes) && p.end > now,
        );
        if (kept) {
          // A piece that yields to SLA work may now end sooner: it stops there unless the job finished.
          if (kept.computeEnd < active.piece.computeEnd) {
            const generation = run.generation;
            active.piece = kept;
            active.timers.push(
              this.clock.at(new Date(Math.max(now, kept.computeEnd)), () =>
                this.enqueue(run, () => this.endPiece(run, generation)),
              ),
            );
          }
          this.schedulePieces(
            run,
            pieces.filter((p) => p.start > kept.start),
          );
          return;
        }
        await this.suspend(run, 'the scheduler re-planned the job');
      }
      this.schedulePieces(run, pieces);
    });
  }

  /**
   * The provider gives the job up (left the plan unsolved, agreement terminated): it is stopped, cleaned up and
   * recorded as failed.
   */
  abandon(jobId: string, reason: string): Promise<void> {
    const run = this.runs.get(jobId);
    if (!run) return Promise.reject(new Error(`job ${jobId} is not being executed`));
    return this.enqueue(run, async () => {
      if (hasEnded(run.record)) return;
      for (const cancel of run.pending.splice(0)) cancel();
      const holding = run.active !== undefined;
      this.endActive(run);
      if (holding) await this.quietly(this.rm.stop(jobId, 'terminated'));
      await this.finish(run, { kind: 'failed', at: this.clock.now(), cause: 'abandoned', reason });
    });
  }

  /** Stops listening to the resource manager and cancels every timer (jobs are not stopped). */
  close(): void {
    this.unsubscribe();
    for (const run of this.runs.values()) this.cancelAll(run);
  }

  // ------------------------------------------------------------------ pieces

  /** Sets the starts of the pieces still to come (those ending after now). */
  private schedulePieces(run: Run, pieces: readonly PlannedPiece[]): void {
    const now = this.clock.now().getTime();
    for (const piece of pieces) {
      if (piece.end <= now || run.begun.has(pieceKey(piece))) continue;
      const cancel = this.clock.at(new Date(Math.max(piece.start, now)), () =>
        this.enqueue(run, () => this.beginPiece(run, piece)),
      );
      run.pending.push(cancel);
    }
  }

  /** Pre-runtime of a piece: the nodes are prepared; the job starts after t_init. */
  private async beginPiece(run: Run, piece: PlannedPiece): Promise<void> {
    if (hasEnded(run.record) || run.active || run.begun.has(pieceKey(piece))) return;
    run.begun.add(pieceKey(piece));
    const started = this.clock.now().getTime();
    const shift = Math.max(0, started - piece.start);
    const active: ActivePiece = { piece, timers: [], writing: new Map() };
    run.active = active;
    const generation = ++run.generation;
    const restart = piece.restart || run.record.startedAt !== undefined || run.initial !== undefined;
    this.append(run, { kind: 'phase', at: this.clock.now(), phase: 'PreRuntime', nodes: piece.nodes });
    try {
      await this.rm.prepare({ jobId: run.jobId, nodes: piece.nodes, restart });
    } catch (error) {
      if (run.generation === generation) await this.resourceManagerFailed(run, 'prepare', error);
      return;
    }
    if (run.generation !== generation) return;
    active.timers.push(
      this.clock.at(new Date(piece.computeStart + shift), () =>
        this.enqueue(run, () => this.launch(run, active, generation)),
      ),
    );
  }

  /**
   * Runtime: the job computes, from its last checkpoint if it ran before; checkpoints and the piece's end are set on
   * the clock. `handedOver`: already Running since before a restart.
   */
  private async launch(run: Run, active: ActivePiece, generation: number, handedOver = false): Promise<void> {
    if (run.generation !== generation) return;
    const piece = active.piece;
    const resumes = run.record.startedAt !== undefined;
    // Its own last checkpoint; else the one it was handed (migrated here, or resumed after a server restart).
    const from = lastCheckpoint(run.record) ?? run.initial;
    const fromInterval = from?.interval ?? 0;
    try {
      await this.rm.start({
        jobId: run.jobId,
        nodes: piece.nodes,
        ...(from ? { fromCheckpoint: from.reference } : {}),
        runtimeSeconds: run.job.spec.runtimeSeconds,
        expectedRunMs: expectedRunMs(run.job, piece, fromInterval, this.clock.now().getTime()),
        ...(run.terms.application ? { application: run.terms.application } : {}),
        ...(run.job.spec.window ? { session: true } : {}),
      });
    } catch (error) {
      if (run.generation === generation) await this.resourceManagerFailed(run, 'start', error);
      return;
    }
    if (run.generation !== generation) {
      await this.quietly(this.rm.stop(run.jobId, 'outage'));
      return;
    }
    const at = this.clock.now();
    if (!handedOver) this.append(run, { kind: 'phase', at, phase: 'Running', nodes: piece.nodes });
    if (resumes || from) {
      const cause = resumes ? run.resumeCause : 'planned';
      this.append(run, {
        kind: 'restart',
        at,
        nodes: piece.nodes,
        fromInterval,
        ...(from ? { reference: from.reference } : {}),
        cause,
      });
    }
    run.resumeCause = 'planned';
    // The plan's times, moved by however late computation actually began.
    const shift = at.getTime() - piece.computeStart;
    const onClock = (t: number, task: () => Promise<void>) =>
      active.timers.push(this.clock.at(new Date(t + shift), () => this.enqueue(run, task)));
    piece.checkpoints.forEach((cp, i) => {
      const interval = fromInterval + i + 1;
      onClock(cp.begin, async () => this.beginCheckpoint(run, active, generation, interval));
      onClock(cp.end, () => this.endCheckpoint(run, active, generation, interval));
    });
    if (piece.finishes) {
      onClock(piece.end, async () => {
        if (run.generation === generation && currentPhase(run.record) === 'Running') {
          this.emit({ type: 'overrun', jobId: run.jobId, at: this.clock.now(), bookedEnd: new Date(piece.end) });
        }
      });
    } else {
      onClock(piece.computeEnd, () => this.endPiece(run, generation));
    }
  }

  private beginCheckpoint(run: Run, active: ActivePiece, generation: number, interval: number): void {
    if (run.generation !== generation) return;
    const writing = this.rm.checkpoint(run.jobId).then(
      (reference) => ({ reference }),
      (error: unknown) => ({ error: message(error) }),
    );
    active.writing.set(interval, writing);
  }

  /** A checkpoint counts once written (as the scheduler counts it); one that failed is recorded as missed. */
  private async endCheckpoint(run: Run, active: ActivePiece, generation: number, interval: number): Promise<void> {
    const writing = active.writing.get(interval);
    if (run.generation !== generation || !writing) return;
    const result = await writing;
    active.writing.delete(interval);
    if (run.generation !== generation) return;
    const at = this.clock.now();
    if ('reference' in result) {
      this.append(run, { kind: 'checkpoint', at, interval, reference: result.reference });
    } else {
      this.append(run, { kind: 'checkpointMissed', at, interval, reason: result.error });
    }
  }

  /**
   * A planned piece that does not complete the job ends after its last checkpoint: stop, deinitialise, wait for the
   * next piece.
   */
  private async endPiece(run: Run, generation: number): Promise<void> {
    if (run.generation !== generation || currentPhase(run.record) !== 'Running') return;
    this.endActive(run);
    await this.quietly(this.rm.stop(run.jobId, 'piece-end'));
    this.append(run, { kind: 'phase', at: this.clock.now(), phase: 'PostRuntime', nodes: [] });
    await this.quietly(this.rm.cleanup(run.jobId, false));
    this.afterDeinit(run, () => {
      // Unless the job was given up meanwhile (its own post-runtime then closes the record).
      if (!hasEnded(run.record)) this.append(run, { kind: 'phase', at: this.clock.now(), phase: 'Idle', nodes: [] });
    });
  }

  // ------------------------------------------------------------------ events

  protected onResourceEvent(event: ResourceManagerEvent): Promise<void> | undefined {
    const run = this.runs.get(event.jobId);
    if (!run) return undefined;
    if (event.type === 'finished') return this.enqueue(run, () => this.completed(run));
    const node = event.node;
    if (node !== undefined && run.active?.piece.nodes.includes(node))
      return this.enqueue(run, () => this.interrupt(run, node));
    return this.enqueue(run, async () => {
      if (hasEnded(run.record)) return;
      this.endActive(run);
      await this.finish(run, { kind: 'failed', at: this.clock.now(), cause: 'application', reason: event.reason });
    });
  }

  /** The computation finished: stage-out, completion, post-runtime. */
  private async completed(run: Run): Promise<void> {
    if (currentPhase(run.record) !== 'Running') return;
    for (const cancel of run.pending.splice(0)) cancel();
    const nodes = run.active?.piece.nodes ?? [];
    this.endActive(run);
    this.append(run, { kind: 'phase', at: this.clock.now(), phase: 'StageOut', nodes });
    try {
      await this.rm.stageOut(run.jobId);
    } catch (error) {
      await this.finish(run, {
        kind: 'failed',
        at: this.clock.now(),
        cause: 'resource-manager',
        reason: `stage-out failed: ${message(error)}`,
      });
      return;
    }
    const at = this.clock.now();
    await this.finish(run, { kind: 'completed', at });
  }

  /** An outage on one of the job's working nodes: stop it and wait for the scheduler's plan. */
  private async interrupt(run: Run, node: string): Promise<void> {
    const active = run.active;
    if (!active?.piece.nodes.includes(node) || hasEnded(run.record)) return;
    const phase = currentPhase(run.record);
    if (phase !== 'PreRuntime' && phase !== 'Running' && phase !== 'StageOut') return;
    this.endActive(run);
    const at = this.clock.now();
    this.append(run, { kind: 'outage', at, node });
    run.resumeCause = 'outage';
    await this.quietly(this.rm.stop(run.jobId, 'outage'));
    await this.quietly(this.rm.cleanup(run.jobId, false));
  }

  private async suspend(run: Run, reason: string): Promise<void> {
    const phase = currentPhase(run.record);
    this.endActive(run);
    await this.quietly(this.rm.stop(run.jobId, 'suspension'));
    if (phase === 'PreRuntime' || phase === 'Running') {
      const at = this.clock.now();
      this.append(run, { kind: 'suspended', at, reason });
      run.resumeCause = 'suspension';
    }
    await this.quietly(this.rm.cleanup(run.jobId, false));
  }

  private async resourceManagerFailed(run: Run, operation: string, error: unknown): Promise<void> {
    this.endActive(run);
    for (const cancel of run.pending.splice(0)) cancel();
    await this.finish(run, {
      kind: 'failed',
      at: this.clock.now(),
      cause: 'resource-manager',
      reason: `${operation} failed: ${message(error)}`,
    });
  }

  /** The job completed or failed: post-runtime (cleanup, t_deinit), then the record closes. */
  protected async finish(run: Run, end: Extract<ExecutionFact, { kind: 'completed' | 'failed' }>): Promise<void> {
    this.append(run, end);
    if (currentPhase(run.record) === undefined && run.record.phases.length === 0) {
      this.closeRecord(run);
      return;
    }
    // A job given up while a piece was being deinitialised is already in post-runtime.
    if (currentPhase(run.record) !== 'PostRuntime')
      this.append(run, { kind: 'phase', at: this.clock.now(), phase: 'PostRuntime', nodes: [] });
    await this.quietly(this.rm.cleanup(run.jobId, true));
    this.afterDeinit(run, () => this.closeRecord(run));
  }

  // ------------------------------------------------------------------ record and guarantees

  // ------------------------------------------------------------------ plumbing
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
