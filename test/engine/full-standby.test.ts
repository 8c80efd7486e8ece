import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagFault } from '../../src/client/wsag-client.js';
import { defaultMigrationPolicy, type PeersConfig } from '../../src/engine/migration/peers.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { at, deadlineOffer, simulatedServer, type SimulatedServer } from './run-time-support.js';

/**
 * Full service reserves remote standby capacity at acceptance (TERMS.md, Hovestadt 2006, section
 * 3.2.2): with a peer configured, a Full agreement at site A is made only once site B holds
 * standby capacity for it (a preparatory reservation, bound into an agreement with B once
 * A's agreement is stored). B keeps the capacity without running anything until a
 * checkpoint arrives; when the job's run at A is over, A ends the standby agreement.
 */
let servers: SimulatedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function sites(peerOperatingSystems: string[]) {
  const b = await simulatedServer({ nodes: 16, config: { providerName: 'site-b' } });
  servers.push(b);
  const peers: PeersConfig = {
    local: { domain: 'pc2', operatingSystem: 'LINUX', architecture: 'x86_64', checkpointSystem: 'BLCR 0.8.5' },
    policy: defaultMigrationPolicy,
    peers: [
      {
        name: 'cluster-b',
        factoryUrl: b.url,
        kind: 'wsag-server',
        bandwidthMBps: 1000,
        domain: 'pc2',
        profile: {
          operatingSystems: peerOperatingSystems,
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

describe('Full service with a peer', () => {
  it('holds standby capacity at the peer at acceptance, binds it, and ends it when the job is over', async () => {
    const { a, b } = await sites(['LINUX']);
    const id = (await a.client.createAgreement(await deadlineOffer(a.client, { level: 'Full', deadline: at(5000) })))
      .agreementId;
    const standby = (await b.client.agreements()).find((x) => x.name === `standby for agreement ${id} of site-a`);
    expect(standby).toMatchObject({ state: 'Observed', nodes: 4 });
    const store = SqliteStore.openReadOnly(path.join(a.dataDir, 'wsag.db'));
    try {
      const bound = (await store.audit.entries({ subject: { kind: 'agreement', id } })).find(
        (e) => e.action === 'standby-bound',
      );
      expect(bound?.details).toMatchObject({ peer: 'cluster-b', remoteAgreementId: standby?.id });
    } finally {
      await store.close();
    }
    // The standby runs nothing while it waits for a checkpoint.
    await Promise.all([a.runUntilIdle(), b.advanceTo(5000)]);
    expect(b.rm.callsOf('prepare', standby?.id)).toEqual([]);
    expect(await a.client.state(id)).toMatchObject({ state: 'Complete', guaranteeTerms: [{ state: 'Fulfilled' }] });
    // The job's run is over at A: the standby agreement at B is ended.
    expect((await b.client.state(standby?.id as string)).state).toBe('Terminated');
  });

  it('refuses Full service when no peer can hold the standby, saying why', async () => {
    const { a, b } = await sites(['WINNT']);
    const offer = await deadlineOffer(a.client, { level: 'Full', deadline: at(5000) });
    const error = await a.client.createAgreement(offer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WsagFault);
    expect((error as WsagFault).code).toBe('CannotSatisfy');
    expect((error as WsagFault).description).toMatch(
      /^Full service needs standby capacity at a peer provider: no peer can hold standby capacity for it \(cluster-b: .*LINUX/,
    );
    expect(await a.client.agreements()).toEqual([]);
    expect(await b.client.agreements()).toEqual([]);
    // The booking was undone: the same job at Standard fits.
    expect(
      (
        await a.client.createAgreement(
          await deadlineOffer(a.client, { level: 'Standard', deadline: at(5000), nodes: 8 }),
        )
      ).agreementId,
    ).toBeTruthy();
  });
});
