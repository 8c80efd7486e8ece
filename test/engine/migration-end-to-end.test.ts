import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MigrationReport } from '../../src/engine/migration/migration-controller.js';
import { defaultMigrationPolicy, type PeersConfig } from '../../src/engine/migration/peers.js';
import type { StoredReport } from '../../src/engine/execution/ports.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import {
  at,
  deadlineOffer,
  getJson,
  planOf,
  postJson,
  secondsOf,
  simulatedServer,
  type SimulatedServer,
} from './run-time-support.js';

/**
 * Two servers on loopback ports, each on its own simulated clock (kept
 * together by the test), with the simulated resource manager. Site A has 8 nodes: job J
 * (4 nodes, an hour, due at 180 min) and job K (4 nodes, 5 h, due at 360 min), both
 * Standard (on the paper site K needs 21000 s of its 21600). At 30 min a node of J fails; no node is free, so J cannot finish in time and is
 * problematic. The Migration Controller asks site B (16 free nodes) for an offer, moves J
 * there if the offer costs less than the penalty J would pay, sends J's last checkpoint, and
 * J resumes at B from it and completes. A's agreement records where J went and, once B's
 * agreement is over, completes with B's judgement.
 */
let servers: SimulatedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

const site = { domain: 'pc2', operatingSystem: 'LINUX', architecture: 'x86_64', checkpointSystem: 'BLCR 0.8.5' };

async function twoSites(): Promise<{ a: SimulatedServer; b: SimulatedServer }> {
  const b = await simulatedServer({ nodes: 16, config: { providerName: 'site-b' } });
  servers.push(b);
  const peers: PeersConfig = {
    local: site,
    policy: defaultMigrationPolicy,
    peers: [
      {
        name: 'cluster-b',
        factoryUrl: b.url,
        kind: 'wsag-server',
        bandwidthMBps: 1000,
        domain: 'pc2',
        profile: {
          operatingSystems: ['LINUX'],
          architectures: ['x86_64'],
          checkpointSystems: ['BLCR 0.8.5'],
          libraries: [],
        },
      },
    ],
  };
  const a = await simulatedServer({ nodes: 8, sqlite: true, config: { providerName: 'site-a', peers } });
  servers.push(a);
  return { a, b };
}

/** J and K fill site A; at 30 min a working node of J fails (both sites' clocks stand at 30 min). */
async function failureAtA(
  a: SimulatedServer,
  b: SimulatedServer,
  j: { penalty?: number; migration?: 'None' | 'AdministrativeDomain' },
) {
  const jId = (
    await a.client.createAgreement(
      await deadlineOffer(a.client, { level: 'Standard', deadline: at(180 * 60), name: 'J', ...j }),
    )
  ).agreementId;
  // K may move only if J may: otherwise moving K to make room (step 7) would solve J's problem.
  const kId = (
    await a.client.createAgreement(
      await deadlineOffer(a.client, {
        level: 'Standard',
        deadline: at(360 * 60),
        runtimeSeconds: 5 * 3600,
        name: 'K',
        ...(j.migration ? { migration: j.migration } : {}),
      }),
    )
  ).agreementId;
  const node = (await planOf(a)).bookings.find((x) => x.id === jId)?.nodeIds[0] as string;
  await Promise.all([a.advanceTo(30 * 60), b.advanceTo(30 * 60)]);
  const { status, body } = await postJson<{ problematic: Array<{ id: string }>; migration: MigrationReport }>(
    `${a.url}/api/nodes/${node}/fail`,
  );
  expect(status).toBe(200);
  await a.execution.idle();
  await b.execution.idle();
  return { jId, kId, node, answer: body };
}

/** The agreement's audit trail (site A keeps its agreements in SQLite), read beside the running server. */
async function auditOf(server: SimulatedServer, id: string) {
  const store = SqliteStore.openReadOnly(path.join(server.dataDir, 'wsag.db'));
  try {
    return await store.audit.entries({ subject: { kind: 'agreement', id } });
  } finally {
    await store.close();
  }
}

describe('migration between two servers', () => {
  it('moves the job that cannot finish in time: it resumes at the peer from its checkpoint and completes; both agreements show it', async () => {
    const { a, b } = await twoSites();
    // What the peer's job starts from, read as it starts: the received file goes once its agreement ends.
    const startedFrom = new Map<string, string>();
    const start = b.rm.start.bind(b.rm);
    b.rm.start = async (launch) => {
      if (launch.fromCheckpoint) startedFrom.set(launch.fromCheckpoint, fs.readFileSync(launch.fromCheckpoint, 'utf8'));
      return start(launch);
    };
    const { jId, answer } = await failureAtA(a, b, {});
    expect(answer.problematic.map((p) => p.id)).toEqual([jId]);
    const moved = answer.migration.jobs.find((x) => x.agreementId === jId);
    expect(moved).toMatchObject({ migrated: true, peer: 'cluster-b', unsolved: false });
    expect(answer.migration.violations).toEqual([]);
    expect((moved?.price?.amount ?? Infinity) < (moved?.penalty?.amount ?? 0)).toBe(true);
    const remoteId = moved?.remoteAgreementId as string;

    // Here: the agreement records where the job went; the plan holds it no more; the job's checkpoint went with it.
    const local = (await a.client.agreements()).find((x) => x.id === jId) as {
      migratedTo?: { peer: string; remoteAgreementId: string };
    };
    expect(local.migratedTo).toMatchObject({ peer: 'cluster-b', remoteAgreementId: remoteId });
    expect((await planOf(a)).bookings.map((x) => x.id)).not.toContain(jId);

    // There: an agreement named after the job, holding the checkpoint, resumed from it, completed.
    expect((await b.client.agreements()).find((x) => x.id === remoteId)).toMatchObject({
      name: `migrated: agreement ${jId} from site-a`,
      state: 'Observed',
    });
    await Promise.all([a.runUntilIdle(), b.runUntilIdle()]);
    const localReport = (await getJson<StoredReport['report']>(`${a.url}/api/agreements/${jId}/report`)).body;
    const sent = localReport.happened.checkpoints.list.at(-1);
    expect([secondsOf(sent?.at), sent?.interval]).toEqual([1710, 2]); // the last written before the failure
    const started = b.rm.callsOf('start', remoteId);
    expect(started).toHaveLength(1);
    const received = started[0]?.fromCheckpoint as string;
    expect(JSON.parse(startedFrom.get(received) as string)).toEqual({
      format: 'wsag-checkpoint-reference/1',
      reference: sent?.reference,
    });
    expect((await b.client.state(remoteId)).state).toBe('Complete');
    expect(fs.existsSync(received)).toBe(false);
    const remoteReport = (await getJson<StoredReport['report']>(`${b.url}/api/agreements/${remoteId}/report`)).body;
    expect(remoteReport.happened.outcome).toBe('completed');
    expect(remoteReport.happened.restarts).toEqual([expect.objectContaining({ cause: 'planned', fromInterval: 0 })]);

    // The local report says what happened here and where the job went; the local agreement follows the peer's.
    expect(localReport.happened.outages).toHaveLength(1);
    expect(localReport.migratedTo).toMatchObject({ peer: 'cluster-b', remoteAgreementId: remoteId });
    expect(localReport.notes?.[0]).toContain('its guarantee terms are judged there');
    expect((await a.client.state(jId)).state).toBe('Observed');
    expect(await a.migrated?.check()).toEqual([jId]);
    expect(await a.client.state(jId)).toEqual({
      state: 'Complete',
      serviceTerms: [{ termName: 'Job', state: 'Completed' }],
      guaranteeTerms: (await b.client.state(remoteId)).guaranteeTerms,
    });
    const trail = await auditOf(a, jId);
    const actions = trail.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['execution-interrupted', 'node-failed', 'migrated', 'completed']));
    expect(actions.indexOf('migrated')).toBeGreaterThan(actions.indexOf('node-failed'));
    expect(trail.find((e) => e.action === 'migrated')?.details).toMatchObject({
      peer: 'cluster-b',
      remoteAgreementId: remoteId,
    });
  });

  it('keeps a job whose SLA forbids migration: no peer is asked, and its violation is reported', async () => {
    const { a, b } = await twoSites();
    const before = (await b.client.negotiations()).length;
    const { jId, answer } = await failureAtA(a, b, { migration: 'None' });
    expect(answer.migration.jobs.find((x) => x.agreementId === jId)).toMatchObject({
      migrated: false,
      reason: 'customer-policy',
      unsolved: true,
    });
    expect(answer.migration.violations.map((v) => v.agreementId)).toEqual([jId]);
    expect(answer.migration.violations[0]?.reason).toContain('the SLA forbids migration');
    expect((await b.client.negotiations()).length).toBe(before);
    expect((await auditOf(a, jId)).find((e) => e.action === 'not-migrated')?.details).toMatchObject({
      reason: 'customer-policy',
      unsolved: true,
    });
    // The job stays, and its promise is broken: judged once the scheduler gives it up (the lateness is then final).
    await a.advanceTo(180 * 60 + 1);
    expect((await a.client.state(jId)).guaranteeTerms).toEqual([
      { termName: 'CompletionByDeadline', state: 'NotDetermined' },
    ]);
    await a.advanceTo(200 * 60);
    await a.execution.advance(a.clock.now());
    await a.runUntilIdle();
    expect((await a.client.state(jId)).guaranteeTerms).toEqual([
      { termName: 'CompletionByDeadline', state: 'Violated' },
    ]);
    expect((await a.client.state(jId)).state).toBe('Complete');
    const report = (await getJson<StoredReport['report']>(`${a.url}/api/agreements/${jId}/report`)).body;
    expect(report.guarantees[0]?.state).toBe('Violated');
    expect(report.migratedTo).toBeUndefined();
  });

  it('does not use a peer whose offer costs more than the penalty: the offer is declined', async () => {
    const { a, b } = await twoSites();
    const { jId, answer } = await failureAtA(a, b, { penalty: 0.01 });
    const job = answer.migration.jobs.find((x) => x.agreementId === jId);
    expect(job).toMatchObject({ migrated: false, reason: 'dearer-than-penalty', unsolved: true });
    expect(job?.offers.map((o) => o.peer)).toEqual(['cluster-b']);
    expect((await b.client.negotiations()).every((n) => n.state === 'Terminated')).toBe(true);
    expect((await b.client.agreements()).length).toBe(0);
    expect((await a.client.agreements()).find((x) => x.id === jId)).not.toHaveProperty('migratedTo');
  });
});
