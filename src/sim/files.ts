import { parseSitePolicy, type SitePolicy } from '../domain/vo-policy.js';
import fs from 'node:fs';
import path from 'node:path';
import type { ClusterDescription } from '../scheduler/model.js';
import { parseSimulatedPeers, type SimulatedPeersConfig } from './peers.js';
import { checkAgainstCluster, parseCluster, parseWorkload, WorkloadError, type Workload } from './workload.js';

/**
 * Reading the simulator's inputs from files: the only I/O of src/sim. A workload names
 * its cluster by a path relative to itself (or embeds it); `clusterFile` overrides that.
 * Every error names the file.
 */
export function loadInputs(workloadFile: string, clusterFile?: string): { workload: Workload; cluster: ClusterDescription; clusterSource: string } {
  const workload = withFile(workloadFile, () => parseWorkload(readJson(workloadFile)));
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
  withFile(workloadFile, () => checkAgainstCluster(workload, cluster));
  return { workload, cluster, clusterSource };
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

function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new WorkloadError(code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a file' : `cannot read it (${(error as Error).message})`);
  }
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
    if (error instanceof WorkloadError && !error.message.startsWith(`${file}: `)) throw new WorkloadError(`${file}: ${error.message}`);
    throw error;
  }
}
