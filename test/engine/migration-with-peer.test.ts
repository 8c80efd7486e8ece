import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagPeerProviders } from '../../src/client/peer-providers.js';
import { WsagClient } from '../../src/client/wsag-client.js';
import type { Agreement, MigrationRecord } from '../../src/domain/agreement.js';
import type { GuaranteeTerm, ServiceRequest } from '../../src/domain/terms.js';
import { MigrationController } from '../../src/engine/migration/migration-controller.js';
import { collectMigrationJobs } from '../../src/engine/migration/migration-jobs.js';
import { planWhatIf } from '../../src/engine/migration/migration-schedule.js';
import { defaultMigrationPolicy, type Peer, type PeersConfig } from '../../src/engine/migration/peers.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import { checkpointUploadRouter, fileCheckpointStore } from '../../src/web/checkpoint-upload.js';
import { cluster } from '../scheduler/support.js';

/** The worked figures below take the thesis's checkpoint count (3.16) for every job. */
const thesisCount = { checkpointsByNeed: false };
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The pieces together: a local plan of 8 nodes where a node failure leaves job A unable to
 * finish by its deadline (B holds the other nodes, without slack), the Migration Controller
 * with the real peer providers, and a second wsag-server as the peer (16 free nodes), its
 * checkpoint upload served by the router in an app of its own.
 */
let peerServer: TestServer;
let uploads: http.Server;
let peer: Peer;
const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-migration-'));

beforeAll(async () => {
  peerServer = await startTestServer({ config: { clusterNodes: 16 } });
  const app = express().use(
    checkpointUploadRouter({
      identify: () => ({ identity: 'anonymous', isAdmin: false }),
      agreement: (id) => peerServer.repository.get(id),
      store: fileCheckpointStore(storeDir),
      maxBytes: 1024 * 1024,
    }),
  );
  uploads = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  peer = {
    name: 'cluster-b',
    factoryUrl: peerServer.url,
    kind: 'wsag-server',
    bandwidthMBps: 1000,
    domain: 'pc2',
    profile: {
      operatingSystems: ['LINUX'],
      architectures: ['x86_64'],
      checkpointSystems: ['BLCR 0.8.5'],
      libraries: [],
    },
    checkpointUrl: `http://127.0.0.1:${(uploads.address() as AddressInfo).port}/api/agreements/{agreementId}/checkpoint`,
  };
});
afterAll(async () => {
  await peerServer.close();
  await new Promise<void>((resolve) => uploads.close(() => resolve()));
  fs.rmSync(storeDir, { recursive: true, force: true });
});

function localSite(
  penaltyPer30Minutes: number,
  migration: ServiceRequest['migrationPolicy'] = { scope: 'AdministrativeDomain', include: [], exclude: [] },
) {
  // The peer's clock is the real one: the local plan starts now, on whole minutes.
  const t0 = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
  const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
  const request = (over: Partial<ServiceRequest>): ServiceRequest => ({
    nodeCount: 4,
    operatingSystem: 'LINUX',
    architecture: 'x86_64',
    libraries: [],
    requestKind: 'Binding',
    guaranteeLevel: 'Standard',
    maxCoveredOutages: 1,
    securityPolicy: [],
    migrationPolicy: migration,
    runtimeSeconds: 3600,
    ...over,
  });
  const agreement = (id: string, req: ServiceRequest): Agreement => ({
    id,
    templateId: 'deadline-job-v1',
    templateName: 'deadline-job',
    initiator: 'CN=alice',
    state: 'Observed',
    serviceTerms: [],
    guaranteeTerms: [],
    request: req,
    document: '<wsag:AgreementOffer/>',
    createdAt: t0,
    updatedAt: t0,
  });
  const terms = (deadline: Date): GuaranteeTerm[] => [
    {
      name: 'CompletionByDeadline',
      serviceScope: ['ComputeJob'],
      kpiName: 'CompletionTime',
      target: { kind: 'CompletedBy', at: deadline },
      penalties: [
        { assessmentInterval: { timeInterval: 'PT30M' }, valueUnit: 'EUR', amount: penaltyPer30Minutes, cap: 500 },
      ],
      rewards: [],
    },
  ];
  const plan = new PlanningService(cluster(8, { timing: thesisCount }));
  const agreements = new Map([
    ['A', agreement('A', request({ runtimeSeconds: 3600, deadline: at(180) }))],
    ['B', agreement('B', request({ runtimeSeconds: 5 * 3600, deadline: at(345) }))],
  ]);
  for (const a of agreements.values()) expect(plan.admit(a.id, a.request, t0).accepted).toBe(true);
  const now = at(30);
  plan.nodeFailed(plan.allocationOf('A')?.segments?.[0]?.nodeIds[0] as string, now);
  const checkpoint = Buffer.from('the state of A after three checkpoints');
  const released: string[] = [];
  const config: PeersConfig = {
    local: { domain: 'pc2', operatingSystem: 'LINUX', architecture: 'x86_64', checkpointSystem: 'BLCR 0.8.5' },
    policy: defaultMigrationPolicy,
    peers: [peer],
  };
  const controller = new MigrationController({
    peers: config,
    providers: new WsagPeerProviders(),
    timing: plan.cluster.timing,
    schedule: planWhatIf(plan.manager, () => now),
    currency: 'EUR',
    providerName: 'site-a',
    checkpointOf: async () => ({ bytes: checkpoint, sizeBytes: checkpoint.length }),
    release: async (id) => {
      released.push(id);
      plan.manager.jobFinished(id, now.getTime());
    },
    record: async (id, migratedTo: MigrationRecord) => {
      agreements.set(id, { ...(agreements.get(id) as Agreement), migratedTo });
    },
  });
  const jobs = () =>
    collectMigrationJobs([...agreements.values()], plan, now, (a) => terms(a.request.deadline as Date));
  return { controller, jobs, now, plan, agreements, released, checkpoint };
}

describe('the Migration Controller with a wsag-server peer', () => {
  it('moves the job that cannot finish in time: the peer agrees, receives the checkpoint, and both agreements say so', async () => {
    const site = localSite(50);
    expect(site.plan.manager.problematic().map((p) => p.id)).toEqual(['A']);
    const report = await site.controller.run(site.jobs(), site.now);
    const [a] = report.jobs;
    expect(a).toMatchObject({
      agreementId: 'A',
      problematic: true,
      migrated: true,
      peer: 'cluster-b',
      unsolved: false,
    });
    expect(report).toMatchObject({ problematicBefore: ['A'], problematicAfter: [], violations: [] });
    expect(site.released).toEqual(['A']);
    // Here: the agreement records where the job went; the plan no longer holds it.
    const migratedTo = site.agreements.get('A')?.migratedTo;
    expect(migratedTo).toEqual({
      peer: 'cluster-b',
      remoteAgreementId: a?.remoteAgreementId,
      remoteAddress: `${peerServer.url}/wsag/Agreement`,
      at: site.now,
      price: a?.price,
      penalty: a?.penalty,
    });
    expect(site.plan.manager.job('A')).toBeUndefined();
    // There: an Observed agreement named after the job, by its deadline, holding the checkpoint.
    const client = new WsagClient(peerServer.url);
    const remote = (await client.agreements()).find((x) => x.id === a?.remoteAgreementId);
    expect(remote).toMatchObject({
      name: 'migrated: agreement A from site-a',
      state: 'Observed',
      nodes: 4,
      price: a?.price,
    });
    expect(new Date(remote?.end as string).getTime()).toBeLessThanOrEqual(
      (site.agreements.get('A')?.request.deadline as Date).getTime(),
    );
    expect(fs.readFileSync(path.join(storeDir, `${a?.remoteAgreementId}.checkpoint`)).equals(site.checkpoint)).toBe(
      true,
    );
    // The price was weighed against what staying would have cost.
    expect((a?.price?.amount ?? Infinity) < (a?.penalty?.amount ?? 0)).toBe(true);
    await client.terminate(a?.remoteAgreementId as string);
  });

  it('keeps the job when the peer costs more than the penalty, declines the offer and reports the violation', async () => {
    const site = localSite(0.01);
    const client = new WsagClient(peerServer.url);
    const before = new Set((await client.negotiations()).map((n) => n.id));
    const report = await site.controller.run(site.jobs(), site.now);
    expect(report.jobs.find((j) => j.agreementId === 'A')).toMatchObject({
      migrated: false,
      reason: 'dearer-than-penalty',
      unsolved: true,
    });
    expect(site.released).toEqual([]);
    expect(report.violations.map((v) => v.agreementId)).toEqual(['A']);
    const negotiations = (await client.negotiations()).filter((n) => !before.has(n.id));
    expect(negotiations.length).toBeGreaterThan(0);
    expect(negotiations.every((n) => n.state === 'Terminated')).toBe(true);
  });

  it('keeps the job whose SLA forbids migration, asks no peer, and reports the violation', async () => {
    const site = localSite(50, { scope: 'None', include: [], exclude: [] });
    const client = new WsagClient(peerServer.url);
    const before = (await client.negotiations()).length;
    const report = await site.controller.run(site.jobs(), site.now);
    expect(report.jobs[0]).toMatchObject({
      agreementId: 'A',
      migrated: false,
      reason: 'customer-policy',
      unsolved: true,
    });
    expect(report.violations[0]?.reason).toContain('the SLA forbids migration');
    expect((await client.negotiations()).length).toBe(before);
    expect(site.agreements.get('A')?.migratedTo).toBeUndefined();
  });
});
