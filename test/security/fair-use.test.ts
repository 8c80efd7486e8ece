import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsFetch } from '../../src/client/tls-fetch.js';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { loadCredential, type Credential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { certificatePem, privateKeyPem } from '../../src/crypto/pem.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { reservationOffer } from '../engine/run-time-support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from '../cli/support.js';

/**
 * No single user takes what belongs to all. Over TLS, with the default
 * limits (a party holds at most half the SLA nodes at any time) and a few set low here,
 * alice cannot hold the whole site, bob still gets capacity, pending agreements expire
 * undecided, negotiations are bounded, /metrics counts each refusal by limit, and the
 * counts come back after a restart.
 */
describe('fair use over TLS', () => {
  let pki: string;
  let alice: Credential;
  let bob: Credential;
  const repository = new MemoryAgreementRepository();
  const negotiationRepository = new MemoryNegotiationRepository();
  let server: TestServer;
  const hour = 3600_000;
  const slot = (n: number) => ({
    start: new Date(Math.ceil((Date.now() + (2 + 2 * n) * hour) / 60_000) * 60_000),
    end: new Date(Math.ceil((Date.now() + (3 + 2 * n) * hour) / 60_000) * 60_000),
  });

  const start = () =>
    startTestServer({
      repository,
      negotiationRepository,
      config: {
        dataDir: path.dirname(pki),
        tlsPort: 0,
        anonymous: 'deny',
        clusterNodes: 16,
        warmNodes: 0,
        caFile: path.join(pki, 'ca.pem'),
        tlsCertFile: path.join(pki, 'server.pem'),
        tlsKeyFile: path.join(pki, 'server.key'),
        // The defaults, with a node-hour budget, pending time and negotiations low enough to reach here.
        fairUse: 'nodeHours=40,pending=1,pendingSeconds=2,negotiations=2',
      },
    });
  const as = (who: Credential) =>
    new WsagClient(
      server.tlsUrl as string,
      tlsFetch({
        cert: [who.certificate, ...who.chain].map(certificatePem).join(''),
        key: privateKeyPem(who.privateKey),
        ca: fs.readFileSync(path.join(pki, 'ca.pem'), 'utf8'),
      }),
    );
  const faultOf = async (call: Promise<unknown>): Promise<WsagFault> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WsagFault);
    return error as WsagFault;
  };
  const refusals = async (): Promise<Record<string, number>> => {
    const text = await (
      await tlsFetch({
        cert: [alice.certificate, ...alice.chain].map(certificatePem).join(''),
        key: privateKeyPem(alice.privateKey),
        ca: fs.readFileSync(path.join(pki, 'ca.pem'), 'utf8'),
      })(`${server.tlsUrl}/metrics`)
    ).text();
    return Object.fromEntries(
      [...text.matchAll(/^wsag_fair_use_refusals_total\{limit="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
    );
  };

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-fair-use-'));
    pki = path.join(dataDir, 'pki');
    await createDemoPki({ dir: pki, keyType: 'ec' });
    alice = loadCredential(path.join(pki, 'alice.pem'), path.join(pki, 'alice.key'));
    bob = loadCredential(path.join(pki, 'bob.pem'), path.join(pki, 'bob.key'));
    server = await start();
  }, 60_000);
  afterAll(async () => server?.close());

  it('alice holds at most half the nodes at any time; bob still gets the rest', async () => {
    const [a, b] = [as(alice), as(bob)];
    const window = slot(0);
    await a.createAgreement(await reservationOffer(a, 8, window.start, window.end));
    const whole = await faultOf(a.createAgreement(await reservationOffer(a, 16, slot(1).start, slot(1).end)));
    expect(whole.code).toBe('FairUseExceeded');
    expect(whole.message).toMatch(
      /^FairUseExceeded: \/C=DE\/O=wsag-demo\/OU=users\/CN=alice would hold 16 of the site's 16 SLA nodes at \S+; one party holds at most 8 at any time \(share=0.5 in WSAG_FAIR_USE\): ask for fewer nodes or another time$/,
    );
    expect((await faultOf(a.createAgreement(await reservationOffer(a, 1, window.start, window.end)))).code).toBe(
      'FairUseExceeded',
    );
    await b.createAgreement(await reservationOffer(b, 8, window.start, window.end));
    expect((await refusals()).share).toBe(2);
  });

  it("alice's node-hours ahead are bounded: windows at other times add up", async () => {
    const a = as(alice);
    for (const n of [1, 2, 3]) await a.createAgreement(await reservationOffer(a, 8, slot(n).start, slot(n).end));
    const fifth = await faultOf(a.createAgreement(await reservationOffer(a, 8, slot(4).start, slot(4).end)));
    expect(fifth.code).toBe('FairUseExceeded');
    expect(fifth.message).toMatch(
      /would hold [\d.]+ node-hours from now on \([\d.]+ of them this request's\); one party holds at most 40 \(nodeHours=40 in WSAG_FAIR_USE\)/,
    );
    expect((await refusals()).nodeHours).toBe(1);
  });

  it('a pending agreement left undecided is rejected and frees its capacity; one at a time', async () => {
    const b = as(bob);
    const window = slot(5);
    const { agreementId } = await b.createPendingAgreement(await reservationOffer(b, 2, window.start, window.end));
    expect((await b.state(agreementId)).state).toBe('Pending');
    const second = await faultOf(b.createPendingAgreement(await reservationOffer(b, 2, window.start, window.end)));
    expect(second.message).toMatch(
      /already has 1 pending agreements waiting for the provider's decision, the most one party may have at once \(pending=1 in WSAG_FAIR_USE\)/,
    );
    for (let i = 0; i < 80 && (await b.state(agreementId)).state === 'Pending'; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await b.state(agreementId)).state).toBe('Rejected');
    // Its 2 nodes no longer count: bob may take his whole share of the window.
    await b.createAgreement(await reservationOffer(b, 8, window.start, window.end));
    expect((await refusals()).pending).toBe(1);
  });

  it('a party keeps at most so many negotiations open', async () => {
    const b = as(bob);
    await b.initiateNegotiation();
    await b.initiateNegotiation();
    const third = await faultOf(b.initiateNegotiation());
    expect([third.code, third.message]).toEqual([
      'FairUseExceeded',
      'FairUseExceeded: /C=DE/O=wsag-demo/OU=users/CN=bob already has 2 open negotiations, the most one party may have at once (negotiations=2 in WSAG_FAIR_USE): terminate one, or let one expire',
    ]);
    expect((await refusals()).negotiations).toBe(1);
    // Alice's are her own.
    await as(alice).initiateNegotiation();
  });

  it('wsag limits shows alice each limit and what she holds against it', async () => {
    const env = {
      WSAG_CERT: path.join(pki, 'alice.pem'),
      WSAG_KEY: path.join(pki, 'alice.key'),
      WSAG_CA: path.join(pki, 'ca.pem'),
    };
    const { code, stdout } = await wsag(['limits'], { url: server.tlsUrl as string, env });
    expect(code).toBe(0);
    expect(stdout).toContain('/C=DE/O=wsag-demo/OU=users/CN=alice; the site has 16 SLA nodes');
    expect(stdout).toMatch(/^share\s+nodes at one time \(most ahead\)\s+8\s+8$/m);
    expect(stdout).toMatch(/^agreements\s+agreements holding capacity\s+4\s+200$/m);
    expect(stdout).toMatch(/^negotiations\s+open negotiations\s+1\s+2$/m);
    expect(stdout).toContain('a pending agreement not decided within 2 s is rejected');
    // wsag create says who the server took the caller for.
    const created = await wsag(
      [
        'create',
        '--template',
        'advance-reservation',
        '--set',
        'NodeCount=1',
        '--set',
        `StartTime=${slot(9).start.toISOString()}`,
      ],
      { url: server.tlsUrl as string, env },
    );
    expect(created.err).toEqual([]);
    expect(created.out).toContain('  as        /C=DE/O=wsag-demo/OU=users/CN=alice');
  });

  it('after a restart, what each party holds still counts', async () => {
    await server.close();
    server = await start();
    const a = as(alice);
    const again = await faultOf(a.createAgreement(await reservationOffer(a, 1, slot(1).start, slot(1).end)));
    expect(again.message).toMatch(/would hold 9 of the site's 16 SLA nodes/);
  });
});
