import { securityRequirements, type SecurityRequirement } from '../../domain/terms.js';
import type { ClusterNode } from '../../scheduler/model.js';
import type { SlurmCli } from './slurm-cli.js';

/**
 * The cluster as Slurm describes it: nodes, CPUs, memory, architecture and
 * features from `sinfo --json`. Features become our node properties by a documented
 * convention (docs/operations.md, "Slurm"):
 *   ib | infiniband      interconnect InfiniBand     eth | ethernet   interconnect Ethernet
 *   island-NAME          interconnect island NAME    sec-POLICY       security policy POLICY
 *   group-NAME           failure group NAME          wsag-warm        kept prepared for interactive sessions
 * Other features are kept by Slurm and ignored here. The operating system is LINUX for
 * every node Slurm reports as Linux.
 */
export interface SlurmNode {
  name: string;
  cpus: number;
  /** MB. */
  real_memory: number;
  architecture?: string;
  operating_system?: string;
  features?: string;
  state: string;
  state_flags?: string[];
  partitions?: string[];
  reason?: string;
}

export function clusterNodeOf(node: SlurmNode): ClusterNode {
  const features = (node.features ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  const result: ClusterNode = { id: node.name, cpus: node.cpus, memoryGB: node.real_memory / 1024 };
  for (const feature of features) {
    const lower = feature.toLowerCase();
    if (lower === 'ib' || lower === 'infiniband') result.interconnect = 'InfiniBand';
    else if (lower === 'eth' || lower === 'ethernet') result.interconnect = 'Ethernet';
    else if (lower.startsWith('island-')) result.island = feature.slice('island-'.length);
    else if (lower.startsWith('group-')) result.failureGroup = feature.slice('group-'.length);
    else if (lower === 'wsag-warm') result.warm = true;
    else if (lower.startsWith('sec-') && securityRequirements.includes(feature.slice(4) as SecurityRequirement)) {
      (result.securityPolicies ??= []).push(feature.slice(4) as SecurityRequirement);
    }
  }
  if (node.architecture) result.architecture = node.architecture;
  if (node.operating_system?.startsWith('Linux')) result.operatingSystem = 'LINUX';
  return result;
}

/**
 * Whether Slurm will run nothing on the node: DOWN, DRAIN(ED/ING), FAIL(ING) or FUTURE. A
 * node that is only late to answer (NOT_RESPONDING) still counts: Slurm marks it DOWN
 * itself once SlurmdTimeout passes, and that is what enters the failure path.
 */
export function isUnavailable(node: SlurmNode): boolean {
  const states = [node.state, ...(node.state_flags ?? [])].map((s) => s.toUpperCase());
  return states.some((s) => ['DOWN', 'DRAIN', 'DRAINED', 'DRAINING', 'FAIL', 'FAILING', 'FUTURE'].includes(s));
}

/** The nodes of `partition` (every partition's when absent), as `sinfo --json` reports them. */
export async function slurmNodes(cli: SlurmCli, partition?: string): Promise<SlurmNode[]> {
  const answer = await cli.json<{ nodes: SlurmNode[] }>('sinfo', partition ? ['--partition', partition] : []);
  return answer.nodes.filter((n) => partition === undefined || (n.partitions ?? []).includes(partition));
}
