import type { ExecutionRecord } from '../domain/execution.js';
import type { GuaranteeEvaluation } from '../domain/guarantee-evaluation.js';
import type { ExecutionEvent, JobExecutor } from '../engine/execution/index.js';
import type { CheckpointData } from '../engine/migration/index.js';

/**
 * No run time (WSAG_EXECUTOR=none): jobs are planned and re-planned, but nothing executes
 * them, so agreements stay Observed with their service terms NotReady.
 */
export class NoExecutor implements JobExecutor {
  readonly runsJobs = false;
  execute(): void {}
  has(): boolean {
    return false;
  }
  record(): ExecutionRecord | undefined {
    return undefined;
  }
  evaluations(): GuaranteeEvaluation[] {
    return [];
  }
  async nodeFailed(): Promise<void> {}
  async replan(): Promise<void> {}
  async abandon(): Promise<void> {}
  resumeFrom(): boolean {
    return false;
  }
  forget(): void {}
  async checkpointData(): Promise<CheckpointData | undefined> {
    return undefined;
  }
  subscribe(_listener: (event: ExecutionEvent) => void): void {}
  async close(): Promise<void> {}
}
