import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { ExecutionRecord } from '../domain/execution.js';
import type { GuaranteeEvaluation } from '../domain/guarantee-evaluation.js';
import type { ExecutionEvent, ExecutionTerms, HandOver, JobExecutor, ResumePoint } from '../engine/execution/index.js';
import type { CheckpointData } from '../engine/migration/index.js';
import type { JobShape } from '../scheduler/job-timing.js';
import type { PlannedJob } from '../scheduler/model.js';
import type { RuntimeClock } from './clock.js';
import { PlanExecutor } from './plan-executor.js';
import type { ResourceManager } from './resource-manager.js';

/**
 * The engine's JobExecutor port over a PlanExecutor and its resource manager: events fan out
 * to every subscriber, and checkpoints are handed out as data for migration. A checkpoint
 * reference that names a file (the local process resource manager's) is sent as that file;
 * any other reference (the simulated resource manager's `sim://...`) stands for a checkpoint
 * only a simulation has, and is sent as a small JSON description of it.
 */
export class RuntimeExecutor implements JobExecutor {
  readonly runsJobs = true;
  private readonly executor: PlanExecutor;
  private readonly listeners: Array<(event: ExecutionEvent) => void> = [];

  constructor(
    private readonly options: {
      clock: RuntimeClock;
      resourceManager: ResourceManager & { close?: () => Promise<void> };
      onError?: (error: unknown) => void;
    },
  ) {
    this.executor = new PlanExecutor({
      clock: options.clock,
      resourceManager: options.resourceManager,
      listener: (event) => {
        for (const listener of this.listeners) listener(event);
      },
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  execute(
    job: PlannedJob,
    shape: JobShape,
    terms: ExecutionTerms,
    resumeFrom?: ResumePoint,
    handedOver?: HandOver,
  ): void {
    this.executor.execute(job, shape, terms, resumeFrom, handedOver);
  }

  has(jobId: string): boolean {
    return this.executor.has(jobId);
  }

  record(jobId: string): ExecutionRecord | undefined {
    return this.executor.record(jobId);
  }

  evaluations(jobId: string): GuaranteeEvaluation[] {
    return this.executor.evaluations(jobId);
  }

  nodeFailed(node: string): Promise<void> {
    return this.executor.nodeFailed(node);
  }

  replan(job: PlannedJob): Promise<void> {
    return this.executor.replan(job);
  }

  abandon(jobId: string, reason: string): Promise<void> {
    return this.executor.abandon(jobId, reason);
  }

  resumeFrom(jobId: string, point: ResumePoint): boolean {
    return this.executor.resumeFrom(jobId, point);
  }

  forget(jobId: string): void {
    this.executor.forget(jobId);
  }

  async checkpointData(reference: string): Promise<CheckpointData | undefined> {
    if (isAbsolute(reference)) {
      try {
        const info = await stat(reference);
        return info.isFile() ? { file: reference, sizeBytes: info.size } : undefined;
      } catch {
        return undefined; // removed by the final clean-up
      }
    }
    const bytes = Buffer.from(`${JSON.stringify({ format: 'wsag-checkpoint-reference/1', reference })}\n`);
    return { bytes, sizeBytes: bytes.length };
  }

  subscribe(listener: (event: ExecutionEvent) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.executor.close();
    await this.options.resourceManager.close?.();
  }
}
