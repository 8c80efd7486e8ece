import type { ServiceTermState, ServiceTermSubState } from './agreement.js';

/**
 * What happened when one job ran: the recorded facts that guarantee terms are judged on
 * (Hovestadt 2006, section 3.3.4: "a concluding analysis of these logs ... determine if all
 * specifications of the SLA have been fulfilled"). Plain data, built only by appending
 * facts in time order (`appendFact`), so the record is the provider's log of the run.
 */

/**
 * Phases of operation while the provider holds the job (Hovestadt 2006, section 3.3): preparing
 * the nodes (pre-runtime), computing (runtime; checkpoints are taken in it), staging results
 * out, releasing the nodes (post-runtime). `Idle` is a job between pieces: interrupted by an
 * outage, suspended, or waiting for its next planned piece.
 */
export type RunPhase = 'PreRuntime' | 'Running' | 'StageOut' | 'PostRuntime' | 'Idle';

export interface PhaseSpan {
  phase: RunPhase;
  start: Date;
  /** Absent while the phase lasts. */
  end?: Date;
  /** Working nodes the job held in the phase (none when Idle). */
  nodes: string[];
}

export interface CheckpointTaken {
  /** When the checkpoint was complete (written and usable for a restart). */
  at: Date;
  /** Compute intervals (t_compint, formula 3.6) the checkpoint secures, counted over the whole job. */
  interval: number;
  /** Where the resource manager keeps it (a file, a batch-system checkpoint id). */
  reference: string;
}

export interface CheckpointMissed {
  at: Date;
  /** The interval the checkpoint should have secured. */
  interval: number;
  reason: string;
}

/** A working node of the job failed: the job was interrupted. */
export interface Outage {
  at: Date;
  node: string;
}

/** Why computation resumed on a new piece: after an outage, after a suspension, or as planned (partial execution). */
export type RestartCause = 'outage' | 'suspension' | 'planned';

export interface Restart {
  /** When computation resumed. */
  at: Date;
  nodes: string[];
  /** Intervals secured by the checkpoint the job resumed from; 0: from the beginning. */
  fromInterval: number;
  reference?: string;
  cause: RestartCause;
}

/** The provider stopped the job for its own reasons (Hovestadt 2006, section 3.5.2). */
export interface Suspension {
  at: Date;
  reason: string;
  resumedAt?: Date;
}

/**
 * Why a job ended without completing: the job itself failed (its exit status), the
 * resource manager could not run it, or the provider gave it up (left the plan unsolved,
 * terminated).
 */
export type FailureCause = 'application' | 'resource-manager' | 'abandoned';

export interface ExecutionFailure {
  at: Date;
  cause: FailureCause;
  reason: string;
}

export interface ExecutionRecord {
  jobId: string;
  phases: PhaseSpan[];
  /** Computation first started. */
  startedAt?: Date;
  /** Results staged out: the job is done. */
  completedAt?: Date;
  checkpoints: CheckpointTaken[];
  missedCheckpoints: CheckpointMissed[];
  outages: Outage[];
  restarts: Restart[];
  suspensions: Suspension[];
  failure?: ExecutionFailure;
  /** Post-runtime finished: nothing more will happen. */
  closedAt?: Date;
  /** The latest fact's time: facts arrive in time order. */
  updatedAt?: Date;
}

export type ExecutionFact =
  | { kind: 'phase'; at: Date; phase: RunPhase; nodes: string[] }
  | { kind: 'checkpoint'; at: Date; interval: number; reference: string }
  | { kind: 'checkpointMissed'; at: Date; interval: number; reason: string }
  | { kind: 'outage'; at: Date; node: string }
  | { kind: 'suspended'; at: Date; reason: string }
  | { kind: 'restart'; at: Date; nodes: string[]; fromInterval: number; reference?: string; cause: RestartCause }
  | { kind: 'completed'; at: Date }
  | { kind: 'failed'; at: Date; cause: FailureCause; reason: string }
  | { kind: 'closed'; at: Date };

export function newExecutionRecord(jobId: string): ExecutionRecord {
  return { jobId, phases: [], checkpoints: [], missedCheckpoints: [], outages: [], restarts: [], suspensions: [] };
}

/** The phase the job is in, if any. */
export function currentPhase(record: ExecutionRecord): RunPhase | undefined {
  const last = record.phases[record.phases.length - 1];
  return last && last.end === undefined ? last.phase : undefined;
}

/** The job will not compute any more: it completed or failed. */
export function hasEnded(record: ExecutionRecord): boolean {
  return record.completedAt !== undefined || record.failure !== undefined;
}

/** Which phase may follow which (undefined: no phase yet, or the last one closed). */
const phaseFollows: Record<RunPhase, ReadonlyArray<RunPhase | undefined>> = {
  PreRuntime: [undefined, 'Idle', 'PostRuntime'],
  Running: ['PreRuntime'],
  StageOut: ['Running'],
  PostRuntime: ['PreRuntime', 'Running', 'StageOut', 'Idle'],
  Idle: ['PreRuntime', 'Running', 'StageOut', 'PostRuntime'],
};

const holdingNodes: ReadonlyArray<RunPhase | undefined> = ['PreRuntime', 'Running', 'StageOut'];

/** The record with `fact` appended. Throws when the fact cannot follow the record (out of order, after the end). */
export function appendFact(record: ExecutionRecord, fact: ExecutionFact): ExecutionRecord {
  const where = `job ${record.jobId}: ${fact.kind} at ${fact.at.toISOString()}`;
  if (record.closedAt) throw new Error(`${where}: the record was closed at ${record.closedAt.toISOString()}`);
  if (record.updatedAt && fact.at.getTime() < record.updatedAt.getTime()) {
    throw new Error(`${where} is earlier than the last fact (${record.updatedAt.toISOString()})`);
  }
  const phase = currentPhase(record);
  const refuse = (why: string) => new Error(`${where}: ${why}`);
  const next: ExecutionRecord = { ...record, updatedAt: fact.at };
  switch (fact.kind) {
    case 'phase': {
      if (!phaseFollows[fact.phase].includes(phase)) throw refuse(`${fact.phase} cannot follow ${phase ?? 'no phase'}`);
      if (hasEnded(record) && fact.phase !== 'PostRuntime' && fact.phase !== 'Idle')
        throw refuse(`the job has ended; only PostRuntime or Idle may follow`);
      next.phases = enter(record.phases, fact.phase, fact.at, fact.nodes);
      if (fact.phase === 'Running' && !record.startedAt) next.startedAt = fact.at;
      return next;
    }
    case 'checkpoint':
      if (phase !== 'Running') throw refuse(`checkpoints are taken while Running, not ${phase ?? 'outside a phase'}`);
      next.checkpoints = [...record.checkpoints, { at: fact.at, interval: fact.interval, reference: fact.reference }];
      return next;
    case 'checkpointMissed':
      if (phase !== 'Running') throw refuse(`checkpoints are due while Running, not ${phase ?? 'outside a phase'}`);
      next.missedCheckpoints = [
        ...record.missedCheckpoints,
        { at: fact.at, interval: fact.interval, reason: fact.reason },
      ];
      return next;
    case 'outage':
      if (!holdingNodes.includes(phase))
        throw refuse(`an outage interrupts a job holding nodes, not one in ${phase ?? 'no phase'}`);
      next.outages = [...record.outages, { at: fact.at, node: fact.node }];
      next.phases = enter(record.phases, 'Idle', fact.at, []);
      return next;
    case 'suspended':
      if (phase !== 'PreRuntime' && phase !== 'Running')
        throw refuse(`only a preparing or running job can be suspended, not one in ${phase ?? 'no phase'}`);
      next.suspensions = [...record.suspensions, { at: fact.at, reason: fact.reason }];
      next.phases = enter(record.phases, 'Idle', fact.at, []);
      return next;
    case 'restart': {
      if (phase !== 'Running')
        throw refuse(`a restart is recorded when computation resumes (Running), not in ${phase ?? 'no phase'}`);
      const restart: Restart = {
        at: fact.at,
        nodes: [...fact.nodes],
        fromInterval: fact.fromInterval,
        cause: fact.cause,
      };
      if (fact.reference !== undefined) restart.reference = fact.reference;
      next.restarts = [...record.restarts, restart];
      if (fact.cause === 'suspension') {
        next.suspensions = record.suspensions.map((s) =>
          s.resumedAt === undefined ? { ...s, resumedAt: fact.at } : s,
        );
      }
      return next;
    }
    case 'completed':
      if (phase !== 'StageOut')
        throw refuse(`a job completes when its results are staged out, not in ${phase ?? 'no phase'}`);
      next.completedAt = fact.at;
      return next;
    case 'failed':
      if (hasEnded(record)) throw refuse('the job has already ended');
      next.failure = { at: fact.at, cause: fact.cause, reason: fact.reason };
      if (holdingNodes.includes(phase)) next.phases = enter(record.phases, 'Idle', fact.at, []);
      return next;
    case 'closed':
      if (!hasEnded(record)) throw refuse('a record is closed only after the job completed or failed');
      next.closedAt = fact.at;
      next.phases = enter(record.phases, undefined, fact.at, []);
      return next;
  }
}

/** Closes the open span at `at` and opens `phase` (none: just close). */
function enter(
  phases: readonly PhaseSpan[],
  phase: RunPhase | undefined,
  at: Date,
  nodes: readonly string[],
): PhaseSpan[] {
  const out = phases.map((p, i) => (i === phases.length - 1 && p.end === undefined ? { ...p, end: at } : p));
  if (phase) out.push({ phase, start: at, nodes: [...nodes] });
  return out;
}

/**
 * The service term state the record implies (WS-Agreement section 7.2): NotReady until
 * computation first starts; Ready while the job may still run, Processing when it computes
 * or stages out and Idle between pieces; Completed once it completed or failed.
 */
export function serviceTermStateOf(record: ExecutionRecord): {
  state: ServiceTermState;
  subState?: ServiceTermSubState;
} {
  if (hasEnded(record)) return { state: 'Completed' };
  if (!record.startedAt) return { state: 'NotReady' };
  const phase = currentPhase(record);
  return { state: 'Ready', subState: phase === 'Running' || phase === 'StageOut' ? 'Processing' : 'Idle' };
}

/**
 * The agreement completes (Observed to Complete, WS-Agreement section 7.1: "all activities
 * pertaining to the agreement are finished") once post-runtime is over, whether the job
 * completed or failed; its guarantee terms say whether that was as promised.
 */
export function completesAgreement(record: ExecutionRecord): boolean {
  return record.closedAt !== undefined;
}

/** The last checkpoint taken, the one a restart resumes from. */
export function lastCheckpoint(record: ExecutionRecord): CheckpointTaken | undefined {
  return record.checkpoints[record.checkpoints.length - 1];
}
