import type { GuaranteeLevel, MigrationScope } from '../domain/terms.js';
import { WorkloadError, isObject, shown, Fields } from './input-fields.js';

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
  /**
   * The runtime the job actually needs (seconds, at most the estimate); a reservation's holder releases its nodes after
   * this long.
   */
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
  /**
   * The customer's migration policy (sla:MigrationPolicy Scope): None forbids moving the job to a peer; absent, the
   * provider's policy decides.
   */
  migration?: MigrationScope;
  /** The virtual organisation the job is charged to (VO usage SLAs, `wsag sim --vo-policy`). */
  vo?: string;
  /** Set by the simulator: the refused SLA request whose job this is, submitted to the queue instead. */
  queuedFor?: string;
}

/** The id of the job a refused SLA request's user submits to the queue instead (`refused: 'queue'`). */
export const queuedId = (requestId: string): string => `${requestId}/queued`;

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

const slaLevels: readonly GuaranteeLevel[] = ['Legacy', 'Standard', 'Enhanced', 'Full'];
const jobFields = [
  'id',
  'arrival',
  'kind',
  'level',
  'nodes',
  'estimate',
  'runtime',
  'deadline',
  'earliestStart',
  'window',
  'value',
  'penalty',
  'memoryGB',
  'storageGB',
  'outages',
  'checkpointsPerHour',
  'interconnect',
  'migration',
  'vo',
] as const;
const migrationScopes: readonly MigrationScope[] = ['None', 'AdministrativeDomain', 'Grid'];

/** Validates a parsed workload document. */
export function parseWorkload(input: unknown): Workload {
  if (!isObject(input))
    throw new WorkloadError(
      `the workload must be a JSON object with "jobs", got ${Array.isArray(input) ? 'an array' : shown(input)}`,
    );
  const top = new Fields('workload', input, [
    'name',
    'description',
    'start',
    'currency',
    'cluster',
    'jobs',
    'failures',
  ]);
  const startText = top.string('start') ?? defaultStart;
  const start = Date.parse(startText);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(startText) || Number.isNaN(start)) {
    throw top.error(
      `"start" must be an ISO 8601 date-time with a time zone such as ${defaultStart}, got ${shown(startText)}`,
    );
  }
  const cluster = input.cluster;
  if (cluster !== undefined && !(typeof cluster === 'string' && cluster.trim() !== '') && !isObject(cluster)) {
    throw top.error(
      `"cluster" must be a file name (relative to the workload) or a cluster description object, got ${shown(cluster)}`,
    );
  }
  const jobsInput = top.array('jobs', true) as unknown[];
  const jobs: WorkloadJob[] = [];
  const ids = new Map<string, number>();
  jobsInput.forEach((raw, i) => {
    const job = parseJob(raw, i);
    const earlier = ids.get(job.id);
    if (earlier !== undefined)
      throw new WorkloadError(`jobs[${i}] (${job.id}): id "${job.id}" is already used by jobs[${earlier}]`);
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
  if (!(workloadKinds as readonly string[]).includes(kindText))
    throw f.error(`"kind" must be one of ${workloadKinds.join(', ')}, got ${shown(kindText)}`);
  const kind = kindText as WorkloadKind;
  const nodes = f.number('nodes', 'count', true);

  const levelText = f.string('level');
  const allowedLevels: readonly GuaranteeLevel[] =
    kind === 'background' ? ['Background'] : kind === 'best-effort' ? ['Legacy', 'Standard'] : slaLevels;
  const level = (levelText ?? (kind === 'background' ? 'Background' : kind === 'best-effort' ? 'Legacy' : undefined)) as
    | GuaranteeLevel
    | undefined;
  if (level === undefined) throw f.error(`"level" is required for a ${kind} job (one of ${allowedLevels.join(', ')})`);
  if (!allowedLevels.includes(level))
    throw f.error(
      `"level" of a ${kind} job must be ` +
        `${allowedLevels.length === 1 ? allowedLevels[0] : `one of ${allowedLevels.join(', ')}`}, got ` +
        `${shown(levelText)}`,
    );

  let estimate: number;
  let window: { start: number; end: number } | undefined;
  if (kind === 'reservation') {
    const w = f.object_('window');
    if (!w) throw f.error('"window" is required for a reservation ({ "start": s, "end": s })');
    const wf = new Fields(`${label} window`, w, ['start', 'end']);
    window = { start: wf.number('start', 'non-negative', true), end: wf.number('end', 'non-negative', true) };
    if (window.end <= window.start) throw f.error(`window ends (${window.end} s) before it starts (${window.start} s)`);
    if (window.start < arrival)
      throw f.error(`window starts (${window.start} s) before the request arrives (${arrival} s)`);
    if (f.has('estimate')) throw f.error('"estimate" does not apply to a reservation: its window is the estimate');
    for (const name of ['deadline', 'earliestStart'] as const)
      if (f.has(name)) throw f.error(`"${name}" does not apply to a reservation: it has a window`);
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
  if (migration !== undefined && kind !== 'deadline' && kind !== 'reservation')
    throw f.error(`"migration" applies to deadline jobs and reservations, not to a ${kind} job`);
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
  if (repairAt !== undefined && repairAt <= at)
    throw f.error(`repairAt (${repairAt} s) is not after the failure (${at} s)`);
  return { at, node, ...(repairAt !== undefined ? { repairAt } : {}) };
}

// ------------------------------------------------------------------ cluster
