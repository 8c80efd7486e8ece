import type { MigrationRecord } from '../../domain/agreement.js';
import type { Money } from '../../domain/negotiation.js';
import type { SiteTiming } from '../../scheduler/site.js';
import type { CompatibilityProfile } from './migration-compatibility.js';
import type { MigrationJob } from './migration-jobs.js';
import type { TargetScope } from './migration-policy.js';
import type { ScheduleWhatIf } from './migration-schedule.js';
import type { Peer, PeersConfig } from './peers.js';
import type { CheckpointData, PeerProviders } from './ports.js';

/**
 * What the Migration Controller (migration-controller.ts) works with: its dependencies, a run with its cases, and its
 * report.
 */
export interface MigrationControllerDeps {
  peers: PeersConfig;
  providers: PeerProviders;
  /** The problem horizon estimates how late a problematic job would be if it stayed. */
  timing: Pick<SiteTiming, 'problemHorizonSeconds'>;
  schedule: ScheduleWhatIf;
  /** Currency of penalties that name none, and of the sums compared in step 7. */
  currency: string;
  /** Our name, in the Name of agreements with peers. */
  providerName?: string;
  checkpointOf(agreementId: string): Promise<CheckpointData | undefined>;
  release(agreementId: string): Promise<void>;
  record(agreementId: string, migration: MigrationRecord): Promise<void>;
}

export type NotMigratedReason =
  | 'provider-policy'
  | 'customer-policy'
  | 'no-compatible-peer'
  | 'bandwidth'
  | 'no-penalty'
  | 'dearer-than-penalty'
  | 'peers-refused'
  | 'no-effect'
  | 'failed';

/** Why a peer stopped being a target for a job, and at which step. */
export interface DroppedTarget {
  peer: string;
  step: string;
  reason: string;
}

/** A peer's answer when asked: its price, or its refusal. */
export interface OfferSeen {
  peer: string;
  price?: Money;
  refused?: string;
}

/** What happened to one job. */
export interface JobMigration {
  agreementId: string;
  /** It was in P when the controller ran. */
  problematic: boolean;
  problem?: string;
  migrated: boolean;
  peer?: string;
  remoteAgreementId?: string;
  price?: Money;
  /** Problematic jobs: what staying would cost. General jobs: the penalties their move saves. */
  penalty?: Money;
  reason?: NotMigratedReason;
  /** One sentence for people. */
  detail: string;
  /** Targets dropped along the steps. */
  dropped: DroppedTarget[];
  offers: OfferSeen[];
  /** General jobs: the problematic jobs their move solves. */
  solves?: string[];
  /** Problematic jobs not migrated: the moves of other jobs that solved it. */
  solvedBy?: string[];
  /** Problematic jobs: still in P after the run, so their promise will be broken. */
  unsolved?: boolean;
  /** Things that went wrong after the job had moved (recording, releasing, declining other offers). */
  warnings?: string[];
}

export interface MigrationReport {
  at: Date;
  problematicBefore: string[];
  problematicAfter: string[];
  /** Problematic jobs first (those that had run, then by value), then the other jobs step 7 weighed. */
  jobs: JobMigration[];
  /** Jobs still in P: their promise will be broken, at the penalty shown when known. */
  violations: Array<{ agreementId: string; reason: string; penalty?: Money }>;
}

/** One job going through the steps. */
export interface MigrationCase {
  job: MigrationJob;
  problematic: boolean;
  scope?: TargetScope;
  profile?: CompatibilityProfile;
  /** The peers still in question. */
  targets: Peer[];
  report: JobMigration;
  /** Migrated, or out with a reason: later steps leave it alone. */
  done: boolean;
  /** In the report: every problematic job; a general job once step 7 weighs it. */
  listed: boolean;
}

export interface MigrationRun {
  now: Date;
  jobs: MigrationJob[];
  /** P when the run began (ids in P's order, with reasons). */
  problems: Array<{ id: string; reason: string }>;
  /** Candidates in order: problematic jobs first, then general jobs, least valuable first. */
  cases: MigrationCase[];
  /** What each problematic job would cost if it stayed. */
  penalties: Map<string, Money>;
}

export interface MigrationStep {
  name: string;
  run(run: MigrationRun, deps: MigrationControllerDeps): void | Promise<void>;
}
