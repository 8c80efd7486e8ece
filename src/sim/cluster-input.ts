import type { ClusterDescription, ClusterNode } from '../scheduler/model.js';
import { defaultSiteTiming, isSwitchTimingKey, type SiteTiming } from '../scheduler/site.js';
import { WorkloadError, isObject, shown, Fields, type NumberKind, optional } from './input-fields.js';
import type { Workload } from './workload.js';

/**
 * Checks a workload against a cluster: failures name its nodes and a node does not fail
 * again while it is out; every job's node count fits the cluster's nodes.
 */
export function checkAgainstCluster(workload: Workload, cluster: ClusterDescription): void {
  const known = new Set(cluster.nodes.map((n) => n.id));
  const down = new Map<string, { index: number; until: number }>();
  const order = workload.failures.map((f, i) => ({ f, i })).sort((a, b) => a.f.at - b.f.at || a.i - b.i);
  for (const { f, i } of order) {
    if (!known.has(f.node))
      throw new WorkloadError(
        `failures[${i}]: node "${f.node}" is not in the cluster (${cluster.nodes.length} nodes: ` +
          `${describeIds(cluster.nodes)})`,
      );
    const previous = down.get(f.node);
    if (previous && previous.until > f.at) {
      throw new WorkloadError(
        `failures[${i}]: node "${f.node}" fails at ${f.at} s while it is still out after failures[` +
          `${previous.index}] (${previous.until === Infinity ? 'never repaired' : `repaired at ${previous.until} s`})`,
      );
    }
    down.set(f.node, { index: i, until: f.repairAt ?? Infinity });
  }
  workload.jobs.forEach((job, i) => {
    if (job.nodes > cluster.nodes.length)
      throw new WorkloadError(
        `jobs[${i}] (${job.id}): ${job.nodes} nodes requested but the cluster has ${cluster.nodes.length}`,
      );
  });
}

export function describeIds(nodes: readonly ClusterNode[]): string {
  const ids = nodes.map((n) => n.id);
  return ids.length <= 6 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')}, ..., ${ids.slice(-2).join(', ')}`;
}

export const nodeFields = [
  'id',
  'count',
  'prefix',
  'first',
  'digits',
  'memoryGB',
  'cpus',
  'interconnect',
  'island',
  'failureGroup',
  'operatingSystem',
  'architecture',
  'buffer',
  'warm',
] as const;

export const timingKeys = Object.keys(defaultSiteTiming) as Array<keyof SiteTiming>;

/**
 * Validates a cluster description: `nodes` (single nodes with an `id`, or groups with a
 * `count` and an id `prefix`, numbered from `first` (default 1) with `digits` digits),
 * optional `timing` overrides of the site's timing model
 * (src/scheduler/site.ts), and `peerStandbyNodes` for Full service.
 */
export function parseCluster(input: unknown): ClusterDescription {
  if (!isObject(input))
    throw new WorkloadError(
      `the cluster must be a JSON object with "nodes", got ${Array.isArray(input) ? 'an array' : shown(input)}`,
    );
  const top = new Fields('cluster', input, ['name', 'description', 'nodes', 'timing', 'peerStandbyNodes']);
  const entries = top.array('nodes', true) as unknown[];
  const nodes: ClusterNode[] = [];
  const seen = new Map<string, string>();
  entries.forEach((raw, i) => {
    const where = `cluster nodes[${i}]`;
    if (!isObject(raw)) throw new WorkloadError(`${where}: a node must be an object, got ${shown(raw)}`);
    const f = new Fields(where, raw, nodeFields);
    const count = f.number('count', 'count');
    const id = f.string('id');
    const prefix = f.string('prefix');
    if (count === undefined && id === undefined)
      throw f.error('give a node "id", or a "count" of nodes and an id "prefix"');
    if (count !== undefined && id !== undefined)
      throw f.error('give either "id" (one node) or "count" and "prefix" (a group), not both');
    if (count !== undefined && prefix === undefined)
      throw f.error('"prefix" is required with "count" (node ids are prefix + number)');
    if (count === undefined && prefix !== undefined) throw f.error('"prefix" needs a "count"');
    const first = f.number('first', 'whole') ?? 1;
    const digits = f.number('digits', 'count') ?? String(first + (count ?? 1) - 1).length;
    if (count === undefined && (f.has('first') || f.has('digits')))
      throw f.error('"first" and "digits" need a "count"');
    const props: Omit<ClusterNode, 'id'> = {
      memoryGB: f.number('memoryGB', 'positive', true),
      cpus: f.number('cpus', 'count', true),
      ...optional('interconnect', f.string('interconnect')),
      ...optional('island', f.string('island')),
      ...optional('failureGroup', f.string('failureGroup')),
      ...optional('operatingSystem', f.string('operatingSystem')),
      ...optional('architecture', f.string('architecture')),
      ...(f.boolean('buffer') ? { buffer: true } : {}),
      ...(f.boolean('warm') ? { warm: true } : {}),
    };
    const ids =
      count === undefined
        ? [id as string]
        : Array.from({ length: count }, (_, k) => `${prefix}${String(first + k).padStart(digits, '0')}`);
    for (const nodeId of ids) {
      const first = seen.get(nodeId);
      if (first !== undefined) throw f.error(`node id "${nodeId}" is already used by ${first}`);
      seen.set(nodeId, where);
      nodes.push({ id: nodeId, ...props });
    }
  });
  if (nodes.length === 0) throw top.error('"nodes" must describe at least one node');
  const timing: SiteTiming = { ...defaultSiteTiming };
  const overrides = top.object_('timing');
  if (overrides) {
    const f = new Fields('cluster timing', overrides, timingKeys);
    for (const key of timingKeys) {
      if (!f.has(key)) continue;
      if (isSwitchTimingKey(key)) {
        timing[key] = f.boolean(key) as boolean;
      } else {
        const kind: NumberKind =
          key === 'slowdownFactor'
            ? 'factor'
            : key === 'defaultCoveredOutages' || key === 'reservationSpareNodes'
              ? 'whole'
              : key === 'defaultMemoryPerNodeGB' || key === 'problemHorizonSeconds'
                ? 'positive'
                : key === 'promiseRiskLimit' || key === 'chanceShare'
                  ? 'share'
                  : 'non-negative';
        timing[key] = f.number(key, kind, true);
      }
    }
  }
  return { nodes, timing, peerStandbyNodes: top.number('peerStandbyNodes', 'whole') ?? 0 };
}
