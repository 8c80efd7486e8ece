import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 16 } });
});
afterAll(async () => server.close());

describe('concurrent CreateAgreement for the last free nodes', () => {
  it('admits exactly as many 8-node reservations as fit in 16 nodes; the rest are told why', async () => {
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const offer = offerFromTemplate(template);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => client.createAgreement(offer)));
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(accepted).toHaveLength(2);
    expect(refused).toHaveLength(8);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(WsagFault);
      expect((r.reason as WsagFault).code).toBe('CannotSatisfy');
      expect((r.reason as WsagFault).message).toMatch(
        /8 nodes are not free .*: 0 of 16 nodes are free throughout that window/,
      );
    }
    expect((await server.repository.list()).length).toBe(2);
  });
});
