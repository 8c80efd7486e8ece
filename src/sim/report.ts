import type { GuaranteeLevel } from '../domain/terms.js';
import type { NotMigratedReason } from '../engine/migration/index.js';
import type { WorkloadKind } from './workload.js';

/**
 * What a simulation run reports. Plain JSON, sections by topic, so later runs can add a
 * section (migration, prices) and a comparison of two runs can walk the same keys.
 * Times are seconds from the start of the simulation; money is in the workload's currency.
 */
export interface SimReport {
  format: 'wsag-sim-report/1';
  workload: { name: string; jobs: number; failures: number; start: string; currency: string };
  cluster: { nodes: number; bufferNodes: number; peerStandbyNodes: number; problemHorizonSeconds: number };
  /** What shaped the run: runs with and without migration are told apart here (`migration`: the peers, by name). */
  options: { untilSeconds?: number; migration?: { peers: string[] } };
  /**
   * Up to the last event; `drain limit`: jobs were still planned long after the workload's last event (see the
   * simulator).
   */
  span: { endSeconds: number; stoppedBy: 'end of workload' | 'until' | 'drain limit' };
  requests: Record<WorkloadKind, KindCounts> & { total: KindCounts };
  acceptance: {
    slaRequests: number;
    slaAccepted: number;
    slaRejected: number;
    rate: number;
    bestEffortRejected: number;
    /** Refused SLA requests whose jobs ran as best-effort work instead (`refused: 'queue'`). */
    refusedQueued: number;
  };
  utilisation: Utilisation;
  deadlines: { accepted: number; met: number; missed: number; open: number };
  reservations: { accepted: number; honoured: number; notHonoured: number; open: number };
  violations: {
    total: number;
    deadlineMissed: number;
    reservationNotHonoured: number;
    leftInP: number;
    stillInP: number;
    byLevel: Partial<Record<GuaranteeLevel, number>>;
  };
  penalties: {
    owed: number;
    paid: number;
    excused: number;
    byLevel: Partial<Record<GuaranteeLevel, { owed: number; paid: number }>>;
  };
  checkpoints: { taken: number; jobs: number };
  suspensions: { count: number; jobs: number };
  restarts: { count: number; onSpare: number; jobs: number };
  pieces: { jobs: number; partialExecution: number };
  failures: { events: number; repairs: number; renewals: number; jobsHit: number; runningJobsHit: number };
  value: { requested: number; accepted: number; completed: number };
  /** Things that should not happen; non-zero figures point at a scheduler or simulator bug. */
  checks: { retiredWithoutCompletion: number; completionClamped: number; lateWithoutProblem: number };
  rejected: Array<{ id: string; kind: WorkloadKind; level: GuaranteeLevel; arrival: number; reason: string }>;
  violated: Violation[];
  /** With peers (`--peers`): what the Migration Controller did. */
  migration?: MigrationSection;
  /** Per-job outcomes, only when asked for (`--jobs`). */
  jobs?: JobOutcome[];
}

export interface KindCounts {
  requests: number;
  accepted: number;
  rejected: number;
  completed: number;
  /** Accepted but left the plan unsolved (the deadline or window passed while in P). */
  dropped: number;
  /** Still planned when the run stopped (--until). */
  open: number;
}

export interface Utilisation {
  /** Nodes x simulated span. */
  capacityNodeSeconds: number;
  /** Working nodes booked by jobs over the time that actually elapsed (overheads included). */
  busyNodeSeconds: number;
  /** Spare nodes held beside Enhanced and Full jobs over the time that elapsed. */
  spareNodeSeconds: number;
  /** The jobs' actual runtimes x nodes, for jobs that completed. */
  usefulNodeSeconds: number;
  /** Of the useful work: SLA jobs' (reservations, deadline jobs); the rest is best-effort and background work. */
  slaUsefulNodeSeconds: number;
  /** Node-time neither booked by a job, held spare, nor out of service. */
  idleNodeSeconds: number;
  /** Nodes out of service. */
  failedNodeSeconds: number;
  busy: number;
  spare: number;
  useful: number;
  failed: number;
  slaUseful: number;
  bestEffortUseful: number;
  idle: number;
  /** The makespan tail: from the last arrival to the last completion, seconds (0 when nothing completed after it). */
  tailSeconds: number;
  /**
   * The steady state: what completed jobs ran up to the last arrival (each job's last runtime's worth of work before
   * it completed) over the cluster's node time to the last arrival; the drain after it does not count.
   */
  usefulToLastArrival: number;
  /** Node time spent writing the checkpoints taken. */
  checkpointNodeSeconds: number;
}

export type ViolationType = 'deadline-missed' | 'reservation-not-honoured' | 'left-in-P';

export interface Violation {
  id: string;
  kind: WorkloadKind;
  level: GuaranteeLevel;
  type: ViolationType;
  detail: string;
  penalty: number;
  paid: number;
  /** Why the penalty is paid or excused (the guarantee level's liability rule). */
  liability: string;
}

/**
 * Cross-border migration in a run: the controller runs whenever jobs newly fall into P with
 * no local plan left; a migrated job completes at its peer (by its deadline, which the
 * peer's agreement promises) and its price is paid to the peer.
 */
export interface MigrationSection {
  /** Runs of the Migration Controller. */
  runs: number;
  /** Distinct jobs in P it weighed. */
  problematicWeighed: number;
  /** Jobs migrated; of them `problematicMigrated` from P, the others to make room for jobs in P (step 7). */
  migrations: number;
  problematicMigrated: number;
  /** Paid to the peers. */
  price: number;
  /**
   * Jobs a run took out of P (migrated, or placed again in the room the moves freed) that
   * did not break their promise afterwards: their penalties, and what of them the guarantee
   * levels' liability rules would have made the provider pay had the promise broken then.
   */
  penaltiesSaved: { jobs: number; owed: number; payable: number };
  /** Jobs in P the controller kept and that no run saved, by the reason of the last run that weighed them. */
  notMigrated: Partial<Record<NotMigratedReason, number>>;
  /** Of the jobs kept, those whose promise then broke. */
  keptThenViolated: number;
  peers: Array<{
    name: string;
    nodes: number;
    pricePerNodeHour: number;
    pricePerJob: number;
    quotes: number;
    refusals: number;
    migrations: number;
    price: number;
    nodeSeconds: number;
  }>;
  moves: MigrationMove[];
}

/** One job moved to a peer. Times are seconds from the start. */
export interface MigrationMove {
  id: string;
  kind: WorkloadKind;
  level: GuaranteeLevel;
  at: number;
  peer: string;
  remoteAgreementId: string;
  price: number;
  /** It was in P (else it moved to make room for jobs in P). */
  problematic: boolean;
  /**
   * Its own penalty, which it no longer owes; `payable`: what of it the liability rules would have made the provider
   * pay.
   */
  penalty: number;
  payable: number;
  /** Where it runs at the peer. */
  start: number;
  end: number;
  /** The controller's sentence. */
  detail: string;
}

export type JobStatus = 'rejected' | 'completed' | 'dropped' | 'running' | 'waiting' | 'in-P';

export interface JobOutcome {
  id: string;
  kind: WorkloadKind;
  level: GuaranteeLevel;
  nodes: number;
  status: JobStatus;
  arrival: number;
  /** First start of work, seconds. */
  start?: number;
  /** Completion (or when it left the plan), seconds. */
  end?: number;
  deadline?: number;
  /** A best-effort job submitted to the queue after this SLA request was refused (`refused: 'queue'`). */
  queuedFor?: string;
  met?: boolean;
  honoured?: boolean;
  violation?: ViolationType;
  reason?: string;
  checkpoints: number;
  /** Pieces the job ran in (segments that started). */
  pieces: number;
  restarts: number;
  suspensions: number;
  /** Failures that hit nodes the job had booked. */
  hits: number;
  busyNodeSeconds: number;
  penalty: number;
  paid: number;
  /** It completed at a peer: where, when it left, and the price paid for it. */
  migratedTo?: { peer: string; at: number; price: number };
}
