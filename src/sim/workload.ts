import type { GuaranteeLevel, MigrationScope } from '../domain/terms.js';
import type { ClusterDescription, ClusterNode } from '../scheduler/model.js';
import { defaultSiteTiming, type SiteTiming } from '../scheduler/site.js';

/**
 * The simulator's inputs: a workload (jobs and failure events, times in seconds from the
 * start of the simulation) and a cluster description. Both arrive as parsed JSON and are
 * validated here with messages that name the job or event and the field; nothing here
 * reads files (see files.ts).
 */

export type WorkloadKind = 'reservation' | 'deadline' | 'best-effort' | 'background';
export const workloadKinds: readonly WorkloadKind[] = ['reservation', 'deadline', 'best-effort', 'background'];

export interface WorkloadJob {
  id: string;
  /** Seconds from the start: when the request reaches the provider. */
  arrival: number;
  kind: WorkloadKind;
  level: GuaranteeLevel;
  nodes: number;
  /** t_i, the runtime the user estimates (seconds); for a reservation the length of its window. */
  estimate: number;
  /** The runtime the job actually needs (seconds, at most the estimate); a reservation's holder releases its nodes after this long. */
  runtime: number;
  /** Deadline jobs: seconds from the start. */
  deadline?: number;
  /** Deadline and best-effort jobs: not before this (seconds from the start). */
  earliestStart?: number;
  /** Reservations: the window, seconds from the start. */
  window?: { start: number; end: number };
  /** The operator's value of the job (orders the scheduler's problem list and new requests). */
  value: number;
  /** What the provider owes the customer if the promise breaks (see the liability rules in the report). */
  penalty: number;
  /** Memory per node the job needs and checkpoints (GB); default: the site's assumption. */
  memoryGB?: number;
  storageGB: number;
  /** n_romax; 0: the site's default for fault-tolerant levels. */
  outages: number;
  checkpointsPerHour?: number;
  interconnect?: string;
  /** The customer's migration policy (sla:MigrationPolicy Scope): None forbids moving the job to a peer; absent, the provider's policy decides. */
  migration?: MigrationScope;
  /** The virtual organisation the job is charged to (VO usage SLAs, `wsag sim --vo-policy`). */
  vo?: string;
}

export interface WorkloadFailure {
  /** Seconds from the start. */
  at: number;
  node: string;
  /** When the node is back; absent: it stays out until the end. */
  repairAt?: number;
}

export interface Workload {
  name: string;
  description?: string;
  /** The instant simulated time 0 stands for (ms since the epoch); messages show times from it. */
  start: number;
  currency: string;
  /** A cluster named by the workload: a path relative to the workload file, or the description itself. */
  cluster?: string | Record<string, unknown>;
  jobs: WorkloadJob[];
  failures: WorkloadFailure[];
}

export const defaultStart = '2026-01-05T00:00:00Z';

/** An input error: the message names the file part, the entry and the field. */
export class WorkloadError extends Error {
  override readonly name = 'WorkloadError';
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'nothing';
  return JSON.stringify(value) ?? String(value);
}

/** Reads the fields of one JSON object, naming it (`jobs[3] (J4)`) in every message. */
class Fields {
  constructor(
    private readonly where: string,
    private readonly object: Json,
    allowed: readonly string[],
  ) {
    for (const key of Object.keys(object)) {
      if (!allowed.includes(key)) throw this.error(`unknown field "${key}" (allowed: ${allowed.join(', ')})`);
    }
  }

  error(message: string): WorkloadError {
    return new WorkloadError(`${this.where}: ${message}`);
  }

  has(name: string): boolean {
    return this.object[name] !== undefined;
  }

  string(name: string, required: true): string;
  string(name: string, required?: false): string | undefined;
  string(name: string, required = false): string | undefined {
    const value = this.object[name];
    if (value === undefined) {
      if (required) throw this.error(`"${name}" is required`);
      return undefined;
    }
    if (typeof value !== 'string' || value.trim() === '') throw this.error(`"${name}" must be a non-empty string, got ${shown(value)}`);
    return value;
  }

  /** A number with a range: 'count' (whole, >= 1), 'whole' (>= 0), 'positive' (> 0), 'non-negative' (>= 0). */
  number(name: string, kind: NumberKind, required: true): number;
  number(name: string, kind: NumberKind, required?: false): number | undefined;
  number(name: string, kind: NumberKind, required = false): number | undefined {
    const value = this.object[name];
    if (value === undefined) {
      if (required) throw this.error(`"${name}" is required`);
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || !numberOk(value, kind)) throw this.error(`"${name}" must be ${kindText[kind]}, got ${shown(value)}`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const value = this.object[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') throw this.error(`"${name}" must be true or false, got ${shown(value)}`);
    return value;
  }

  object_(name: string): Json | undefined {
    const value = this.object[name];
    if (value === undefined) return undefined;
    if (!isObject(value)) throw this.error(`"${name}" must be an object, got ${shown(value)}`);
    return value;
  }

  array(name: string, required: boolean): unknown[] | undefined {
    const value = this.object[name];
    if (value === undefined) {
      if (required) throw this.error(`"${name}" is required`);
      return undefined;
    }
    if (!Array.isArray(value)) throw this.error(`"${name}" must be an array, got ${shown(value)}`);
    return value;
  }
}

type NumberKind = 'count' | 'whole' | 'positive' | 'non-negative' | 'factor';

const kindText: Record<NumberKind, string> = {
  count: 'a whole number, 1 or more',
  whole: 'a whole number, 0 or more',
  positive: 'a number greater than 0',
  'non-negative': 'a number, 0 or more',
  factor: 'a number, 1 or more',
};

function numberOk(value: number, kind: NumberKind): boolean {
  switch (kind) {
    case 'count':
      return Number.isInteger(value) && value >= 1;
    case 'whole':
      return Number.isInteger(value) && value >= 0;
    case 'positive':
      return value > 0;
    case 'non-negative':
      return value >= 0;
    case 'factor':
      return value >= 1;
  }
}

const slaLevels: readonly GuaranteeLevel[] = ['Legacy', 'Standard', 'Enhanced', 'Full'];
const jobFields = [
  'id', 'arrival', 'kind', 'level', 'nodes', 'estimate', 'runtime', 'deadline', 'earliestStart', 'window',
  'value', 'penalty', 'memoryGB', 'storageGB', 'outages', 'checkpointsPerHour', 'interconnect', 'migration', 'vo',
] as const;
const migrationScopes: readonly MigrationScope[] = ['None', 'AdministrativeDomain', 'Grid'];

/** Validates a parsed workload document. */
export function parseWorkload(input: unknown): Workload {
  if (!isObject(input)) throw new WorkloadError(`the workload must be a JSON object with "jobs", got ${Array.isArray(input) ? 'an array' : shown(input)}`);
  const top = new Fields('workload', input, ['name', 'description', 'start', 'currency', 'cluster', 'jobs', 'failures']);
  const startText = top.string('start') ?? defaultStart;
  const start = Date.parse(startText);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(startText) || Number.isNaN(start)) {
    throw top.error(`"start" must be an ISO 8601 date-time with a time zone such as ${defaultStart}, got ${shown(startText)}`);
  }
  const cluster = input.cluster;
  if (cluster !== undefined && !(typeof cluster === 'string' && cluster.trim() !== '') && !isObject(cluster)) {
    throw top.error(`"cluster" must be a file name (relative to the workload) or a cluster description object, got ${shown(cluster)}`);
  }
  const jobsInput = top.array('jobs', true) as unknown[];
  const jobs: WorkloadJob[] = [];
  const ids = new Map<string, number>();
  jobsInput.forEach((raw, i) => {
    const job = parseJob(raw, i);
    const earlier = ids.get(job.id);
    if (earlier !== undefined) throw new WorkloadError(`jobs[${i}] (${job.id}): id "${job.id}" is already used by jobs[${earlier}]`);
    ids.set(job.id, i);
    jobs.push(job);
  });
  const failures = (top.array('failures', false) ?? []).map((raw, i) => parseFailure(raw, i));
  return {
    name: top.string('name') ?? 'workload',
    ...(top.string('description') !== undefined ? { description: top.string('description') as string } : {}),
    start,
    currency: top.string('currency') ?? 'EUR',
    ...(cluster !== undefined ? { cluster } : {}),
    jobs,
    failures,
  };
}

function parseJob(raw: unknown, i: number): WorkloadJob {
  if (!isObject(raw)) throw new WorkloadError(`jobs[${i}]: a job must be an object, got ${shown(raw)}`);
  const rawId = raw.id;
  const label = typeof rawId === 'string' && rawId.trim() !== '' ? `jobs[${i}] (${rawId})` : `jobs[${i}]`;
  const f = new Fields(label, raw, jobFields);
  const id = f.string('id', true);
  const arrival = f.number('arrival', 'non-negative', true);
  const kindText = f.string('kind', true);
  if (!(workloadKinds as readonly string[]).includes(kindText)) throw f.error(`"kind" must be one of ${workloadKinds.join(', ')}, got ${shown(kindText)}`);
  const kind = kindText as WorkloadKind;
  const nodes = f.number('nodes', 'count', true);

  const levelText = f.string('level');
  const allowedLevels: readonly GuaranteeLevel[] = kind === 'background' ? ['Background'] : kind === 'best-effort' ? ['Legacy', 'Standard'] : slaLevels;
  const level = (levelText ?? (kind === 'background' ? 'Background' : kind === 'best-effort' ? 'Legacy' : undefined)) as GuaranteeLevel | undefined;
  if (level === undefined) throw f.error(`"level" is required for a ${kind} job (one of ${allowedLevels.join(', ')})`);
  if (!allowedLevels.includes(level)) throw f.error(`"level" of a ${kind} job must be ${allowedLevels.length === 1 ? allowedLevels[0] : `one of ${allowedLevels.join(', ')}`}, got ${shown(levelText)}`);

  let estimate: number;
  let window: { start: number; end: number } | undefined;
  if (kind === 'reservation') {
    const w = f.object_('window');
    if (!w) throw f.error('"window" is required for a reservation ({ "start": s, "end": s })');
    const wf = new Fields(`${label} window`, w, ['start', 'end']);
    window = { start: wf.number('start', 'non-negative', true), end: wf.number('end', 'non-negative', true) };
    if (window.end <= window.start) throw f.error(`window ends (${window.end} s) before it starts (${window.start} s)`);
    if (window.start < arrival) throw f.error(`window starts (${window.start} s) before the request arrives (${arrival} s)`);
    if (f.has('estimate')) throw f.error('"estimate" does not apply to a reservation: its window is the estimate');
    for (const name of ['deadline', 'earliestStart'] as const) if (f.has(name)) throw f.error(`"${name}" does not apply to a reservation: it has a window`);
    estimate = window.end - window.start;
  } else {
    if (f.has('window')) throw f.error(`"window" applies to reservations only, not to a ${kind} job`);
    estimate = f.number('estimate', 'positive', true);
  }
  const runtime = f.number('runtime', 'positive') ?? estimate;
  if (runtime > estimate) {
    throw f.error(
      kind === 'reservation'
        ? `runtime (${runtime} s) is longer than the window (${estimate} s)`
        : `runtime (${runtime} s) is longer than the estimate (${estimate} s): the scheduler plans with the estimate`,
    );
  }

  const deadline = f.number('deadline', 'non-negative');
  if (kind === 'deadline') {
    if (deadline === undefined) throw f.error('"deadline" is required for a deadline job (seconds from the start)');
    if (deadline <= arrival) throw f.error(`deadline (${deadline} s) is not after the arrival (${arrival} s)`);
  } else if (deadline !== undefined) {
    throw f.error(`"deadline" applies to deadline jobs only, not to a ${kind} job`);
  }
  const earliestStart = f.number('earliestStart', 'non-negative');
  if (earliestStart !== undefined && deadline !== undefined && earliestStart >= deadline) {
    throw f.error(`earliestStart (${earliestStart} s) is not before the deadline (${deadline} s)`);
  }

  const checkpointsPerHour = f.number('checkpointsPerHour', 'non-negative');
  const memoryGB = f.number('memoryGB', 'positive');
  const interconnect = f.string('interconnect');
  const migration = f.string('migration');
  if (migration !== undefined && !(migrationScopes as readonly string[]).includes(migration)) {
    throw f.error(`"migration" must be one of ${migrationScopes.join(', ')}, got ${shown(migration)}`);
  }
  if (migration !== undefined && kind !== 'deadline' && kind !== 'reservation') throw f.error(`"migration" applies to deadline jobs and reservations, not to a ${kind} job`);
  const vo = f.string('vo');
  return {
    id,
    arrival,
    kind,
    level,
    nodes,
    estimate,
    runtime,
    ...(deadline !== undefined ? { deadline } : {}),
    ...(earliestStart !== undefined ? { earliestStart } : {}),
    ...(window ? { window } : {}),
    value: f.number('value', 'non-negative') ?? 1,
    penalty: f.number('penalty', 'non-negative') ?? 0,
    ...(memoryGB !== undefined ? { memoryGB } : {}),
    storageGB: f.number('storageGB', 'non-negative') ?? 0,
    outages: f.number('outages', 'whole') ?? 0,
    ...(checkpointsPerHour !== undefined ? { checkpointsPerHour } : {}),
    ...(interconnect !== undefined ? { interconnect } : {}),
    ...(migration !== undefined ? { migration: migration as MigrationScope } : {}),
    ...(vo !== undefined ? { vo } : {}),
  };
}

function parseFailure(raw: unknown, i: number): WorkloadFailure {
  if (!isObject(raw)) throw new WorkloadError(`failures[${i}]: a failure must be an object, got ${shown(raw)}`);
  const f = new Fields(`failures[${i}]`, raw, ['at', 'node', 'repairAt']);
  const at = f.number('at', 'non-negative', true);
  const node = f.string('node', true);
  const repairAt = f.number('repairAt', 'non-negative');
  if (repairAt !== undefined && repairAt <= at) throw f.error(`repairAt (${repairAt} s) is not after the failure (${at} s)`);
  return { at, node, ...(repairAt !== undefined ? { repairAt } : {}) };
}

/**
 * Checks a workload against a cluster: failures name its nodes and a node does not fail
 * again while it is out; every job's node count fits the cluster's nodes.
 */
export function checkAgainstCluster(workload: Workload, cluster: ClusterDescription): void {
  const known = new Set(cluster.nodes.map((n) => n.id));
  const down = new Map<string, { index: number; until: number }>();
  const order = workload.failures.map((f, i) => ({ f, i })).sort((a, b) => a.f.at - b.f.at || a.i - b.i);
  for (const { f, i } of order) {
    if (!known.has(f.node)) throw new WorkloadError(`failures[${i}]: node "${f.node}" is not in the cluster (${cluster.nodes.length} nodes: ${describeIds(cluster.nodes)})`);
    const previous = down.get(f.node);
    if (previous && previous.until > f.at) {
      throw new WorkloadError(
        `failures[${i}]: node "${f.node}" fails at ${f.at} s while it is still out after failures[${previous.index}] (${previous.until === Infinity ? 'never repaired' : `repaired at ${previous.until} s`})`,
      );
    }
    down.set(f.node, { index: i, until: f.repairAt ?? Infinity });
  }
  workload.jobs.forEach((job, i) => {
    if (job.nodes > cluster.nodes.length) throw new WorkloadError(`jobs[${i}] (${job.id}): ${job.nodes} nodes requested but the cluster has ${cluster.nodes.length}`);
  });
}

function describeIds(nodes: readonly ClusterNode[]): string {
  const ids = nodes.map((n) => n.id);
  return ids.length <= 6 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')}, ..., ${ids.slice(-2).join(', ')}`;
}

// ------------------------------------------------------------------ cluster

const nodeFields = ['id', 'count', 'prefix', 'first', 'digits', 'memoryGB', 'cpus', 'interconnect', 'island', 'operatingSystem', 'architecture', 'buffer', 'warm'] as const;
const timingKeys = Object.keys(defaultSiteTiming) as Array<keyof SiteTiming>;

/**
 * Validates a cluster description: `nodes` (single nodes with an `id`, or groups with a
 * `count` and an id `prefix`, numbered from `first` (default 1) with `digits` digits),
 * optional `timing` overrides of the site's timing model
 * (src/scheduler/site.ts), and `peerStandbyNodes` for Full service.
 */
export function parseCluster(input: unknown): ClusterDescription {
  if (!isObject(input)) throw new WorkloadError(`the cluster must be a JSON object with "nodes", got ${Array.isArray(input) ? 'an array' : shown(input)}`);
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
    if (count === undefined && id === undefined) throw f.error('give a node "id", or a "count" of nodes and an id "prefix"');
    if (count !== undefined && id !== undefined) throw f.error('give either "id" (one node) or "count" and "prefix" (a group), not both');
    if (count !== undefined && prefix === undefined) throw f.error('"prefix" is required with "count" (node ids are prefix + number)');
    if (count === undefined && prefix !== undefined) throw f.error('"prefix" needs a "count"');
    const first = f.number('first', 'whole') ?? 1;
    const digits = f.number('digits', 'count') ?? String(first + (count ?? 1) - 1).length;
    if (count === undefined && (f.has('first') || f.has('digits'))) throw f.error('"first" and "digits" need a "count"');
    const props: Omit<ClusterNode, 'id'> = {
      memoryGB: f.number('memoryGB', 'positive', true),
      cpus: f.number('cpus', 'count', true),
      ...optional('interconnect', f.string('interconnect')),
      ...optional('island', f.string('island')),
      ...optional('operatingSystem', f.string('operatingSystem')),
      ...optional('architecture', f.string('architecture')),
      ...(f.boolean('buffer') ? { buffer: true } : {}),
      ...(f.boolean('warm') ? { warm: true } : {}),
    };
    const ids = count === undefined ? [id as string] : Array.from({ length: count }, (_, k) => `${prefix}${String(first + k).padStart(digits, '0')}`);
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
      if (key === 'parallelCheckpoint') {
        timing.parallelCheckpoint = f.boolean(key) as boolean;
      } else {
        const kind: NumberKind = key === 'slowdownFactor' ? 'factor' : key === 'defaultCoveredOutages' ? 'whole' : key === 'defaultMemoryPerNodeGB' || key === 'problemHorizonSeconds' ? 'positive' : 'non-negative';
        timing[key] = f.number(key, kind, true);
      }
    }
  }
  return { nodes, timing, peerStandbyNodes: top.number('peerStandbyNodes', 'whole') ?? 0 };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
