/** Configuration: the validated settings and the cluster description. */
export { ConfigError, loadConfig } from './config.js';
export { clusterDescription } from './cluster-description.js';
export type { CpuScheduling, ServerConfig, SlurmConfig } from './config.js';
