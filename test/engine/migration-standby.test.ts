import { describe, expect, it } from 'vitest';
import type { ServiceRequest } from '../../src/domain/terms.js';
import { describeStandby, RemoteStandby } from '../../src/engine/migration/migration-standby.js';
import { defaultMigrationPolicy, type Peer, type PeersConfig } from '../../src/engine/migration/peers.js';
import type { PeerProviders, PeerQuote, PeerRequest } from '../../src/engine/migration/ports.js';

const profile = {
  operatingSystems: ['LINUX'],
  architectures: ['x86_64'],
  checkpointSystems: ['BLCR 0.8.5'],
  libraries: [{ name: 'libmpi.so', version: '4.1.5' }],
};
const peer = (name: string, over: Partial<Peer> = {}): Peer => ({
  name,
  factoryUrl: `http://${name}`,
  kind: 'wsag-server',
  bandwidthMBps: 100,
  domain: 'pc2',
  profile,
  ...over,
});
const request = (over: Partial<ServiceRequest> = {}): ServiceRequest => ({
  nodeCount: 4,
  libraries: [{ name: 'libmpi.so', version: '4.1.5', loaded: true }],
  runtimeSeconds: 3600,
  deadline: new Date('2026-11-23T18:00:00Z'),
  requestKind: 'Binding',
  guaranteeLevel: 'Full',
  maxCoveredOutages: 1,
  securityPolicy: [],
  migrationPolicy: { scope: 'Grid', include: [], exclude: [] },
  ...over,
});

function providers(prices: Record<string, number | undefined>) {
  const calls: string[] = [];
  const asked: PeerRequest[] = [];
  const fake: Pick<PeerProviders, 'reserveStandby' | 'decline' | 'bindStandby'> = {
    async reserveStandby(p, req) {
      calls.push(`reserve ${p.name}`);
      asked.push(req);
      const price = prices[p.name];
      if (price === undefined) return { quoted: false, reason: `${p.name}: rejected: no capacity` };
      return {
        quoted: true,
        quote: {
          peer: p.name,
          negotiationId: `n-${p.name}`,
          negotiationAddress: '',
          offerId: 'N-2',
          price: { amount: price, currency: 'EUR' },
          offer: '<o/>',
          expiresAt: new Date('2026-11-23T12:05:00Z'),
        },
      };
    },
    async decline(p) {
      calls.push(`decline ${p.name}`);
    },
    async bindStandby(p: Peer, hold: PeerQuote) {
      calls.push(`bind ${p.name} ${hold.offerId}`);
      return { peer: p.name, agreementId: 'remote-1', address: `${p.factoryUrl}/wsag/Agreement` };
    },
  };
  return { calls, asked, fake: fake as PeerProviders };
}
const config = (peers: Peer[], over: Partial<PeersConfig['policy']> = {}): PeersConfig => ({
  local: { domain: 'pc2', checkpointSystem: 'BLCR 0.8.5' },
  policy: { ...defaultMigrationPolicy, ...over },
  peers,
});

describe('Full service: standby capacity at a peer', () => {
  it('holds at the cheapest suitable peer, declines the others, and binds the hold', async () => {
    const { calls, asked, fake } = providers({ b: 30, c: 20, d: undefined });
    const standby = new RemoteStandby({
      peers: config([peer('b'), peer('c'), peer('d')]),
      providers: fake,
      providerName: 'site-a',
    });
    const reservation = await standby.reserve(request(), { agreementId: 'F' });
    expect(reservation).toMatchObject({
      held: true,
      peer: { name: 'c' },
      hold: { price: { amount: 20, currency: 'EUR' } },
    });
    expect(describeStandby(reservation)).toBe('standby held at c for 20.00 EUR until 2026-11-23T12:05:00.000Z');
    expect(calls).toEqual(['reserve b', 'reserve c', 'reserve d', 'decline b']);
    expect(asked[0]).toEqual({
      request: { ...request(), guaranteeLevel: 'Standard' },
      name: 'standby for agreement F of site-a',
    });
    if (!reservation.held) throw new Error('not held');
    expect(await standby.bind(reservation.peer, reservation.hold)).toEqual({
      peer: 'c',
      agreementId: 'remote-1',
      address: 'http://c/wsag/Agreement',
    });
  });

  it("asks only peers the job could restart at: the loaded library, the customer's scope", async () => {
    const { calls, fake } = providers({ old: 1, grid: 1, b: 50 });
    const peers = [
      peer('old', { profile: { ...profile, libraries: [{ name: 'libmpi.so', version: '4.1.2' }] } }),
      peer('grid', { domain: 'elsewhere' }),
      peer('b'),
    ];
    const reservation = await new RemoteStandby({ peers: config(peers), providers: fake }).reserve(
      request({ migrationPolicy: { scope: 'AdministrativeDomain', include: [], exclude: [] } }),
    );
    expect(calls).toEqual(['reserve b']);
    expect(reservation.dropped.map((d) => d.peer)).toEqual(['old', 'grid']);
  });

  it('refuses when no peer may or will hold it, saying why', async () => {
    const { fake } = providers({ b: undefined });
    const none = await new RemoteStandby({ peers: config([peer('b')]), providers: fake }).reserve(
      request({ migrationPolicy: { scope: 'None', include: [], exclude: [] } }),
    );
    expect(none).toMatchObject({
      held: false,
      reason:
        'Full service needs standby capacity at a peer, but the SLA forbids migration (sla:MigrationPolicy Scope None): prohibition overrules admission',
    });
    const refused = await new RemoteStandby({ peers: config([peer('b')]), providers: fake }).reserve(request());
    expect(refused).toMatchObject({
      held: false,
      reason: 'no peer holds standby capacity for it (b: rejected: no capacity)',
    });
    const off = await new RemoteStandby({ peers: config([peer('b')], { scope: 'None' }), providers: fake }).reserve(
      request(),
    );
    expect(off.held).toBe(false);
  });
});
