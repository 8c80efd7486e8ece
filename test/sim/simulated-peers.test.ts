import { describe, expect, it } from 'vitest';
import type { ServiceRequest } from '../../src/domain/terms.js';
import type { Peer } from '../../src/engine/migration/peers.js';
import type { PeerQuote } from '../../src/engine/migration/ports.js';
import { SimulatedPeers, type SimulatedPeerTerms } from '../../src/sim/index.js';

const T0 = Date.parse('2026-01-05T00:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);

const peer = (name: string): Peer => ({
  name,
  factoryUrl: `http://${name}.example.org`,
  kind: 'wsag-server',
  bandwidthMBps: 100,
  profile: { operatingSystems: [], architectures: [], checkpointSystems: [], libraries: [] },
});
const a = peer('a');

function request(over: Partial<ServiceRequest>): ServiceRequest {
  return {
    nodeCount: 4,
    libraries: [],
    requestKind: 'Binding',
    guaranteeLevel: 'Standard',
    maxCoveredOutages: 1,
    securityPolicy: [],
    ...over,
  };
}

function providers(terms: Partial<SimulatedPeerTerms> = {}): SimulatedPeers {
  return new SimulatedPeers(new Map([['a', { nodes: 8, pricePerNodeHour: 2, pricePerJob: 0, ...terms }]]), 'EUR');
}

async function quoted(p: SimulatedPeers, r: ServiceRequest): Promise<PeerQuote> {
  const answer = await p.quote(a, { request: r });
  if (!answer.quoted) throw new Error(answer.reason);
  return answer.quote;
}

describe('SimulatedPeers', () => {
  it('offers the earliest start for the work asked and prices nodes x hours x its rate plus its price per job', async () => {
    const p = providers({ pricePerJob: 3 });
    const quote = await quoted(p, request({ earliestStart: at(100), runtimeSeconds: 5400, deadline: at(10_000) }));
    expect(quote.price).toEqual({ amount: 4 * 1.5 * 2 + 3, currency: 'EUR' });
    const remote = await p.accept(a, quote);
    expect(p.agreement(remote.agreementId)).toMatchObject({
      start: T0 + 100_000,
      end: T0 + 5500_000,
      nodes: 4,
      state: 'agreed',
    });
    expect(p.usage()[0]).toMatchObject({ quotes: 1, refusals: 0, agreements: 1, price: 15, nodeSeconds: 4 * 5400 });
  });

  it('a held offer takes its nodes until declined; a job that does not fit next to it starts when it ends, if that is by the deadline', async () => {
    const p = providers();
    const first = await quoted(
      p,
      request({ nodeCount: 6, earliestStart: at(0), runtimeSeconds: 3600, deadline: at(4000) }),
    );
    // 6 of 8 nodes are held over [0, 3600): 4 more fit only from 3600.
    const second = await quoted(p, request({ earliestStart: at(0), runtimeSeconds: 600, deadline: at(5000) }));
    await p.accept(a, second);
    expect(p.agreement('a-1')).toMatchObject({ start: T0 + 3600_000, end: T0 + 4200_000 });
    const refused = await p.quote(a, {
      request: request({ earliestStart: at(0), runtimeSeconds: 600, deadline: at(4000) }),
    });
    expect(refused).toEqual({
      quoted: false,
      reason: 'a: 4 nodes are not free for 600 s between 2026-01-05T00:00:00Z and the deadline 2026-01-05T01:06:40Z',
    });
    await p.decline(a, first);
    expect(
      (await p.quote(a, { request: request({ earliestStart: at(0), runtimeSeconds: 600, deadline: at(4000) }) }))
        .quoted,
    ).toBe(true);
    expect(p.usage()[0]).toMatchObject({ quotes: 4, refusals: 1, declined: 1, agreements: 1 });
  });

  it('a reservation keeps its window: taken if the nodes are free throughout it', async () => {
    const p = providers();
    await p.accept(a, await quoted(p, request({ nodeCount: 5, window: { start: at(1000), end: at(2000) } })));
    const clash = await p.quote(a, { request: request({ nodeCount: 4, window: { start: at(1500), end: at(2500) } }) });
    expect(clash).toEqual({
      quoted: false,
      reason: 'a: 4 nodes are not free throughout the window 2026-01-05T00:25:00Z to 2026-01-05T00:41:40Z',
    });
    const after = await quoted(p, request({ nodeCount: 4, window: { start: at(2000), end: at(2900) } }));
    expect(after.price.amount).toBe(2); // 4 nodes x 0.25 h x 2
  });

  it('refuses a job larger than its nodes, or work that cannot end by the deadline even at once', async () => {
    const p = providers();
    expect(await p.quote(a, { request: request({ nodeCount: 9, runtimeSeconds: 60, earliestStart: at(0) }) })).toEqual({
      quoted: false,
      reason: 'a: the job needs 9 nodes, it has 8 for migrated jobs',
    });
    expect(
      await p.quote(a, { request: request({ runtimeSeconds: 600, earliestStart: at(100), deadline: at(600) }) }),
    ).toEqual({
      quoted: false,
      reason: 'a: 600 s of work from 2026-01-05T00:01:40Z end after the deadline 2026-01-05T00:10:00Z',
    });
  });

  it('accepting an offer it no longer holds fails; a terminated agreement frees its nodes and its price', async () => {
    const p = providers();
    const quote = await quoted(p, request({ nodeCount: 8, earliestStart: at(0), runtimeSeconds: 3600 }));
    const remote = await p.accept(a, quote);
    await expect(p.accept(a, quote)).rejects.toThrow('a holds no offer a/offer-1');
    await p.transferCheckpoint(a, remote.agreementId, { sizeBytes: 1000 });
    await expect(p.transferCheckpoint(a, 'a-9', { sizeBytes: 1 })).rejects.toThrow('a has no agreement a-9');
    await p.terminate(a, remote, 'transfer failed');
    expect(p.agreement(remote.agreementId)).toBeUndefined();
    expect(p.usage()[0]).toMatchObject({
      agreements: 0,
      terminated: 1,
      price: 0,
      nodeSeconds: 0,
      checkpointBytes: 1000,
    });
    expect(
      (
        await p.quote(a, {
          request: request({ nodeCount: 8, earliestStart: at(0), runtimeSeconds: 60, deadline: at(60) }),
        })
      ).quoted,
    ).toBe(true);
  });

  it('holds no standby capacity for Full service, and answers a peer it has no terms for with a refusal', async () => {
    const p = providers();
    expect((await p.reserveStandby(a)).quoted).toBe(false);
    expect(await p.quote(peer('b'), { request: request({ runtimeSeconds: 60 }) })).toEqual({
      quoted: false,
      reason: 'b has no simulation terms',
    });
  });
});
