import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointUrl, clientFor, WsagPeerProviders } from '../../src/client/peer-providers.js';
import { WsagClient } from '../../src/client/wsag-client.js';
import type { ServiceRequest } from '../../src/domain/terms.js';
import { RemoteStandby } from '../../src/engine/migration/migration-standby.js';
import { defaultMigrationPolicy, type Peer } from '../../src/engine/migration/peers.js';
import type { PeerQuote, PeerQuoteAnswer } from '../../src/engine/migration/ports.js';
import { checkpointUploadRouter, fileCheckpointStore } from '../../src/web/checkpoint-upload.js';
import { deadUrl } from '../cli/support.js';
import { receivedOffer } from '../support/offers.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The peer providers over the WS-Agreement client, against a second wsag-server started
 * in-process on a loopback port (16 nodes). Its checkpoint upload is served by the router
 * of src/web/checkpoint-upload.ts in a small app of its own over the peer's store, until
 * the server mounts it.
 */
let peerServer: TestServer;
let uploads: http.Server;
let uploadUrl: string;
let peer: Peer;
let client: WsagClient;
const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-checkpoints-'));
const providers = new WsagPeerProviders();

beforeAll(async () => {
  peerServer = await startTestServer({ config: { clusterNodes: 16 } });
  client = new WsagClient(peerServer.url);
  const app = express();
  app.use(
    checkpointUploadRouter({
      identify: (req) => ({ identity: req.get('x-test-identity') ?? 'anonymous', isAdmin: false }),
      agreement: (id) => peerServer.repository.get(id),
      store: fileCheckpointStore(storeDir),
      maxBytes: 64 * 1024,
    }),
  );
  uploads = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  uploadUrl = `http://127.0.0.1:${(uploads.address() as AddressInfo).port}`;
  peer = {
    name: 'cluster-b',
    factoryUrl: peerServer.url,
    kind: 'wsag-server',
    bandwidthMBps: 100,
    domain: 'pc2',
    profile: {
      operatingSystems: ['LINUX'],
      architectures: ['x86_64'],
      checkpointSystems: ['BLCR 0.8.5'],
      libraries: [{ name: 'libmpi.so', version: '4.1.5' }],
    },
    checkpointUrl: `${uploadUrl}/api/agreements/{agreementId}/checkpoint`,
  };
});
afterAll(async () => {
  await peerServer.close();
  await new Promise<void>((resolve) => uploads.close(() => resolve()));
  fs.rmSync(storeDir, { recursive: true, force: true });
});

const minutes = (m: number) => new Date(Math.ceil((Date.now() + m * 60_000) / 1000) * 1000);
function jobRequest(over: Partial<ServiceRequest> = {}): ServiceRequest {
  return {
    nodeCount: 4,
    operatingSystem: 'LINUX',
    architecture: 'x86_64',
    libraries: [{ name: 'libmpi.so', version: '4.1.5', loaded: true }],
    runtimeSeconds: 1800,
    earliestStart: minutes(5),
    deadline: minutes(240),
    requestKind: 'Binding',
    guaranteeLevel: 'Standard',
    maxCoveredOutages: 1,
    migrationPolicy: { scope: 'AdministrativeDomain', include: [], exclude: [] },
    securityPolicy: [],
    ...over,
  };
}
function quoted(answer: PeerQuoteAnswer): PeerQuote {
  if (!answer.quoted) throw new Error(`expected a quote, got: ${answer.reason}`);
  return answer.quote;
}
const offerOf = async (quote: PeerQuote) =>
  (await client.negotiation(quote.negotiationId)).offers.find((o) => o.offerId === quote.offerId);

describe('WsagPeerProviders against a wsag-server peer', () => {
  it("quote: the peer's committing offer for the job's terms, with its price, holding the capacity", async () => {
    const request = jobRequest();
    const quote = quoted(await providers.quote(peer, { request, name: 'migrated: agreement A from site-a' }));
    expect(quote).toMatchObject({ peer: 'cluster-b', negotiationAddress: `${peerServer.url}/wsag/Negotiation` });
    const seen = await offerOf(quote);
    expect(seen).toMatchObject({ state: 'Acceptable', creator: 'NegotiationResponder', price: quote.price });
    expect(seen?.hold?.state).toBe('Held');
    expect(quote.price.currency).toBe('EUR');
    expect(quote.expiresAt?.toISOString()).toBe(new Date(seen?.hold?.expiresAt as string).toISOString());
    // The offer carries the job's terms, the libraries among them, for the peer to check.
    const terms = receivedOffer(quote.offer).request;
    expect(terms).toMatchObject({
      nodeCount: 4,
      runtimeSeconds: 1800,
      earliestStart: request.earliestStart,
      deadline: request.deadline,
      guaranteeLevel: 'Standard',
      libraries: request.libraries,
    });
    expect(receivedOffer(quote.offer).name).toBe('migrated: agreement A from site-a');
    await providers.decline(peer, quote);
  });

  it('accept: an agreement with the peer on the quoted terms; decline: the negotiation ends and the hold is released', async () => {
    const taken = quoted(await providers.quote(peer, { request: jobRequest() }));
    const other = quoted(await providers.quote(peer, { request: jobRequest({ nodeCount: 2 }) }));
    const remote = await providers.accept(peer, taken);
    expect(remote).toEqual({
      peer: 'cluster-b',
      agreementId: expect.any(String) as string,
      address: `${peerServer.url}/wsag/Agreement`,
    });
    expect((await client.state(remote.agreementId)).state).toBe('Observed');
    expect(await client.negotiation(taken.negotiationId)).toMatchObject({
      state: 'Concluded',
      agreementCreated: remote.agreementId,
    });
    await providers.decline(peer, other);
    expect((await client.negotiation(other.negotiationId)).state).toBe('Terminated');
    expect((await offerOf(other))?.hold?.state).toBe('Released');
    await providers.terminate(peer, remote, 'test done');
    expect((await client.state(remote.agreementId)).state).toBe('Terminated');
  });

  it("a reservation is offered in the peer's reservation template, keeping its window", async () => {
    const window = { start: minutes(60), end: minutes(120) };
    const quote = quoted(
      await providers.quote(peer, {
        request: jobRequest({
          window,
          deadline: undefined,
          earliestStart: undefined,
          guaranteeLevel: 'Legacy',
          libraries: [],
        }),
      }),
    );
    expect(receivedOffer(quote.offer).request).toMatchObject({ window, nodeCount: 4 });
    expect(receivedOffer(quote.offer).templateName).toBe('advance-reservation');
    await providers.decline(peer, quote);
  });

  it('refusals come back as reasons, and leave no negotiation open', async () => {
    const known = new Set((await client.negotiations()).map((n) => n.id));
    const tooBig = await providers.quote(peer, { request: jobRequest({ nodeCount: 32 }) });
    expect(tooBig.quoted).toBe(false);
    expect(!tooBig.quoted && tooBig.reason).toMatch(/^cluster-b: rejected: /);
    const started = (await client.negotiations()).filter((n) => !known.has(n.id));
    expect(started.map((n) => n.state)).toEqual(['Terminated']);
    const noTemplate = await providers.quote({ ...peer, templateName: 'gpu-job' }, { request: jobRequest() });
    expect(noTemplate).toEqual({
      quoted: false,
      reason:
        'cluster-b: the peer serves no template "gpu-job"; it serves: advance-reservation, background-job, best-effort-job, deadline-job, interactive-job',
    });
    const down = await providers.quote({ ...peer, factoryUrl: await deadUrl() }, { request: jobRequest() });
    expect(!down.quoted && down.reason).toMatch(
      /^cluster-b: cannot reach http:\/\/127\.0\.0\.1:\d+\/wsag\/AgreementFactory/,
    );
  });

  it('Full standby: a preparatory hold at the cheapest suitable peer first, then bound into an agreement', async () => {
    const standby = new RemoteStandby({
      peers: { local: { domain: 'pc2' }, policy: defaultMigrationPolicy, peers: [peer] },
      providers,
      providerName: 'site-a',
    });
    const reservation = await standby.reserve(jobRequest({ guaranteeLevel: 'Full' }), { agreementId: 'F' });
    if (!reservation.held) throw new Error(reservation.reason);
    const hold = reservation.hold;
    expect((await offerOf(hold))?.hold?.state).toBe('Held');
    expect(receivedOffer(hold.offer).request.guaranteeLevel).toBe('Standard');
    const bound = await standby.bind(reservation.peer, hold);
    expect((await client.state(bound.agreementId)).state).toBe('Observed');
    expect((await offerOf(hold))?.hold?.state).toBe('Confirmed');
    const listed = (await client.agreements()).find((a) => a.id === bound.agreementId);
    expect(listed).toMatchObject({
      name: 'standby for agreement F of site-a',
      origin: { negotiationId: hold.negotiationId, offerId: hold.offerId },
    });
    await providers.terminate(peer, bound, 'test done');
  });

  it('a standby hold not needed is released', async () => {
    const standby = new RemoteStandby({
      peers: { local: { domain: 'pc2' }, policy: defaultMigrationPolicy, peers: [peer] },
      providers,
    });
    const reservation = await standby.reserve(jobRequest({ guaranteeLevel: 'Full' }));
    if (!reservation.held) throw new Error(reservation.reason);
    await standby.release(reservation.peer, reservation.hold);
    expect((await offerOf(reservation.hold))?.hold?.state).toBe('Released');
  });
});

describe('checkpoint transfer (PUT /api/agreements/{id}/checkpoint)', () => {
  let remoteId: string;
  beforeAll(async () => {
    remoteId = (
      await providers.accept(
        peer,
        quoted(await providers.quote(peer, { request: jobRequest({ resumesFromCheckpointBytes: 1024 * 1024 }) })),
      )
    ).agreementId;
  });
  const stored = (id: string) => fs.readFileSync(path.join(storeDir, `${encodeURIComponent(id)}.checkpoint`));

  it('sends bytes or a file; the peer stores exactly what was sent', async () => {
    const bytes = new Uint8Array(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
    await providers.transferCheckpoint(peer, remoteId, { bytes, sizeBytes: bytes.byteLength });
    expect(Buffer.compare(stored(remoteId), Buffer.from(bytes))).toBe(0);
    const file = path.join(storeDir, 'local.ckpt');
    fs.writeFileSync(file, Buffer.alloc(40_000, 'c'));
    await providers.transferCheckpoint(peer, remoteId, { file, sizeBytes: 40_000 });
    expect(stored(remoteId).equals(Buffer.alloc(40_000, 'c'))).toBe(true);
  });

  it('refuses other parties, unknown agreements, ended agreements, bodies over the limit and damaged bodies', async () => {
    const put = (id: string, body: Buffer, headers: Record<string, string> = {}) =>
      fetch(`${uploadUrl}/api/agreements/${id}/checkpoint`, {
        method: 'PUT',
        body: new Uint8Array(body),
        headers: {
          'content-type': 'application/octet-stream',
          'x-checkpoint-sha256': createHash('sha256').update(body).digest('hex'),
          ...headers,
        },
      });
    const small = Buffer.from('checkpoint');
    const mallory = await put(remoteId, small, { 'x-test-identity': 'CN=mallory' });
    expect(mallory.status).toBe(403);
    expect(await mallory.json()).toMatchObject({
      error: 'NotAuthorized',
      message: `agreement "${remoteId}" belongs to anonymous: only its initiator may send its checkpoint`,
    });
    expect((await put('no-such-agreement', small)).status).toBe(404);
    const tooLarge = await put(remoteId, Buffer.alloc(64 * 1024 + 1));
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { error: string }).error).toBe('MessageTooLarge');
    const damaged = await put(remoteId, small, {
      'x-checkpoint-sha256': createHash('sha256').update('other').digest('hex'),
    });
    expect(damaged.status).toBe(400);
    expect(((await damaged.json()) as { message: string }).message).toMatch(
      /^the checkpoint's sha256 is [0-9a-f]{64}, not [0-9a-f]{64} as x-checkpoint-sha256 says/,
    );
    const ended = (
      await providers.accept(
        peer,
        quoted(
          await providers.quote(peer, { request: jobRequest({ nodeCount: 1, resumesFromCheckpointBytes: 1024 }) }),
        ),
      )
    ).agreementId;
    await client.terminate(ended);
    const late = await put(ended, small);
    expect(late.status).toBe(409);
    expect(fs.existsSync(path.join(storeDir, `${ended}.checkpoint`))).toBe(false);
    // The upload app names the caller by a header: a provider whose fetch sends another identity is refused.
    const asMallory = new WsagPeerProviders({
      fetchFor: () => (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), 'x-test-identity': 'CN=mallory' },
        }),
    });
    await expect(
      asMallory.transferCheckpoint(peer, remoteId, { bytes: small, sizeBytes: small.length }),
    ).rejects.toThrow(
      `peer cluster-b refused the checkpoint for agreement ${remoteId}: NotAuthorized: agreement "${remoteId}" belongs to anonymous`,
    );
    await expect(providers.transferCheckpoint(peer, ended, { bytes: small, sizeBytes: small.length })).rejects.toThrow(
      `peer cluster-b refused the checkpoint for agreement ${ended}: InvalidStateTransition: agreement "${ended}" is Terminated: a checkpoint is taken only while it is Observed`,
    );
  });

  it('only an agreement whose offer declares sla:ResumesFromCheckpoint takes one, up to the size declared', async () => {
    const put = (id: string, body: Buffer) =>
      fetch(`${uploadUrl}/api/agreements/${id}/checkpoint`, {
        method: 'PUT',
        body: new Uint8Array(body),
        headers: {
          'content-type': 'application/octet-stream',
          'x-checkpoint-sha256': createHash('sha256').update(body).digest('hex'),
        },
      });
    const quote = quoted(
      await providers.quote(peer, { request: jobRequest({ nodeCount: 1, resumesFromCheckpointBytes: 100 }) }),
    );
    expect(receivedOffer(quote.offer).request.resumesFromCheckpointBytes).toBe(100);
    const small = (await providers.accept(peer, quote)).agreementId;
    const over = await put(small, Buffer.alloc(101));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { message: string }).message).toMatch(
      /larger than the 100 bytes this server accepts for it/,
    );
    expect((await put(small, Buffer.alloc(100))).status).toBe(204);
    const plain = (
      await providers.accept(peer, quoted(await providers.quote(peer, { request: jobRequest({ nodeCount: 1 }) })))
    ).agreementId;
    const refused = await put(plain, Buffer.alloc(10));
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe(
      `agreement "${plain}" takes no checkpoint: only a migrated job, whose offer declares sla:ResumesFromCheckpoint, resumes from one`,
    );
    expect(fs.existsSync(path.join(storeDir, `${plain}.checkpoint`))).toBe(false);
    await client.terminate(small);
    await client.terminate(plain);
  });

  it('a body without Content-Length is cut off at the limit: 413, nothing stored', async () => {
    const before = fs.readdirSync(storeDir);
    const { port, hostname } = new URL(uploadUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        {
          host: hostname,
          port,
          method: 'PUT',
          path: `/api/agreements/${remoteId}/checkpoint`,
          headers: { 'x-checkpoint-sha256': 'a'.repeat(64), 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${body}`));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write(Buffer.alloc(16 * 1024 + 1));
      req.end();
    });
    expect(answer).toMatch(
      /^413 \{.*"error":"MessageTooLarge","message":"the checkpoint is larger than the 65536 bytes this server accepts/,
    );
    expect(fs.readdirSync(storeDir)).toEqual(before);
  });

  it('a wsag-server takes checkpoints below its base URL unless the peers file says otherwise; a plain ws-agreement peer has none', () => {
    const { checkpointUrl: _custom, ...plain } = peer;
    expect(checkpointUrl(plain, 'a b')).toBe(`${peerServer.url}/api/agreements/a%20b/checkpoint`);
    expect(checkpointUrl(peer, 'x')).toBe(`${uploadUrl}/api/agreements/x/checkpoint`);
    expect(
      checkpointUrl({ ...plain, kind: 'ws-agreement', factoryUrl: 'http://x/wsag/AgreementFactory' }, 'x'),
    ).toBeUndefined();
  });
});

describe('ws-agreement peers: the ports beside the AgreementFactory endpoint', () => {
  it('a factory at .../wsag/AgreementFactory is spoken to as it is (here: our own peer)', async () => {
    const plain = { ...peer, kind: 'ws-agreement' as const, factoryUrl: `${peerServer.url}/wsag/AgreementFactory` };
    const quote = quoted(await providers.quote(plain, { request: jobRequest() }));
    await providers.decline(plain, quote);
    expect((await client.negotiation(quote.negotiationId)).state).toBe('Terminated');
  });

  it('elsewhere, every port is addressed in the directory of the factory endpoint', async () => {
    const called: string[] = [];
    const recording: typeof fetch = async (input) => {
      called.push(String(input));
      throw new Error('not a real server');
    };
    const other = clientFor(
      { ...peer, kind: 'ws-agreement', factoryUrl: 'https://site-x.example.net/services/AgreementFactory' },
      recording,
    );
    await expect(other.templates()).rejects.toThrow();
    await expect(other.initiateNegotiation()).rejects.toThrow();
    await expect(other.negotiate('n', [])).rejects.toThrow();
    expect(called).toEqual([
      'https://site-x.example.net/services/AgreementFactory',
      'https://site-x.example.net/services/NegotiationFactory',
      'https://site-x.example.net/services/Negotiation',
    ]);
  });
});
