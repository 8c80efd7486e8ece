/**
 * The SLA term language (TERMS.md) as plain types. The XML mapping lives in src/xml;
 * these types are what the engine and scheduler reason about.
 */
export type GuaranteeLevel = 'Background' | 'Legacy' | 'Standard' | 'Enhanced' | 'Full';
export const guaranteeLevels: readonly GuaranteeLevel[] = ['Background', 'Legacy', 'Standard', 'Enhanced', 'Full'];

/** Seed 002 section 3.1: what the request obliges the parties to. */
export type RequestKind = 'NonBinding' | 'Preparatory' | 'Binding';

export type MigrationScope = 'None' | 'AdministrativeDomain' | 'Grid';
export type SecurityRequirement = 'IsolatedPartition' | 'HardenedNode' | 'Sandbox';
export const securityRequirements: readonly SecurityRequirement[] = ['IsolatedPartition', 'HardenedNode', 'Sandbox'];

export interface Library {
  name: string;
  version: string;
  /** A loaded library needs the identical version after migration; an unloaded one a compatible version. */
  loaded: boolean;
}

export interface MigrationPolicy {
  scope: MigrationScope;
  include: string[];
  exclude: string[];
}

export interface ChargeAccount {
  account: string;
  virtualOrganisation?: string;
  group?: string;
}

/** A fixed window: cannot be moved or suspended (OGF advance-reservation profile). */
export interface ReservationWindow {
  start: Date;
  end: Date;
}

/**
 * What the job runs (JSDL POSIXApplication): executed as given by a resource manager that
 * runs applications (WSAG_EXECUTOR=slurm); the others refuse it rather than ignore it.
 */
export interface Application {
  executable: string;
  arguments: string[];
  environment: Array<{ name: string; value: string }>;
  workingDirectory?: string;
  /** Files for standard input, output and error (relative ones to the working directory). */
  input?: string;
  output?: string;
  error?: string;
}

/** What an offer asks for, independent of how it was written on the wire. */
export interface ServiceRequest {
  nodeCount: number;
  cpusPerNode?: number;
  memoryPerNodeMiB?: number;
  interconnect?: string;
  operatingSystem?: string;
  architecture?: string;
  /** jsdl:CandidateHosts: the job runs only on these nodes (by node id). */
  candidateHosts?: string[];
  libraries: Library[];
  storageGB?: number;
  /** Runtime estimate t_i, seconds. */
  runtimeSeconds?: number;
  earliestStart?: Date;
  deadline?: Date;
  window?: ReservationWindow;
  requestKind: RequestKind;
  guaranteeLevel: GuaranteeLevel;
  /** Requested checkpoints per hour. */
  checkpointFrequency?: number;
  maxCoveredOutages: number;
  migrationPolicy?: MigrationPolicy;
  securityPolicy: SecurityRequirement[];
  chargeAccount?: ChargeAccount;
  /** Id of a binding reservation (an agreement) whose capacity this job uses, once, inside its window. */
  useReservation?: string;
  /** jsdl:Application: what runs; absent, the site's default job. */
  application?: Application;
  /**
   * sla:Interactive (CrossBroker, Fernández del Castillo 2008): the job starts within the site's bound of
   * acceptance or is refused at once. Once accepted it holds its nodes like a reservation:
   * the engine sets `window` to the booked start and runtime.
   */
  interactive?: boolean;
  /**
   * sla:Bid (Tycoon, Sandholm 2007): what a best-effort or background job offers per node-hour,
   * in the site's currency. Spare capacity is shared among bidders in proportion to their
   * bids, and the job is charged its bid for what it uses. Absent: the list price.
   */
  bid?: number;
  /**
   * sla:ResumesFromCheckpoint: a migrated job resumes from a checkpoint of at most this many
   * bytes, uploaded by its initiator after acceptance (Hovestadt 2006, section 3.6.7). Only such
   * agreements take checkpoints.
   */
  resumesFromCheckpointBytes?: number;
}

export interface Compensation {
  /** ISO 8601 duration (PT30M) or a count of violations. */
  assessmentInterval: { timeInterval: string } | { count: number };
  valueUnit?: string;
  amount?: number;
  cap?: number;
}

export type KpiTarget =
  | { kind: 'CompletedBy'; at: Date }
  | { kind: 'StartBy'; at: Date }
  | { kind: 'NodesAvailable'; nodes: number }
  | { kind: 'MaxCheckpointInterval'; interval: string }
  | { kind: 'Custom'; kpiName: string };

export interface GuaranteeTerm {
  name: string;
  serviceScope: string[];
  kpiName: string;
  target: KpiTarget;
  /**
   * wsag:QualifyingCondition sla:SubmittedBefore (an ISO 8601 duration): the term applies only to an offer made at
   * least this long before the job's start.
   */
  submittedBefore?: string;
  importance?: number;
  penalties: Compensation[];
  rewards: Compensation[];
}
