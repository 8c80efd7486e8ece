import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { startServerProcess } from '../../support/server-process.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';
import { eventually, exampleJobDirectory, exampleLog, jobOffer, jobsOf, quickSite } from './support.js';

/**
 * slurmctld stopped and started again while agreements run and are created (issue 56, fault
 * 3): the running job goes on under slurmd, the job that was to start while Slurm could not
 * be reached starts once it can, and each completes with its application run once.
 */
describe.skipIf(skipSlurm)('slurmctld stopped and restarted under wsag-server', () => {
  let cluster: SlurmTestCluster;
  let dataDir: string;
  const children: ChildProcess[] = [];
  beforeAll(() => {
    cluster = startSlurmCluster(4);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-slurmctld-'));
  }, 120_000);
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    cluster?.stop();
  });

  it('the running job goes on, the one due meanwhile starts when Slurm is back, each runs once and completes', async () => {
    const clusterFile = path.join(dataDir, 'cluster.json');
    fs.writeFileSync(
      clusterFile,
      JSON.stringify({ nodeGroups: [{ count: 1, idPrefix: 'unused', memoryGB: 1, cpus: 1 }], timing: quickSite }),
    );
    const server = await startServerProcess(dataDir, {
      WSAG_EXECUTOR: 'slurm',
      WSAG_SLURM_CONF: cluster.slurmConf,
      WSAG_SLURM_PARTITION: 'batch',
      WSAG_SLURM_USER: 'root',
      WSAG_SLURM_EXECUTABLES: exampleJobDirectory,
      WSAG_CLUSTER_FILE: clusterFile,
      WSAG_CPU_TIME_SCALE: '0.34',
      WSAG_ADMINS: 'anonymous',
    });
    children.push(server.child);
    const client = new WsagClient(server.url);
    const deadline = new Date(Date.now() + 900_000);
    const running = (
      await client.createAgreement(await jobOffer(client, { runtimeSeconds: 60, level: 'Standard', deadline }))
    ).agreementId;
    await eventually(
      () => jobsOf(cluster, running),
      (jobs) => jobs.length === 1 && jobs[0]?.state === 'RUNNING',
    );

    cluster.stopController();
    // Admitted while Slurm cannot be reached: the plan is the server's; its start waits for Slurm.
    const meanwhile = (
      await client.createAgreement(await jobOffer(client, { runtimeSeconds: 60, level: 'Standard', deadline }))
    ).agreementId;
    // Planned to start (its nodes' preparation included) while Slurm is away: its start meets the outage.
    const planned = (await client.plan()).bookings.find((b) => b.id === meanwhile);
    expect(new Date(planned?.start as string).getTime()).toBeLessThan(Date.now() + 10_000);
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    cluster.startController();

    for (const id of [running, meanwhile]) {
      const state = await eventually(
        () => client.state(id),
        (s) => s.state === 'Complete',
        180_000,
      );
      expect(state.guaranteeTerms).toEqual([{ termName: 'CompletionByDeadline', state: 'Fulfilled' }]);
      expect((await jobsOf(cluster, id)).map((j) => j.state)).toEqual(['COMPLETED']);
      expect(exampleLog(dataDir, id).filter((l) => / start /.test(l))).toHaveLength(1);
    }
    server.child.kill('SIGTERM');
  }, 400_000);
});
