import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { SlurmReservations } from '../../../src/runtime/slurm/slurm-reservations.js';
import type { RunningServer } from '../../../src/server.js';
import { reservationOffer } from '../../engine/run-time-support.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';
import { eventually, jobsOf, quickSite, slurmServer } from './support.js';

/**
 * A reservation's promise kept on the test Slurm cluster, on the real clock: its Slurm
 * reservation starts with the nodes' preparation before the window (the timing model scaled
 * for the test: 5 s to initialise a node, 2 s to release it, and a hand-over of 3 s, which
 * covers the time Slurm takes to start a job it is given), the job holding the nodes is
 * running in it, by Slurm's own account, when the window opens and holds them to its end,
 * and the agreement ends Complete with NodesThroughWindow Fulfilled and no penalty.
 */
const timing = { ...quickSite, nodeInitSeconds: 5, handoverSeconds: 3, deinitSeconds: 2 };

describe.skipIf(skipSlurm)('a reservation kept on Slurm (real clock)', () => {
  let cluster: SlurmTestCluster;
  let server: RunningServer & { dataDir: string };
  beforeAll(async () => {
    cluster = startSlurmCluster(4);
    server = await slurmServer(cluster, { cluster: { nodeGroups: [{ count: 1, idPrefix: 'unused', memoryGB: 1, cpus: 1 }], timing } });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    cluster?.stop();
  });

  it('Slurm reserves the nodes from the window\'s start minus their preparation; they are ready when it opens and held to its end', { timeout: 180_000 }, async () => {
    const client = new WsagClient(server.url);
    const windowStart = Math.ceil((Date.now() + 20_000) / 1000) * 1000;
    const windowEnd = windowStart + 30_000;
    const { agreementId } = await client.createAgreement(await reservationOffer(client, 2, new Date(windowStart), new Date(windowEnd)));

    const name = `wsag_${agreementId}_0`;
    const reservations = new SlurmReservations(new SlurmCli({ slurmConf: cluster.slurmConf }), 'root');
    const owned = await eventually(() => reservations.owned(), (list) => list.some((r) => r.name === name));
    const reservation = owned.find((r) => r.name === name);
    // 5 s of initialisation and 3 s of hand-over before the window, 2 s of release after it.
    expect([reservation?.start.getTime(), reservation?.end.getTime()]).toEqual([windowStart - 8_000, windowEnd + 2_000]);

    const complete = await eventually(() => client.state(agreementId), (s) => s.state === 'Complete', 120_000);
    expect(complete.guaranteeTerms).toEqual([{ termName: 'NodesThroughWindow', state: 'Fulfilled' }]);
    const report = await client.request<{ totals: { penalties: unknown[] }; happened: { started: string; completed: string } }>(`/api/agreements/${agreementId}/report`, 'report');
    expect(report.totals.penalties).toEqual([]);
    expect(Date.parse(report.happened.started)).toBeLessThanOrEqual(windowStart);
    expect(Date.parse(report.happened.completed)).toBeGreaterThanOrEqual(windowEnd);
    // The job holding the nodes ran on the reservation's nodes, and ended by itself.
    const [job] = await jobsOf(cluster, agreementId);
    expect([...(job?.nodes ?? [])].sort()).toEqual([...(reservation?.nodes ?? [])].sort());
    expect(job?.state).toBe('COMPLETED');
    // Slurm itself started it by the time the window opened (StartTime in whole seconds, UTC: SlurmCli runs with TZ=UTC).
    const started = /StartTime=(\S+)/.exec(await new SlurmCli({ slurmConf: cluster.slurmConf }).run('scontrol', ['show', 'job', job?.id as string, '--oneliner']))?.[1];
    expect(Date.parse(`${started}Z`)).toBeLessThanOrEqual(windowStart);
  });
});
