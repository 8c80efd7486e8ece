/** The simulator (`wsag sim`): workload and cluster inputs, the simulation, its report. */
export { simulate, liability, type LiabilityFacts, type SimOptions, type SimProgress } from './simulator.js';
export { parseWorkload, parseCluster, checkAgainstCluster, WorkloadError, type Workload, type WorkloadJob, type WorkloadFailure, type WorkloadKind } from './workload.js';
export { loadInputs } from './files.js';
export { formatReport, duration } from './format.js';
export type { SimReport, JobOutcome, Violation, ViolationType, KindCounts, Utilisation, JobStatus } from './report.js';
