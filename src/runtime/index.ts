/** Run time: executing the scheduler's plan on a clock through a resource manager (docs/operations.md "Run time"). */
export { SimulatedClock, SystemClock, type RuntimeClock } from './clock.js';
export {
  LocalProcessResourceManager,
  type CheckpointFile,
  type LocalProcessOptions,
} from './local-process-resource-manager.js';
export { plannedPieces, remainingRunMs, type PlannedCheckpoint, type PlannedPiece } from './piece-timeline.js';
export {
  PlanExecutor,
  type ExecutionEvent,
  type ExecutionTerms,
  type PlanExecutorOptions,
  type ResumePoint,
} from './plan-executor.js';
export type { JobLaunch, PreparedJob, ResourceManager, ResourceManagerEvent, StopReason } from './resource-manager.js';
export {
  SimulatedResourceManager,
  type ResourceManagerOperation,
  type SimulatedCall,
} from './simulated-resource-manager.js';
export { RuntimeExecutor } from './runtime-executor.js';
export { NoExecutor } from './no-executor.js';
