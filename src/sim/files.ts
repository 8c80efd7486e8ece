import { parseSitePolicy, type SitePolicy } from '../domain/vo-policy.js';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { ClusterDescription } from '../scheduler/model.js';
import { parseSimulatedPeers, type SimulatedPeersConfig } from './peers.js';
import { defaultSwfRules, generateFailures, readFailureCsv, readSwf, type SwfRules } from './swf.js';
import { checkAgainstCluster, parseCluster } from './cluster-input.js';
import { WorkloadError } from './input-fields.js';
import { parseWorkload, type Workload } from './workload.js';

/**
 * Reading the simulator's inputs from files: the only I/O of src/sim. A workload names
 * its cluster by a path relative to itself (or embeds it); `clusterFile` overrides that.
 * Every error names the file.
 */
export interface InputOptions {
  /** How an SWF trace's jobs become requests (a JSON file of SwfRules fields); default defaultSwfRules. */
  swfRulesFile?: string;
  /** Node failures from a CSV file (node,down,up), replacing the workload's. */
  failuresFile?: string;
  /** Node failures drawn at this rate per node and day (seeded), replacing the workload's. */
  failureRate?: number;
  /** The Weibull shape of the gaps between a node's drawn failures; 1 (the default) is the exponential. */
  failureShape?: number;
}

export function loadInputs(
  workloadFile: string,
  clusterFile?: string,
  options: InputOptions = {},
): { workload: Workload; cluster: ClusterDescription; clusterSource: string } {
  const workload = isSwf(workloadFile)
    ? withFile(workloadFile, () => fromSwf(workloadFile, clusterFile, options))
    : withFile(workloadFile, () => parseWorkload(readJson(workloadFile)));
  if (options.failuresFile !== undefined) {
    const file = options.failuresFile;
    workload.failures = withFile(file, () => readFailureCsv(readText(file)));
  }
  let cluster: ClusterDescription;
  let clusterSource: string;
  if (clusterFile !== undefined) {
    cluster = withFile(clusterFile, () => parseCluster(readJson(clusterFile)));
    clusterSource = clusterFile;
  } else if (typeof workload.cluster === 'string') {
    const file = path.resolve(path.dirname(workloadFile), workload.cluster);
    cluster = withFile(file, () => parseCluster(readJson(file)));
    clusterSource = path.relative(process.cwd(), file) || file;
  } else if (workload.cluster !== undefined) {
    cluster = withFile(workloadFile, () => parseCluster(workload.cluster));
    clusterSource = `${workloadFile} (inline)`;
  } else {
    throw new WorkloadError(`${workloadFile}: no cluster: give --cluster FILE or a "cluster" in the workload`);
  }
  // A trace from a bigger machine than the cluster simulated: its jobs that cannot fit are left out, not an error.
  if (isSwf(workloadFile)) workload.jobs = workload.jobs.filter((j) => j.nodes <= cluster.nodes.length);
  if (options.failureRate !== undefined)
    workload.failures = drawnFailures(workload, cluster, options.failureRate, options.failureShape);
  withFile(workloadFile, () => checkAgainstCluster(workload, cluster));
  return { workload, cluster, clusterSource };
}

/**
 * Node failures drawn over the workload's span at `rate` per node and day (Weibull gaps of
 * `shape`); `draw` numbers independent draws, 0 being the one `--failure-rate` alone uses.
 */
export function drawnFailures(
  workload: Workload,
  cluster: ClusterDescription,
  rate: number,
  shape?: number,
  draw = 0,
): Workload['failures'] {
  const span = Math.max(0, ...workload.jobs.map((j) => j.window?.end ?? j.deadline ?? j.arrival + j.estimate));
  return generateFailures(
    cluster.nodes.map((n) => n.id),
    rate,
    span,
    20261125 + draw,
    undefined,
    shape,
  );
}

/** An SWF trace as a workload: its cluster from --cluster, else MaxNodes of its header (the site's default timing). */
function fromSwf(file: string, clusterFile: string | undefined, options: InputOptions): Workload {
  const rules =
    options.swfRulesFile === undefined
      ? defaultSwfRules
      : withFile(options.swfRulesFile, () => parseSwfRules(readJson(options.swfRulesFile as string)));
  const trace = readSwf(readText(file), rules, path.basename(file).replace(/\.gz$/i, ''));
  if (clusterFile === undefined && trace.maxNodes === undefined)
    throw new WorkloadError("the trace's header names no MaxNodes or MaxProcs: give --cluster FILE");
  const cluster =
    clusterFile === undefined
      ? { nodes: [{ count: trace.maxNodes, prefix: 'n', memoryGB: 16, cpus: rules.processorsPerNode }] }
      : undefined;
  return parseWorkload({ ...trace.workload, ...(cluster ? { cluster } : {}) });
}

function parseSwfRules(json: unknown): SwfRules {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new WorkloadError('SWF rules must be a JSON object');
  const rules = { ...defaultSwfRules, ...(json as Partial<SwfRules>) };
  for (const key of Object.keys(json))
    if (!(key in defaultSwfRules))
      throw new WorkloadError(`unknown SWF rule "${key}" (known: ${Object.keys(defaultSwfRules).join(', ')})`);
  const share = (v: unknown) => typeof v === 'number' && v >= 0 && v <= 1;
  if (!share(rules.deadlineShare) || !share(rules.reservationShare) || rules.deadlineShare + rules.reservationShare > 1)
    throw new WorkloadError('deadlineShare and reservationShare are shares from 0 to 1 that add up to at most 1');
  if (!(rules.processorsPerNode >= 1 && Number.isInteger(rules.processorsPerNode)))
    throw new WorkloadError('processorsPerNode must be a whole number, 1 or more');
  if (!(rules.deadlineSlack >= 1))
    throw new WorkloadError('deadlineSlack must be 1 or more (the deadline is arrival + slack x estimate)');
  checkLevelShares(
    'levels',
    rules.levels,
    ['Legacy', 'Standard', 'Enhanced', 'Full'],
    '{ "Standard": 0.6, "Enhanced": 0.4 }',
  );
  checkLevelShares(
    'bestEffortLevels',
    rules.bestEffortLevels,
    ['Legacy', 'Standard'],
    '{ "Legacy": 0.7, "Standard": 0.3 }',
  );
  return rules;
}

function checkLevelShares(name: string, shares: unknown, known: readonly string[], example: string): void {
  const entries = typeof shares === 'object' && shares !== null ? Object.entries(shares) : [];
  const share = (v: unknown) => typeof v === 'number' && v >= 0 && v <= 1;
  if (
    entries.length === 0 ||
    entries.some(([level, v]) => !known.includes(level) || !share(v)) ||
    Math.abs(entries.reduce((sum, [, v]) => sum + (v as number), 0) - 1) > 1e-9
  )
    throw new WorkloadError(`${name} are shares of the levels ${known.join(', ')} adding up to 1, such as ${example}`);
}

/** A VO usage policy (src/domain/vo-policy.ts); errors name the file. */
export function loadVoPolicy(file: string): SitePolicy {
  return withFile(file, () => {
    const json = readJson(file);
    try {
      return parseSitePolicy(json, file);
    } catch (error) {
      throw new WorkloadError((error as Error).message);
    }
  });
}

/** A peers file with simulation terms (peers.ts); errors name the file. */
export function loadPeers(file: string): SimulatedPeersConfig {
  return withFile(file, () => parseSimulatedPeers(readJson(file), file));
}

/** A Standard Workload Format trace, as the Parallel Workloads Archive publishes it (.swf.gz) or unpacked (.swf). */
function isSwf(file: string): boolean {
  return /\.swf(\.gz)?$/i.test(file);
}

/** The file's text; a .gz file is unpacked first. */
function readText(file: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new WorkloadError(
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : `cannot read it (${(error as Error).message})`,
    );
  }
  if (!/\.gz$/i.test(file)) return bytes.toString('utf8');
  try {
    return zlib.gunzipSync(bytes).toString('utf8');
  } catch (error) {
    throw new WorkloadError(`not a gzip file, as its name says (${(error as Error).message})`);
  }
}

function readJson(file: string): unknown {
  const text = readText(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new WorkloadError(`not valid JSON: ${(error as Error).message}`);
  }
}

function withFile<T>(file: string, f: () => T): T {
  try {
    return f();
  } catch (error) {
    if (error instanceof WorkloadError && !error.message.startsWith(`${file}: `))
      throw new WorkloadError(`${file}: ${error.message}`);
    throw error;
  }
}
