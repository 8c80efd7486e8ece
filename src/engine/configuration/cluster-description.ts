import type { ClusterDescription, ClusterNode } from '../../scheduler/model.js';
import { defaultSiteTiming, type SiteTiming } from '../../scheduler/site.js';
import { groupNodes, identicalNode } from './cluster-file.js';
import { defaultConfig, type ServerConfig } from './server-config.js';

/**
 * Warm nodes among the identical nodes: as configured; unset, 4 on the shipped cluster of 64 nodes (its interactive
 * sessions start at once), else 0.
 */
export function warmNodesOf(config: Pick<ServerConfig, 'warmNodes' | 'clusterNodes'>): number {
  return config.warmNodes ?? (config.clusterNodes === defaultConfig.clusterNodes ? 4 : 0);
}

/** The cluster the planning scheduler plans on, from the configuration. */
export function clusterDescription(config: ServerConfig): ClusterDescription {
  const timing: SiteTiming = {
    ...defaultSiteTiming,
    ...config.cluster?.timing,
    problemHorizonSeconds: config.problemHorizonSeconds,
  };
  const nodes: ClusterNode[] = config.cluster
    ? config.cluster.nodeGroups.flatMap((group) => groupNodes(group))
    : groupNodes({ count: config.clusterNodes, idPrefix: 'n', ...identicalNode }).map((node, i) => {
        const fromEnd = config.clusterNodes - i;
        if (fromEnd <= config.bufferNodes) return { ...node, buffer: true };
        return fromEnd <= config.bufferNodes + warmNodesOf(config) ? { ...node, warm: true } : node;
      });
  return { nodes, timing, peerStandbyNodes: config.peerStandbyNodes };
}
