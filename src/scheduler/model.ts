import type { GuaranteeLevel, Library, SecurityRequirement } from '../domain/terms.js';
import type { CheckpointPlan } from './checkpoint-plan.js';
import type { SiteTiming } from './site.js';
import { SharedValues } from './shared-values.js';

/**
 * The scheduler's own types. Times are milliseconds since the epoch (`Instant`): the
 * scheduler does arithmetic on them for every placement, and plain numbers keep it fast
 * and deterministic. The engine converts at its edge.
 */
export type Instant = number;

/** One compute node and what a job may demand of it (002 section 4.2.2: the MM knows the hardware). */
export interface ClusterNode {
  id: string;
  memoryGB: number;
  cpus: number;
  /** Interconnect technology, e.g. InfiniBand. */
  interconnect?: string;
  /** Interconnect island: a parallel job's nodes are taken from one island when it can be. */
  island?: string;
  /**
   * The nodes that fail together (a chassis, a power feed): failure rates are learned per
   * group (scheduler/failure-rate.ts). Without one, the node's island is its group.
   */
  failureGroup?: string;
  operatingSystem?: string;
  architecture?: string;
  libraries?: Library[];
  /** A buffer node (002 section 3.5.4): only best-effort and background jobs are planned on it. */
  buffer?: boolean;
  /**
   * Kept prepared for interactive sessions (a warm pool): a session on it needs only the
   * hand-over (t_handover). Interactive sessions, best-effort and background work are planned
   * on it; best-effort work there runs on the prepared image and gives way to a session.
   */
  warm?: boolean;
  /** Security policies the node meets (002 section 3.2.3): hardened, in an isolated partition, sandboxed. */
  securityPolicies?: SecurityRequirement[];
}

export interface ClusterDescription {
  nodes: ClusterNode[];
  timing: SiteTiming;
  /**
   * Nodes a peer provider keeps on standby for Full jobs. Full service needs remote
   * capacity reserved up front; until the Migration Controller reserves it by negotiation,
   * this configured figure is the peer's answer.
   */
  peerStandbyNodes: number;
}

/**
 * How the scheduler treats a job (002 section 3.5.1): a fixed reservation (S_res), a job
 * with a deadline (S_nonres), a best-effort job (B: never rejected, first come first
 * served) or a background job (B, run in gaps, in pieces when it must).
 */
export type JobKind = 'Reservation' | 'Deadline' | 'BestEffort' | 'Background';

export interface JobRequirements {
  memoryPerNodeGB?: number;
  cpusPerNode?: number;
  interconnect?: string;
  operatingSystem?: string;
  architecture?: string;
  /** Loaded libraries need the identical version on the node. */
  libraries?: Library[];
  /** Every one must be among the node's security policies. */
  securityPolicies?: SecurityRequirement[];
  /** The node's id must be one of these (jsdl:CandidateHosts). */
  candidateHosts?: string[];
}

/** What the scheduler needs to know about one job. */
export interface JobSpec {
  id: string;
  kind: JobKind;
  level: GuaranteeLevel;
  nodes: number;
  /** t_i, seconds; for a reservation the length of its window. */
  runtimeSeconds: number;
  earliestStart?: Instant;
  deadline?: Instant;
  window?: { start: Instant; end: Instant };
  /** An interactive session on nodes kept prepared (a warm pool): its preparation is the hand-over alone. */
  prepared?: boolean;
  /** n_romax as requested (0: the site's default for fault-tolerant levels). */
  coveredOutages: number;
  /** Requested checkpoints per hour of computation. */
  checkpointsPerHour?: number;
  storageGB: number;
  requirements: JobRequirements;
  /** The operator's value of the job: orders P and N (higher first). */
  value: number;
  /** When the request arrived: orders best-effort jobs (first come first served). */
  arrival: Instant;
  /**
   * Best-effort and background work sold by bid (Tycoon's proportional share, src/scheduler/proportional-share.ts):
   * the job's start tag in the bidders' virtual time; waiting work runs in tag order instead of arrival order.
   */
  queueTag?: number;
}

/**
 * No nodes: segments without spare nodes share this frozen list instead of an empty array each (100,000 live jobs: 3
 * MB).
 */
export const noNodes: readonly string[] = Object.freeze([]);

/**
 * One node: most jobs are serial, and their segments share one frozen list per node
 * (100,000 live one-node jobs: 5 MiB). Node ids come from the cluster and from stored
 * allocations; past 65,536 lists of one node, new ones are not shared.
 */
const oneNodeLists = new SharedValues<string[]>(65_536, (ids) => ids[0] as string);

/** `ids`, or the shared list of no node or of its one node. */
export function nodeList(ids: string[]): readonly string[] {
  if (ids.length === 0) return noNodes;
  return ids.length === 1 ? oneNodeLists.shared(ids) : ids;
}

/** A booked piece of a job: `nodes` work over [start, end); `spare` nodes are kept for restarts (Enhanced, Full). */
export interface Segment {
  start: Instant;
  end: Instant;
  nodes: readonly string[];
  spare: readonly string[];
  /** The piece begins from a checkpoint (t_initrestart instead of t_initnew). */
  restart: boolean;
  /** Compute intervals (t_compint each, 3.6) this piece completes. */
  intervals: number;
  /**
   * The piece carries on the one before it on nodes already prepared: a reservation's spare, booked and prepared with
   * its other nodes, taking a failed node's place. Nothing is set up again.
   */
  continues?: true;
  /**
   * A best-effort job started ahead of its turn, on nodes free now: while it runs it gives way to SLA work, stopping
   * where that work needs one of its nodes (keeping what its checkpoints secured by then), and goes on later.
   */
  yields?: true;
  /**
   * A deadline job's run that the plan could not fit before its deadline, started anyway where nodes are free for a
   * share of it and stopped by the deadline: it completes the job if the job needs less than its estimate. `intervals`
   * are the whole intervals it checkpoints on the way (none for a job without checkpoints).
   */
  onChance?: true;
}

/** A piece that computes until its end unless the job finishes first: one that yields, or runs on the chance. */
export function runsUntilItsEnd(segment: Segment): boolean {
  return segment.yields === true || segment.onChance === true;
}

/** A job in the plan. */
export interface PlannedJob {
  spec: JobSpec;
  /** Booked pieces in time order: one for a job run in one go, several for partial execution. */
  segments: Segment[];
  /** The checkpoint plan; zero checkpoints for Legacy reservations. */
  checkpoints: CheckpointPlan;
  /** Covered outages not yet used. */
  outagesLeft: number;
  /** In P: the reason the scheduler could not (yet) keep its promise. */
  problem?: string;
  /** Standby nodes reserved at a peer (Full). */
  remoteStandby?: number;
}

/** Why a request cannot be served, for a person, and the figures behind it. */
export interface Refusal {
  accepted: false;
  reason: string;
}

export interface Acceptance {
  accepted: true;
  job: PlannedJob;
}

export type AdmissionDecision = Acceptance | Refusal;

/** A start slot offered to a customer (advisory answers, counter-offers). */
export interface StartSlot {
  start: Instant;
  end: Instant;
  nodes: number;
}

/** A changed request the provider could serve instead (counter-offer generation). */
export interface Alternative {
  kind: 'LaterStart' | 'LaterDeadline' | 'FewerNodes';
  /** The changed request: same id, with the changed start, deadline or node count. */
  spec: JobSpec;
  slot: StartSlot;
  description: string;
}

/** What changed in a re-plan: the engine persists moved jobs and reports problems. */
export interface ReplanReport {
  moved: string[];
  suspended: string[];
  /** Jobs in P after the re-plan, with their reasons. */
  problematic: Array<{ id: string; reason: string }>;
  /** Problems solved by this re-plan. */
  solved: string[];
}
