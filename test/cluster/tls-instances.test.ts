import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type RunningInstance } from '../../src/assembly/cluster.js';
import { tlsFetch } from '../../src/client/tls-fetch.js';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadCredential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { certificatePem, privateKeyPem } from '../../src/crypto/pem.js';
import { issueProxy } from '../../src/crypto/proxy.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { reservationOffer } from '../engine/run-time-support.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { projectRoot } from '../support/server.js';

/**
 * Two instances on one PostgreSQL. A TLS caller of the standby
 * reaches the leader as itself (its chain handed on with a forward MAC, never the cluster
 * secret), also on a resumed TLS session with a proxy certificate; the standby's /metrics
 * and the leader's address on /healthz are for authenticated callers only.
 */
let postgres: TestPostgres | undefined;
const instances: RunningInstance[] = [];
let pki = '';
let cert = '';
let key = '';
beforeAll(async () => {
  if (skipPostgres) return;
  postgres = await startPostgres();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-tls-cluster-'));
  pki = path.join(dir, 'pki');
  await createDemoPki({ dir: pki, keyType: 'ec' });
  const alice = loadCredential(path.join(pki, 'alice.pem'), path.join(pki, 'alice.key'));
  const proxy = await issueProxy({ issuerCert: alice.certificate, issuerKey: alice.privateKey, hours: 1 });
  cert = [proxy.certificate, alice.certificate].map(certificatePem).join('');
  key = privateKeyPem(proxy.privateKey);
  for (let i = 0; i < 2; i++) {
    const dataDir = fs.mkdtempSync(path.join(dir, `instance-${i}-`));
    const config = loadConfig(
      {
        WSAG_DATABASE_URL: postgres.url,
        WSAG_CLUSTER_SECRET: 'a cluster secret of 32 characters',
        WSAG_TLS_PORT: '0',
        WSAG_CA_FILE: path.join(pki, 'ca.pem'),
        WSAG_TLS_CERT: path.join(pki, 'server.pem'),
        WSAG_TLS_KEY: path.join(pki, 'server.key'),
      },
      {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        templatesDir: path.join(projectRoot, 'templates'),
        logLevel: 'silent',
        clusterNodes: 16,
        executor: 'none',
        signAgreements: false,
      },
    );
    instances.push(await startInstance(config, { logger: pino({ level: 'silent' }) }, { pollMs: 200 }));
  }
}, 120_000);
afterAll(async () => {
  for (const instance of instances.reverse()) await instance.close();
  await postgres?.stop();
});

/** A GET over TLS with alice's proxy, resuming `session` when given; the answer and whether the session was resumed. */
function get(
  url: string,
  session?: Buffer,
): Promise<{ status: number; body: string; reused: boolean; session?: Buffer }> {
  return new Promise((resolve, reject) => {
    let ticket: Buffer | undefined;
    const req = https.request(
      url,
      { cert, key, ca: fs.readFileSync(path.join(pki, 'ca.pem')), agent: false, ...(session ? { session } : {}) },
      (res) => {
        const socket = res.socket as TLSSocket;
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            reused: socket.isSessionReused(),
            ...(ticket ? { session: ticket } : {}),
          }),
        );
      },
    );
    req.on('socket', (socket) => socket.on('session', (s: Buffer) => (ticket = s)));
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(skipPostgres)('two instances over TLS', () => {
  it('a proxy user reaches the leader through the standby as herself, on a resumed TLS session too', async () => {
    const [leader, standby] = instances as [RunningInstance, RunningInstance];
    expect([leader.role(), standby.role()]).toEqual(['leader', 'standby']);
    const client = new WsagClient(
      standby.tlsUrl as string,
      tlsFetch({ cert, key, ca: fs.readFileSync(path.join(pki, 'ca.pem'), 'utf8') }),
    );
    const start = new Date(Math.ceil((Date.now() + 3 * 3600_000) / 60_000) * 60_000);
    const { agreementId } = await client.createAgreement(
      await reservationOffer(client, 1, start, new Date(start.getTime() + 3600_000)),
    );
    const first = await get(`${standby.tlsUrl}/api/agreements/${agreementId}`);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ id: agreementId, initiator: '/C=DE/O=wsag-demo/OU=users/CN=alice' });
    const resumed = await get(`${standby.tlsUrl}/api/agreements/${agreementId}`, first.session);
    expect(resumed.reused).toBe(true);
    expect([resumed.status, JSON.parse(resumed.body).initiator]).toEqual([200, '/C=DE/O=wsag-demo/OU=users/CN=alice']);
  });

  it("the standby's /metrics needs a certificate, and /healthz names the leader only to one", async () => {
    const [leader, standby] = instances as [RunningInstance, RunningInstance];
    expect((await fetch(`${standby.url}/metrics`)).status).toBe(401);
    expect((await get(`${standby.tlsUrl}/metrics`)).status).toBe(200);
    expect(await (await fetch(`${standby.url}/healthz`)).json()).toEqual({ status: 'ok', role: 'standby' });
    expect(await (await fetch(`${leader.url}/healthz`)).json()).toEqual({ status: 'ok', role: 'leader' });
    expect(JSON.parse((await get(`${standby.tlsUrl}/healthz`)).body)).toEqual({
      status: 'ok',
      role: 'standby',
      leader: leader.url,
    });
  });
});
