import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';
import { eventually, exampleLog, jobOffer, jobsOf, slurmServer } from './support.js';

/**
 * slurmctld stopped and started again while agreements run and are created (issue 56, fault
 * 3): the running job goes on under slurmd, the job that was to start while Slurm could not
 * be reached starts once it can, and each completes with its application run once.
 */
describe.skipIf(skipSlurm)('slurmctld stopped and restarted under wsag-server', () => {
  let cluster: SlurmTestCluster;
  beforeAll(() => {
    cluster = startSlurmCluster(4);
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
  });

  it('the running job goes on, the one due meanwhile starts when Slurm is back, each runs once and completes', async () => {
    const server = await slurmServer(cluster);
    const dataDir = server.dataDir;
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
    await server.close();
  }, 400_000);
});
