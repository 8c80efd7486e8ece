/** WSAG_CLUSTER_FILE: the site's node groups and timing, read and checked (loadConfig), and the nodes of a group. */
import { securityRequirements, type SecurityRequirement } from '../../domain/terms.js';
import type { ClusterNode } from '../../scheduler/model.js';
import { defaultSiteTiming, isSwitchTimingKey, type SiteTiming } from '../../scheduler/site.js';
import { ConfigError, readJsonFile } from './config-error.js';

/**
 * What each of the WSAG_CLUSTER_NODES identical nodes offers; requests asking for more, or another interconnect, are
 * refused.
 */
export const identicalNode: Omit<ClusterNode, 'id'> = { memoryGB: 256, cpus: 64, interconnect: 'InfiniBand' };

/**
 * A group of identical nodes in a cluster file; ids are idPrefix + a number (ib001, ib002,
 * ...); every node has the group's properties (ClusterNode: memory, CPUs, interconnect and
 * island, failure group, JSDL operating system and architecture, buffer, warm).
 */
export type NodeGroup = Omit<ClusterNode, 'id' | 'libraries'> & {
  count: number;
  idPrefix: string;
};

/** The JSON of WSAG_CLUSTER_FILE. */
export interface ClusterFile {
  nodeGroups: NodeGroup[];
  /** Overrides of the site timing model (src/scheduler/site.ts), by field name. */
  timing?: Partial<SiteTiming>;
  peerStandbyNodes?: number;
}

export function groupNodes(group: NodeGroup): ClusterNode[] {
  const width = Math.max(3, String(group.count).length);
  const { count, idPrefix, ...properties } = group;
  return Array.from({ length: count }, (_, i) => ({
    id: `${idPrefix}${String(i + 1).padStart(width, '0')}`,
    ...properties,
  }));
}

const groupKeys = [
  'count',
  'idPrefix',
  'memoryGB',
  'cpus',
  'interconnect',
  'island',
  'failureGroup',
  'operatingSystem',
  'architecture',
  'buffer',
  'warm',
  'securityPolicies',
];
const timingKeys = Object.keys(defaultSiteTiming) as Array<keyof SiteTiming>;

/** Reads and checks a cluster file; every problem is a ConfigError naming the file and the setting. */
export function readClusterFile(file: string): ClusterFile {
  const where = `WSAG_CLUSTER_FILE ${file}`;
  return parseClusterFile(readJsonFile(file, where), where);
}

/** Checks the parsed JSON of a cluster file; `where` starts every message. */
export function parseClusterFile(json: unknown, where: string): ClusterFile {
  const fail = (message: string): never => {
    throw new ConfigError(`${where}: ${message}`);
  };
  const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));
  if (!isObject(json)) return fail('the top level must be an object with "nodeGroups"');
  unknownKeys(json, ['nodeGroups', 'timing', 'peerStandbyNodes'], 'the file', fail);
  if (!Array.isArray(json.nodeGroups) || json.nodeGroups.length === 0)
    return fail(`"nodeGroups" must be a non-empty list of node groups, got ${show(json.nodeGroups)}`);
  const prefixes = new Map<string, number>();
  const nodeGroups = json.nodeGroups.map((raw: unknown, i: number): NodeGroup => {
    const name = `nodeGroups[${i}]`;
    if (!isObject(raw)) return fail(`${name} must be an object, got ${show(raw)}`);
    unknownKeys(raw, groupKeys, name, fail);
    const whole = (key: string, min: number, max: number): number => {
      const value = raw[key];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
        return fail(`${name}.${key} must be a whole number from ${min} to ${max}, got ${show(value)}`);
      return value;
    };
    const text = (key: string, required: boolean): string | undefined => {
      const value = raw[key];
      if (value === undefined && !required) return undefined;
      if (typeof value !== 'string' || value.trim() === '')
        return fail(`${name}.${key} must be a non-empty string, got ${show(value)}`);
      return value;
    };
    const idPrefix = text('idPrefix', true) as string;
    if (!/^[A-Za-z0-9_.-]+$/.test(idPrefix))
      fail(
        `${name}.idPrefix may hold only letters, digits, "_", "." and "-" (node ids appear in URLs), got ` +
          `${show(idPrefix)}`,
      );
    const earlier = prefixes.get(idPrefix);
    if (earlier !== undefined)
      fail(`${name}.idPrefix "${idPrefix}" is also used by nodeGroups[${earlier}]: node ids must be unique`);
    prefixes.set(idPrefix, i);
    const memoryGB = raw.memoryGB;
    if (typeof memoryGB !== 'number' || !(memoryGB > 0))
      fail(`${name}.memoryGB must be a positive number, got ${show(memoryGB)}`);
    if (raw.buffer !== undefined && typeof raw.buffer !== 'boolean')
      fail(`${name}.buffer must be true or false, got ${show(raw.buffer)}`);
    if (raw.warm !== undefined && typeof raw.warm !== 'boolean')
      fail(`${name}.warm must be true or false, got ${show(raw.warm)}`);
    if (raw.warm === true && raw.buffer === true)
      fail(`${name} is both "buffer" and "warm": a node is one or the other`);
    const group: NodeGroup = {
      count: whole('count', 1, 1_000_000),
      idPrefix,
      memoryGB: memoryGB as number,
      cpus: whole('cpus', 1, 1_000_000),
    };
    for (const key of ['interconnect', 'island', 'failureGroup', 'operatingSystem', 'architecture'] as const) {
      const value = text(key, false);
      if (value !== undefined) group[key] = value;
    }
    if (raw.buffer === true) group.buffer = true;
    if (raw.warm === true) group.warm = true;
    if (raw.securityPolicies !== undefined) {
      const policies = raw.securityPolicies;
      if (!Array.isArray(policies) || policies.some((p) => !securityRequirements.includes(p as SecurityRequirement))) {
        fail(`${name}.securityPolicies must be a list of ${securityRequirements.join(', ')}, got ${show(policies)}`);
      }
      group.securityPolicies = [...new Set(policies as SecurityRequirement[])].sort();
    }
    return group;
  });
  if (nodeGroups.every((g) => g.buffer || g.warm))
    fail('every node group is a buffer or warm group: SLA jobs need at least one node of their own');
  const file: ClusterFile = { nodeGroups };
  if (json.timing !== undefined) {
    if (!isObject(json.timing))
      return fail(`"timing" must be an object of site timing settings, got ${show(json.timing)}`);
    unknownKeys(json.timing, timingKeys, 'timing', fail);
    const timing: Partial<SiteTiming> = {};
    for (const key of timingKeys) {
      const value = json.timing[key];
      if (value === undefined) continue;
      if (isSwitchTimingKey(key)) {
        if (typeof value !== 'boolean') fail(`timing.${key} must be true or false, got ${show(value)}`);
        timing[key] = value as boolean;
        continue;
      }
      const min = key === 'slowdownFactor' ? 1 : key === 'problemHorizonSeconds' ? 1 : 0;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
        fail(`timing.${key} must be a number of at least ${min}, got ${show(value)}`);
      if ((key === 'defaultCoveredOutages' || key === 'reservationSpareNodes') && !Number.isInteger(value))
        fail(`timing.${key} must be a whole number, got ${show(value)}`);
      if (key === 'promiseRiskLimit' && (value as number) > 1)
        fail(`timing.promiseRiskLimit is a chance: a number from 0 to 1, got ${show(value)}`);
      if (key === 'chanceShare' && (value as number) > 1)
        fail(`timing.chanceShare is a share of a run: a number from 0 to 1, got ${show(value)}`);
      timing[key] = value as number;
    }
    file.timing = timing;
  }
  if (json.peerStandbyNodes !== undefined) {
    const value = json.peerStandbyNodes;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
      fail(`"peerStandbyNodes" must be a whole number of at least 0, got ${show(value)}`);
    file.peerStandbyNodes = value as number;
  }
  return file;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKeys(
  object: Record<string, unknown>,
  known: readonly string[],
  name: string,
  fail: (message: string) => never,
): void {
  for (const key of Object.keys(object)) {
    if (!known.includes(key)) fail(`${name} has an unknown setting "${key}"; known: ${known.join(', ')}`);
  }
}
