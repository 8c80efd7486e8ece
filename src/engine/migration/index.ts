/**
 * Migration: the Migration Controller moving jobs to peer providers, remote standby, the peers file. Its ports (peer
 * providers) are in ports.ts.
 */
export { MigratedJobs } from './migrated-jobs.js';
export { MigrationController } from './migration-controller.js';
export type { MigrationReport, NotMigratedReason } from './migration-controller.js';
export { migrationJobOf } from './migration-jobs.js';
export type { MigrationJob } from './migration-jobs.js';
export { MigrationRunner } from './migration-runner.js';
export { planWhatIf } from './migration-schedule.js';
export type { ProblemList, ScheduleWhatIf } from './migration-schedule.js';
export { RemoteStandby } from './migration-standby.js';
export { parsePeersFile, readPeersFile } from './peers.js';
export type { Peer, PeersConfig } from './peers.js';
export type {
  CheckpointData,
  PeerProviders,
  PeerQuote,
  PeerQuoteAnswer,
  PeerRequest,
  RemoteAgreement,
  RemoteAgreementState,
  StandbyHold,
} from './ports.js';
export { releaseBoundStandby } from './standby-release.js';
