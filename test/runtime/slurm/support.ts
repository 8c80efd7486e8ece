import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { WsagClient } from '../../../src/client/wsag-client.js';
import { loadConfig, type ServerConfig } from '../../../src/engine/configuration/config.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { slurmJobs } from '../../../src/runtime/slurm/slurm-jobs.js';
import { startServer, type RunningServer } from '../../../src/server.js';
import type { GuaranteeLevel } from '../../../src/domain/terms.js';
import { withApplication } from '../../../src/xml/offer-additions.js';
import { offerFromTemplate } from '../../../src/xml/offer-from-template.js';
import { projectRoot } from '../../support/server.js';
import type { SlurmTestCluster } from '../../support/slurm.js';

/**
 * A site where nothing but the job takes time, and a checkpoint of a 0.5 GB node takes a second. The
 * thesis's count (3.16) for every job: these tests watch checkpoints being written and resumed from.
 */
export const quickSite = {
  checkpointsByNeed: false,
  nodeInitSeconds: 0,
  storageInitSecondsPerGB: 0,
  storageRollbackSecondsPerGB: 0,
  storageMountSeconds: 0,
  deinitSeconds: 0,
  slowdownFactor: 1,
  checkpointSecondsPerNodeGB: 2,
  snapshotSecondsPerGB: 0,
};

export const exampleJobDirectory = path.join(projectRoot, 'src/runtime/slurm/');

/** The server in front of the test cluster, on its own SQLite store (the audit trail included). */
export async function slurmServer(
  cluster: SlurmTestCluster,
  config: Partial<ServerConfig> = {},
): Promise<RunningServer & { dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-slurm-server-'));
  const server = await startServer(
    loadConfig(
      {},
      {
        port: 0,
        dataDir,
        templatesDir: path.join(projectRoot, 'templates'),
        logLevel: 'silent',
        executor: 'slurm',
        admins: ['anonymous'],
        slurm: { conf: cluster.slurmConf, partition: 'batch', user: 'root', executables: [exampleJobDirectory] },
        cluster: { nodeGroups: [{ count: 1, idPrefix: 'unused', memoryGB: 1, cpus: 1 }], timing: quickSite },
        ...config,
      },
    ),
    { logger: pino({ level: process.env.WSAG_TEST_LOG ?? 'silent' }) },
  );
  return { ...server, dataDir };
}

export interface JobOfferOptions {
  nodes?: number;
  runtimeSeconds: number;
  level: GuaranteeLevel;
  deadline: Date;
  /** The JSDL POSIXApplication: executable and arguments. */
  application?: { executable: string; arguments?: string[]; environment?: Record<string, string> };
}

/** The shipped deadline-job template for the test cluster's nodes (2 CPUs, 0.5 GB). */
export async function jobOffer(client: WsagClient, options: JobOfferOptions): Promise<string> {
  const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
  const deadline = options.deadline.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const offer = offerFromTemplate(template, [
    { location: 'NodeCount', value: String(options.nodes ?? 1) },
    { location: 'RuntimeEstimate', value: String(options.runtimeSeconds) },
    { location: 'GuaranteeLevel', value: options.level },
    { location: 'MaxCoveredOutages', value: '1' },
    { location: '//jsdl:IndividualCPUCount/jsdl:Exact', value: '2' },
    { location: '//jsdl:IndividualPhysicalMemory/jsdl:Exact', value: String(512 * 1024 ** 2) },
    { location: '//sla:ServiceLevel/sla:Deadline', value: deadline },
    { location: '//sla:CompletedBy', value: deadline },
  ]);
  const app = options.application;
  if (!app) return offer;
  return withApplication(offer, {
    executable: app.executable,
    arguments: app.arguments ?? [],
    environment: Object.entries(app.environment ?? {}).map(([name, value]) => ({ name, value })),
  });
}

/** Polls `read` until `ok` (every 200 ms, at most `ms`); returns the last value read. */
export async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 60_000): Promise<T> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const value = await read();
    if (ok(value)) return value;
  }
  return read();
}

/** The Slurm jobs of agreement `id`, oldest first. */
export async function jobsOf(cluster: SlurmTestCluster, id: string) {
  return (await slurmJobs(new SlurmCli({ slurmConf: cluster.slurmConf })))
    .filter((j) => j.jobId === id)
    .sort((a, b) => Number(a.id) - Number(b.id));
}

/** The example job's log of agreement `id`. */
export function exampleLog(dataDir: string, id: string): string[] {
  const file = path.join(dataDir, 'checkpoints', 'jobs', id, 'example-job.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : [];
}
