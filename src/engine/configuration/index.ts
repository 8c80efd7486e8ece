/** Configuration: the validated settings and the cluster description. */
export { ConfigError, clusterDescription, loadConfig } from './config.js';
export type { CpuScheduling, ServerConfig, SlurmConfig } from './config.js';
