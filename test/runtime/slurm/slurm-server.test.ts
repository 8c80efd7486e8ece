import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { SlurmReservations } from '../../../src/runtime/slurm/slurm-reservations.js';
import { offerFromTemplate } from '../../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';

/**
 * Issue 13 through the server (WSAG_EXECUTOR=slurm): the cluster is Slurm's, and every
 * agreement's booking becomes a Slurm reservation on its nodes that Terminate removes.
 */
describe.skipIf(skipSlurm)('a server in front of Slurm', () => {
  let cluster: SlurmTestCluster;
  let server: TestServer;
  let reservations: SlurmReservations;
  beforeAll(async () => {
    cluster = startSlurmCluster(4);
    server = await startTestServer({ config: { executor: 'slurm', slurm: { conf: cluster.slurmConf, partition: 'batch', user: 'root' }, clusterNodes: undefined, admins: ['anonymous'] } });
    reservations = new SlurmReservations(new SlurmCli({ slurmConf: cluster.slurmConf }), 'root');
  });
  afterAll(async () => {
    await server?.close();
    cluster?.stop();
  });

  const eventually = async <T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> => {
    for (let i = 0; i < 50; i++) {
      const value = await read();
      if (ok(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return read();
  };

  it('plans on the nodes Slurm reports, with their features as properties', async () => {
    const nodes = (await (await fetch(`${server.url}/api/nodes`)).json()) as { nodes: Array<{ id: string; island?: string; securityPolicies?: string[] }> };
    expect(nodes.nodes.map((n) => n.id)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(nodes.nodes[0]).toMatchObject({ island: 'a', securityPolicies: ['HardenedNode'] });
  });

  it('an agreement\'s booking is a reservation in Slurm on its nodes and times; Terminate removes it', async () => {
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { agreementId } = await client.createAgreement(offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }]));
    const plan = (await (await fetch(`${server.url}/api/plan`)).json()) as { bookings: Array<{ id: string; nodeIds: string[]; start: string; end: string }> };
    const booking = plan.bookings.find((b) => b.id === agreementId);
    const name = `wsag_${agreementId}_0`;
    const owned = await eventually(() => reservations.owned(), (list) => list.some((r) => r.name === name));
    expect(owned.find((r) => r.name === name)).toEqual({ name, nodes: [...(booking?.nodeIds ?? [])].sort(), start: new Date(booking?.start as string), end: new Date(booking?.end as string) });

    await client.terminate(agreementId);
    const after = await eventually(() => reservations.owned(), (list) => !list.some((r) => r.name === name));
    expect(after.some((r) => r.name === name)).toBe(false);
  });
});
