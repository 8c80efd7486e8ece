import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { slurmJobs } from '../../../src/runtime/slurm/slurm-jobs.js';
import { exampleJob } from '../../../src/runtime/slurm/slurm-resource-manager.js';
import { SlurmReservations, slurmTime } from '../../../src/runtime/slurm/slurm-reservations.js';
import { startServerProcess } from '../../support/server-process.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';
import { eventually, exampleJobDirectory, exampleLog, jobOffer, jobsOf, quickSite } from './support.js';

/**
 * `kill -9` of wsag-server while its jobs run in Slurm, then a restart on the same data
 * directory: the job still running is adopted (not submitted again), the job that ended
 * while the server was down is seen to have ended, and a job and a reservation with the
 * server's prefix that no agreement owns are removed. Nothing runs twice.
 */
describe.skipIf(skipSlurm)('wsag-server killed and restarted in front of Slurm', () => {
  let cluster: SlurmTestCluster;
  let dataDir: string;
  let env: Record<string, string>;
  const children: ChildProcess[] = [];
  const slurm = (...args: string[]) =>
    execFileSync(args[0] as string, args.slice(1), {
      env: { ...process.env, SLURM_CONF: cluster.slurmConf, TZ: 'UTC' },
    })
      .toString()
      .trim();
  beforeAll(() => {
    cluster = startSlurmCluster(4);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-slurm-restart-'));
    const clusterFile = path.join(dataDir, 'cluster.json');
    fs.writeFileSync(
      clusterFile,
      JSON.stringify({ nodeGroups: [{ count: 1, idPrefix: 'unused', memoryGB: 1, cpus: 1 }], timing: quickSite }),
    );
    env = {
      WSAG_EXECUTOR: 'slurm',
      WSAG_SLURM_CONF: cluster.slurmConf,
      WSAG_SLURM_PARTITION: 'batch',
      WSAG_SLURM_USER: 'root',
      WSAG_SLURM_EXECUTABLES: exampleJobDirectory,
      WSAG_CLUSTER_FILE: clusterFile,
      WSAG_CPU_TIME_SCALE: '0.34',
      WSAG_ADMINS: 'anonymous',
    };
  }, 120_000);
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    cluster?.stop();
  });

  it('adopts the running job, sees the one that ended, removes what no agreement owns; no job runs twice', async () => {
    const first = await startServerProcess(dataDir, env);
    children.push(first.child);
    let client = new WsagClient(first.url);
    const deadline = new Date(Date.now() + 600_000);
    const running = (
      await client.createAgreement(await jobOffer(client, { runtimeSeconds: 60, level: 'Standard', deadline }))
    ).agreementId;
    const ending = (
      await client.createAgreement(
        await jobOffer(client, {
          runtimeSeconds: 60,
          level: 'Legacy',
          deadline,
          application: { executable: exampleJob, arguments: ['2'] },
        }),
      )
    ).agreementId;
    await eventually(
      async () => [...(await jobsOf(cluster, running)), ...(await jobsOf(cluster, ending))],
      (jobs) => jobs.length === 2 && jobs.every((j) => j.state === 'RUNNING'),
    );
    const runningJob = (await jobsOf(cluster, running))[0]?.id;
    // What an earlier server might have left and no agreement owns.
    const ghostJob = slurm(
      'sbatch',
      '--parsable',
      '--job-name=wsag_ghost',
      '--comment=ghost',
      '--time=10',
      '--output=/dev/null',
      '--wrap=sleep 300',
    );
    const tomorrow = new Date(Date.now() + 86_400_000);
    slurm(
      'scontrol',
      'create',
      'reservation',
      'ReservationName=wsag_ghost_0',
      `StartTime=${slurmTime(tomorrow)}`,
      'Duration=60',
      'Nodes=n4',
      'Users=root',
      'Flags=IGNORE_JOBS',
    );

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    // The short job ends while no server is there.
    await eventually(
      () => jobsOf(cluster, ending),
      (jobs) => jobs[0]?.state === 'COMPLETED',
    );

    const second = await startServerProcess(dataDir, env);
    children.push(second.child);
    client = new WsagClient(second.url);
    for (const id of [running, ending]) {
      const state = await eventually(
        () => client.state(id),
        (s) => s.state === 'Complete',
        90_000,
      );
      const report = await client
        .request<{ guarantees: unknown; happened: unknown }>(`/api/agreements/${id}/report`, 'report')
        .catch(() => undefined);
      expect(state.guaranteeTerms, JSON.stringify(report)).toEqual([
        { termName: 'CompletionByDeadline', state: 'Fulfilled' },
      ]);
      // One Slurm job each, and the application started once.
      expect((await jobsOf(cluster, id)).map((j) => j.state)).toEqual(['COMPLETED']);
      expect(exampleLog(dataDir, id).filter((l) => / start /.test(l))).toHaveLength(1);
    }
    expect((await jobsOf(cluster, running))[0]?.id).toBe(runningJob);
    const ghost = (await slurmJobs(new SlurmCli({ slurmConf: cluster.slurmConf }))).find((j) => j.id === ghostJob);
    expect(ghost?.state).toBe('CANCELLED');
    const owned = await new SlurmReservations(new SlurmCli({ slurmConf: cluster.slurmConf }), 'root').owned();
    expect(owned.map((r) => r.name)).not.toContain('wsag_ghost_0');
    second.child.kill('SIGTERM');
  }, 180_000);
});
