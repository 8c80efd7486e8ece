import type { ExecutionRecord, FailureCause, RestartCause, RunPhase } from '../../domain/execution.js';
import type { GuaranteeEvaluation } from '../../domain/guarantee-evaluation.js';
import type { PostRuntimeReport, ReportAdditions } from '../../domain/post-runtime-report.js';
import type { JobShape } from '../../scheduler/job-timing.js';
import type { PlannedJob } from '../../scheduler/model.js';
import type { Application, GuaranteeLevel, GuaranteeTerm, ReservationWindow } from '../../domain/terms.js';
import type { JsonValue } from '../ports.js';
import type { CheckpointData } from '../migration/ports.js';

/** The ports of this use case; the ports every use case shares are in ../ports.ts. */

// run time (Hovestadt 2006, section 3.3; docs/operations.md "Run time")

/** What the guarantee terms of a job are judged by while it runs. */
export interface ExecutionTerms {
  guaranteeTerms: readonly GuaranteeTerm[];
  /** Default: the planned job's level. */
  level?: GuaranteeLevel;
  /** n_romax; default: the plan's covered outages. */
  coveredOutages?: number;
  /** A reservation's window (NodesAvailable is judged over it); default: the planned job's window. */
  window?: ReservationWindow;
  /** What the job runs (jsdl:Application); absent: the executor's default job. */
  application?: Application;
}

/** What the executor reports while it executes a job (src/runtime/plan-executor.ts emits them). */
export type ExecutionEvent =
  | { type: 'phase'; jobId: string; at: Date; phase: RunPhase; nodes: string[] }
  | { type: 'checkpoint'; jobId: string; at: Date; interval: number; reference: string }
  | { type: 'checkpointMissed'; jobId: string; at: Date; interval: number; reason: string }
  | { type: 'interrupted'; jobId: string; at: Date; node: string }
  | { type: 'suspended'; jobId: string; at: Date; reason: string }
  | { type: 'restarted'; jobId: string; at: Date; nodes: string[]; fromInterval: number; cause: RestartCause }
  | { type: 'completed'; jobId: string; at: Date }
  | { type: 'failed'; jobId: string; at: Date; cause: FailureCause; reason: string }
  /** Post-runtime is over: the agreement may complete and its report be written. */
  | { type: 'closed'; jobId: string; at: Date }
  /**
   * Still computing at the booked end of its last piece ("runtime exceeded", Hovestadt 2006, section 3.5): the
   * scheduler's event.
   */
  | { type: 'overrun'; jobId: string; at: Date; bookedEnd: Date }
  | { type: 'violated'; jobId: string; at: Date; evaluation: GuaranteeEvaluation }
  | { type: 'fulfilled'; jobId: string; at: Date; evaluation: GuaranteeEvaluation };

/**
 * A checkpoint a job resumes from when it first computes here: one transferred from
 * another provider (a migrated job, `interval` 0: its plan here is the work left), or its
 * own last one after this server restarted (`interval`: the intervals it secured).
 */
export interface ResumePoint {
  reference: string;
  interval: number;
}

/**
 * A session's nodes (a reservation's or interactive job's) were handed over at `at`, before
 * the server restarted: the plan kept them the holder's, and they are still prepared, so its
 * session starts on them again at once (no preparation, no gap in the window).
 */
export interface HandOver {
  at: Date;
  nodes: readonly string[];
}

/**
 * Executes the scheduler's plans (src/runtime: a PlanExecutor over a resource manager and a
 * clock). Contract: `execute` starts a job whose pieces then run at their planned times;
 * events reach the subscribers in the order things happened, `closed` last; `nodeFailed`
 * records the outage and stops the jobs computing on the node, and they wait for `replan`
 * (call it with the scheduler's new plan, a copy); `abandon` gives a job up (it fails,
 * cleans up and closes). A job stays known (record, evaluations) until `forget`.
 */
export interface JobExecutor {
  /** False for no run time (WSAG_EXECUTOR=none): nothing is executed, so nothing is prepared for it. */
  readonly runsJobs: boolean;
  execute(
    job: PlannedJob,
    shape: JobShape,
    terms: ExecutionTerms,
    resumeFrom?: ResumePoint,
    handedOver?: HandOver,
  ): void;
  /** The job is being executed (or has ended and is not forgotten yet). */
  has(jobId: string): boolean;
  record(jobId: string): ExecutionRecord | undefined;
  /** Every guarantee term of the job judged now. */
  evaluations(jobId: string): GuaranteeEvaluation[];
  nodeFailed(node: string): Promise<void>;
  replan(job: PlannedJob): Promise<void>;
  abandon(jobId: string, reason: string): Promise<void>;
  /** Before the job first computes: it will start from this checkpoint. False when it already computed. */
  resumeFrom(jobId: string, point: ResumePoint): boolean;
  forget(jobId: string): void;
  /** A checkpoint this executor took, as data to send elsewhere (a file, or bytes); undefined when it is gone. */
  checkpointData(reference: string): Promise<CheckpointData | undefined>;
  subscribe(listener: (event: ExecutionEvent) => void): void;
  /** Stops listening and every timer; running jobs are stopped (no process is left behind). */
  close(): Promise<void>;
}

/**
 * A post-runtime report as stored: the report, and what the server adds (where the job went, why terms were not
 * judged).
 */
export interface StoredReport {
  report: PostRuntimeReport & ReportAdditions & { migratedTo?: JsonValue };
  text: string;
}

/** Where post-runtime reports are kept (src/store/report-files.ts: DATA_DIR/reports/<id>.json and .txt). */
export interface ReportStore {
  save(agreementId: string, stored: StoredReport): Promise<void>;
  read(agreementId: string): Promise<StoredReport | undefined>;
}

// notifications

/** An HTTP callback registered for one agreement: every change of its states is POSTed to `url`. */
export interface Subscription {
  id: string;
  agreementId: string;
  url: string;
  /** Who registered it. */
  subscriber: string;
  createdAt: Date;
}

/** Durable subscriptions (src/store/subscription-file.ts). Writes resolve once durable; reads return copies. */
export interface SubscriptionStore {
  list(agreementId: string): Promise<Subscription[]>;
  add(subscription: Subscription): Promise<void>;
  /** Removes the subscriptions with these ids; unknown ids are ignored. */
  remove(ids: readonly string[]): Promise<void>;
}
