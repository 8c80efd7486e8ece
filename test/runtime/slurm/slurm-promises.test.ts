import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { SlurmReservations } from '../../../src/runtime/slurm/slurm-reservations.js';
import type { RunningServer } from '../../../src/server.js';
import { offerFromTemplate } from '../../../src/xml/offer-from-template.js';
import { reservationOffer } from '../../engine/run-time-support.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';
import { eventually, exampleJobDirectory, exampleLog, jobOffer, jobsOf, quickSite, slurmServer } from './support.js';

/**
 * Promises kept on the test Slurm cluster, on the real clock, one per shipped
 * template, and a reservation across `kill -9`. The timing model is scaled for the test: 5 s
 * to initialise a node, 2 s to release it, and a hand-over of 5 s, which covers the time
 * this Slurm takes from sbatch to the application running (up to about 4 s on two busy
 * cores); interactive sessions are promised to start within 10 s. Six nodes, the last two
 * kept warm (Slurm feature wsag-warm) for interactive sessions. A reservation's Slurm reservation starts with its
 * nodes' preparation before the window; the job holding them is running, by Slurm's own
 * account, when the window opens and holds them to its end; every agreement ends Complete
 * with its guarantee terms Fulfilled, no penalty and no violation in its audit trail.
 */
const timing = { ...quickSite, nodeInitSeconds: 5, handoverSeconds: 5, deinitSeconds: 2 };
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

let cluster: SlurmTestCluster;
let cli: SlurmCli;
beforeAll(() => {
  if (skipSlurm) return;
  cluster = startSlurmCluster(6, { warm: 2 });
  cli = new SlurmCli({ slurmConf: cluster.slurmConf });
}, 120_000);
afterAll(() => cluster?.stop());

/** Every guarantee term Fulfilled, no penalty in the report, no violation in the audit trail. */
async function keptPromise(client: WsagClient, id: string): Promise<{ started?: string; completed?: string }> {
  const state = await client.state(id);
  expect(state.state, id).toBe('Complete');
  expect(
    state.guaranteeTerms.every((t) => t.state === 'Fulfilled'),
    `${id}: ${JSON.stringify(state)}`,
  ).toBe(true);
  const report = await client.request<{
    totals: { penalties: unknown[] };
    happened: { started?: string; completed?: string };
  }>(`/api/agreements/${id}/report`, 'report');
  expect(report.totals.penalties, id).toEqual([]);
  const { history } = await client.request<{ history: Array<{ action: string }> }>(
    `/api/agreements/${id}`,
    'agreement',
  );
  expect(
    history.map((e) => e.action).filter((a) => a.includes('violated')),
    id,
  ).toEqual([]);
  return report.happened;
}

describe.skipIf(skipSlurm)('promises kept on Slurm (real clock)', () => {
  let server: RunningServer & { dataDir: string };
  let client: WsagClient;
  /** When the application holding the nodes began (the example job's log), to the millisecond. */
  const applicationStart = (id: string) =>
    Date.parse(
      exampleLog(server.dataDir, id)
        .find((l) => / start /.test(l))
        ?.split(' ')[0] ?? '',
    );
  beforeAll(async () => {
    server = await slurmServer(cluster, {
      cluster: { nodeGroups: [{ count: 1, idPrefix: 'unused', memoryGB: 1, cpus: 1 }], timing },
      interactiveStartSeconds: 10,
    });
    client = new WsagClient(server.url);
  }, 60_000);
  afterAll(async () => server?.close());

  it("a reservation: Slurm reserves its nodes from the window's start minus their preparation; they are ready when it opens and held to its end", {
    timeout: 180_000,
  }, async () => {
    const windowStart = Math.ceil((Date.now() + 25_000) / 1000) * 1000;
    const windowEnd = windowStart + 30_000;
    const { agreementId } = await client.createAgreement(
      await reservationOffer(client, 2, new Date(windowStart), new Date(windowEnd)),
    );

    const name = `wsag_${agreementId}_0`;
    const reservations = new SlurmReservations(cli, 'root');
    const owned = await eventually(
      () => reservations.owned(),
      (list) => list.some((r) => r.name === name),
    );
    const reservation = owned.find((r) => r.name === name);
    // 5 s of initialisation and 5 s of hand-over before the window, 2 s of release after it.
    expect([reservation?.start.getTime(), reservation?.end.getTime()]).toEqual([
      windowStart - 10_000,
      windowEnd + 2_000,
    ]);
    // Ordinary work never lands on the warm nodes.
    expect(reservation?.nodes.some((n) => n === 'n5' || n === 'n6')).toBe(false);

    await eventually(
      () => client.state(agreementId),
      (s) => s.state === 'Complete',
      120_000,
    );
    const happened = await keptPromise(client, agreementId);
    expect((await client.state(agreementId)).guaranteeTerms).toEqual([
      { termName: 'NodesThroughWindow', state: 'Fulfilled' },
    ]);
    expect(Date.parse(happened.started as string)).toBeLessThanOrEqual(windowStart);
    expect(Date.parse(happened.completed as string)).toBeGreaterThanOrEqual(windowEnd);
    // The job holding the nodes ran on the reservation's nodes, and ended by itself.
    const [job] = await jobsOf(cluster, agreementId);
    expect([...(job?.nodes ?? [])].sort()).toEqual([...(reservation?.nodes ?? [])].sort());
    expect(job?.state).toBe('COMPLETED');
    // Slurm had started it, and it was running on the nodes, by the time the window opened.
    expect(applicationStart(agreementId)).toBeLessThanOrEqual(windowStart);
  });

  it('an interactive session on the warm nodes, a deadline job, best-effort and background work all end as promised', {
    timeout: 180_000,
  }, async () => {
    const template = async (id: string) => (await client.templates()).find((t) => t.includes(id)) as string;
    const acceptedAt = Date.now();
    const session = (
      await client.createAgreement(
        offerFromTemplate(await template('interactive-job-v1'), [
          { location: 'NodeCount', value: '2' },
          { location: 'RuntimeEstimate', value: '60' },
        ]),
      )
    ).agreementId;
    const deadline = (
      await client.createAgreement(
        await jobOffer(client, { runtimeSeconds: 60, level: 'Standard', deadline: new Date(Date.now() + 300_000) }),
      )
    ).agreementId;
    const bestEffort = (
      await client.createAgreement(
        offerFromTemplate(await template('best-effort-job-v1'), [
          { location: 'NodeCount', value: '1' },
          { location: 'RuntimeEstimate', value: '60' },
        ]),
      )
    ).agreementId;
    const background = (
      await client.createAgreement(
        offerFromTemplate(await template('background-job-v1'), [{ location: 'RuntimeEstimate', value: '60' }]),
      )
    ).agreementId;
    const all = [session, deadline, bestEffort, background];

    await eventually(
      () => Promise.all(all.map((id) => client.state(id))),
      (states) => states.every((s) => s.state === 'Complete'),
      150_000,
    );
    for (const id of all) await keptPromise(client, id);
    expect((await client.state(session)).guaranteeTerms).toEqual([
      { termName: 'NodesThroughSession', state: 'Fulfilled' },
    ]);
    expect((await client.state(deadline)).guaranteeTerms).toEqual([
      { termName: 'CompletionByDeadline', state: 'Fulfilled' },
    ]);

    // The session ran on the warm nodes, in Slurm, from its promised start (within the promised 10 s of acceptance) to its promised end.
    const [job] = await jobsOf(cluster, session);
    expect([...(job?.nodes ?? [])].sort()).toEqual(['n5', 'n6']);
    const { allocation, history } = await client.request<{
      allocation: { promised: { start: string; end: string } };
      history: Array<{ action: string }>;
    }>(`/api/agreements/${session}`, 'agreement');
    expect(Date.parse(allocation.promised.start) - acceptedAt).toBeLessThanOrEqual(10_000);
    expect(applicationStart(session)).toBeLessThanOrEqual(Date.parse(allocation.promised.start));
    const done = Date.parse(
      exampleLog(server.dataDir, session)
        .find((l) => / done$/.test(l))
        ?.split(' ')[0] ?? '',
    );
    expect(done).toBeGreaterThanOrEqual(Date.parse(allocation.promised.end));
    // ... and gave the nodes back within the booking: the release after the promise.
    expect(history.map((e) => e.action)).not.toContain('execution-overrun');
    // Each batch job ran once in Slurm.
    for (const id of [deadline, bestEffort, background])
      expect(
        (await jobsOf(cluster, id)).map((j) => j.state),
        id,
      ).toEqual(['COMPLETED']);
  });
});

describe.skipIf(skipSlurm)('a reservation on Slurm across kill -9 (real clock)', () => {
  let running: ServerProcess | undefined;
  afterAll(() => running?.child.kill('SIGKILL'));

  it('killed and restarted in the middle of its window: the Slurm job holding the nodes is adopted, not run again; Complete, no penalty', {
    timeout: 180_000,
  }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-slurm-promises-kill-'));
    const clusterFile = path.join(dataDir, 'cluster.json');
    fs.writeFileSync(
      clusterFile,
      JSON.stringify({ nodeGroups: [{ count: 1, idPrefix: 'unused', memoryGB: 1, cpus: 1 }], timing }),
    );
    const env = {
      WSAG_EXECUTOR: 'slurm',
      WSAG_SLURM_CONF: cluster.slurmConf,
      WSAG_SLURM_PARTITION: 'batch',
      WSAG_SLURM_USER: 'root',
      WSAG_SLURM_EXECUTABLES: exampleJobDirectory,
      WSAG_CLUSTER_FILE: clusterFile,
      WSAG_ADMINS: 'anonymous',
    };
    running = await startServerProcess(dataDir, env);
    let client = new WsagClient(running.url);
    const windowStart = Math.ceil((Date.now() + 25_000) / 1000) * 1000;
    const windowEnd = windowStart + 40_000;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate((await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string, [
        { location: 'NodeCount', value: '2' },
        { location: '//arp:StartTime', value: iso(windowStart) },
        { location: '//arp:EndTime', value: iso(windowEnd) },
      ]),
    );

    // In the middle of the window, the server dies without warning and comes back on the same data.
    await new Promise((resolve) => setTimeout(resolve, windowStart + 10_000 - Date.now()));
    expect((await client.state(agreementId)).serviceTerms.every((t) => t.state === 'Ready')).toBe(true);
    const before = await jobsOf(cluster, agreementId);
    expect(before.map((j) => j.state)).toEqual(['RUNNING']);
    running.child.kill('SIGKILL');
    await new Promise((resolve) => running?.child.once('exit', resolve));
    running = await startServerProcess(dataDir, env);
    client = new WsagClient(running.url);

    await eventually(
      () => client.state(agreementId),
      (s) => s.state === 'Complete',
      windowEnd + 60_000 - Date.now(),
    );
    const happened = await keptPromise(client, agreementId);
    expect((await client.state(agreementId)).guaranteeTerms).toEqual([
      { termName: 'NodesThroughWindow', state: 'Fulfilled' },
    ]);
    expect(Date.parse(happened.started as string)).toBeLessThanOrEqual(windowStart);
    expect(Date.parse(happened.completed as string)).toBeGreaterThanOrEqual(windowEnd);
    // One Slurm job from before the kill, adopted and left to hold the nodes to the window's end.
    const after = await jobsOf(cluster, agreementId);
    expect(after.map((j) => [j.id, j.state])).toEqual([[before[0]?.id, 'COMPLETED']]);
    const log = exampleLog(dataDir, agreementId);
    expect(log.filter((l) => / start /.test(l))).toHaveLength(1);
    expect(Date.parse(log.find((l) => / start /.test(l))?.split(' ')[0] ?? '')).toBeLessThanOrEqual(windowStart);
    expect(Date.parse(log.find((l) => / done$/.test(l))?.split(' ')[0] ?? '')).toBeGreaterThanOrEqual(windowEnd);
  });
});
