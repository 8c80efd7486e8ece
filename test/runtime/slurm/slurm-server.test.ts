import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../../src/client/wsag-client.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { SlurmReservations } from '../../../src/runtime/slurm/slurm-reservations.js';
import { offerFromTemplate } from '../../../src/xml/offer-from-template.js';
import { reservationOffer } from '../../engine/run-time-support.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';
import { eventually } from './support.js';

/**
 * Through the server (WSAG_EXECUTOR=slurm): the cluster is Slurm's, and every
 * agreement's booking becomes a Slurm reservation on its nodes that Terminate removes.
 */
describe.skipIf(skipSlurm)('a server in front of Slurm', () => {
  let cluster: SlurmTestCluster;
  let server: TestServer;
  let reservations: SlurmReservations;
  beforeAll(async () => {
    cluster = startSlurmCluster(4);
    server = await startTestServer({
      config: {
        executor: 'slurm',
        slurm: { conf: cluster.slurmConf, partition: 'batch', user: 'root' },
        clusterNodes: undefined,
        admins: ['anonymous'],
      },
    });
    reservations = new SlurmReservations(new SlurmCli({ slurmConf: cluster.slurmConf }), 'root');
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    cluster?.stop();
  });

  it('plans on the nodes Slurm reports, with their features as properties', async () => {
    const nodes = (await (await fetch(`${server.url}/api/nodes`)).json()) as {
      nodes: Array<{ id: string; island?: string; securityPolicies?: string[] }>;
    };
    expect(nodes.nodes.map((n) => n.id)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(nodes.nodes[0]).toMatchObject({ island: 'a', securityPolicies: ['HardenedNode'] });
  });

  it("an agreement's booking is a reservation in Slurm on its nodes and times; Terminate removes it", async () => {
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }]),
    );
    const plan = (await (await fetch(`${server.url}/api/plan`)).json()) as {
      bookings: Array<{ id: string; nodeIds: string[]; start: string; end: string }>;
    };
    const booking = plan.bookings.find((b) => b.id === agreementId);
    const name = `wsag_${agreementId}_0`;
    const owned = await eventually(
      () => reservations.owned(),
      (list) => list.some((r) => r.name === name),
    );
    expect(owned.find((r) => r.name === name)).toEqual({
      name,
      nodes: [...(booking?.nodeIds ?? [])].sort(),
      start: new Date(booking?.start as string),
      end: new Date(booking?.end as string),
    });

    await client.terminate(agreementId);
    const after = await eventually(
      () => reservations.owned(),
      (list) => !list.some((r) => r.name === name),
    );
    expect(after.some((r) => r.name === name)).toBe(false);
  });
  it('after a burst of 100 creates, Slurm has every booking as a reservation and no two share a node at overlapping times', async () => {
    const client = new WsagClient(server.url);
    // A fixed pseudo-random mix of 1- and 2-node windows over the next six hours, many competing for the same nodes.
    let seed = 13;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const hour = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000;
    const offers = await Promise.all(
      Array.from({ length: 100 }, () => {
        const start = new Date(hour + Math.floor(random() * 6 * 12) * 300_000);
        return reservationOffer(
          client,
          1 + Math.floor(random() * 2),
          start,
          new Date(start.getTime() + (1 + Math.floor(random() * 6)) * 600_000),
        );
      }),
    );
    const outcomes = await Promise.allSettled(offers.map((offer) => client.createAgreement(offer)));
    const accepted = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.agreementId] : []));
    expect(accepted.length).toBeGreaterThan(20);
    expect(
      outcomes
        .filter((o) => o.status === 'rejected')
        .every((o) => String((o as PromiseRejectedResult).reason).includes('CannotSatisfy')),
    ).toBe(true);
    const plan = (await (await fetch(`${server.url}/api/plan`)).json()) as {
      bookings: Array<{ id: string; nodeIds: string[]; start: string; end: string }>;
    };
    const booked = plan.bookings.filter((b) => accepted.includes(b.id));
    expect(booked).toHaveLength(accepted.length);
    const owned = await eventually(
      () => reservations.owned(),
      (list) => accepted.every((id) => list.some((r) => r.name === `wsag_${id}_0`)),
    );
    for (const b of booked) {
      expect(owned.find((r) => r.name === `wsag_${b.id}_0`)).toEqual({
        name: `wsag_${b.id}_0`,
        nodes: [...b.nodeIds].sort(),
        start: new Date(b.start),
        end: new Date(b.end),
      });
    }
    // Slurm's own view: `scontrol show reservation`, every pair of reservations on a common node.
    const overlapping = owned.flatMap((a, i) =>
      owned
        .slice(i + 1)
        .filter(
          (b) =>
            a.nodes.some((n) => b.nodes.includes(n)) &&
            a.start.getTime() < b.end.getTime() &&
            b.start.getTime() < a.end.getTime(),
        )
        .map((b) => `${a.name} ${b.name}`),
    );
    expect(overlapping).toEqual([]);
    await Promise.all(accepted.map((id) => client.terminate(id)));
  }, 120_000);
});
