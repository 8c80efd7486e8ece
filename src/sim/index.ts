/** The simulator (`wsag sim`): workload and cluster inputs, the simulation, its report. */
export { simulate, runSimulation, type SimOptions, type SimProgress } from './simulator.js';
export { refusedRequests, type RefusedRequests } from './events.js';
export { liabilityOf, type LiabilityFacts } from './liability.js';
export { parseSimulatedPeers, type SimulatedPeersConfig, type SimulatedPeerTerms } from './peers.js';
export { SimulatedPeers, type PeerBooking, type PeerActivity } from './simulated-peers.js';
export { parseCluster, checkAgainstCluster } from './cluster-input.js';
export { WorkloadError } from './input-fields.js';
export {
  parseWorkload,
  type Workload,
  type WorkloadJob,
  type WorkloadFailure,
  type WorkloadKind,
} from './workload.js';
export { drawnFailures, loadInputs, loadPeers, loadVoPolicy } from './files.js';
export { compareOverDraws, formatDraws, type DrawsComparison, type DrawOutcome } from './draws.js';
export { lublinSwf, lublinJobs, type LublinOptions } from './lublin.js';
export { formatShareAccuracy, runShareAccuracy, type ShareAccuracyReport } from './share-accuracy.js';
export { formatReport, duration } from './format.js';
export type { SimReport, JobOutcome, Violation, ViolationType, KindCounts, Utilisation, JobStatus } from './report.js';
export { compareReports, formatComparison, type SimComparison } from './compare.js';
export type { MigrationSection, MigrationMove } from './report.js';
export { comparePricing, formatPricingComparison, type PricingComparison, type PricingRun } from './pricing.js';
export {
  compareInteractive,
  formatInteractiveComparison,
  type InteractiveComparison,
  type InteractiveRun,
} from './interactive.js';
export {
  atOfferedLoad,
  compareBaselines,
  formatBaselines,
  formatLoadSweep,
  sweepLoads,
  type BaselineComparison,
  type LoadSweep,
} from './baselines.js';
