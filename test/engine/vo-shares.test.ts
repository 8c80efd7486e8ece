import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WsagFault } from '../../src/client/wsag-client.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { withChargeAccount } from '../../src/xml/offer-additions.js';
import { wsag } from '../cli/support.js';
import { paper } from '../scheduler/support.js';
import { at, reservationOffer, simulatedServer, type SimulatedServer } from './run-time-support.js';

/**
 * VO usage SLAs at admission, one VO per limit kind on an 8-node site whose
 * epoch is the day from T0 (192 node-hours; each VO's 25 % is 48): fixed caps, extensible
 * passes its cap only into capacity nobody else is entitled to, burst passes it by a
 * bounded amount at a bounded width. Refusals are ShareExceeded faults naming the VO.
 */
describe('VO shares at admission', () => {
  let server: SimulatedServer;
  const hour = 3600;
  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-vo-'));
    const policy = path.join(dir, 'vo-policy.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({
        epochStart: at(0).toISOString(),
        epochSeconds: 86_400,
        vos: [
          { name: 'astro', share: 0.25, limit: 'fixed' },
          { name: 'bio', share: 0.25, limit: 'extensible' },
          { name: 'hep', share: 0.25, limit: 'burst', burst: { share: 0.5, seconds: 7200 } },
        ],
      }),
    );
    // No set-up times: back-to-back windows on the same nodes, so each VO's node-hours are whole figures.
    const instant = { ...paper, nodeInitSeconds: 0, handoverSeconds: 0 };
    server = await simulatedServer({
      nodes: 8,
      config: {
        voPolicyFile: policy,
        cluster: {
          nodeGroups: [{ count: 8, idPrefix: 'n', memoryGB: 16, cpus: 16, interconnect: 'InfiniBand' }],
          timing: instant,
        },
      },
    });
    for (const vo of ['astro', 'bio', 'hep']) {
      await wsag(['account', 'create', vo, '--owner', 'anonymous', '--kind', 'vo', '--vo', vo], { url: server.url });
      await wsag(['account', 'allocate', vo, '1000'], { url: server.url });
    }
  });
  afterAll(async () => server?.close());

  const reserve = async (vo: string, nodes: number, fromHour: number, toHour: number) => {
    const offer = withChargeAccount(
      await reservationOffer(server.client, nodes, at(fromHour * hour), at(toHour * hour)),
      { account: vo, virtualOrganisation: vo },
    );
    return server.client.createAgreement(offer).then(
      (a) => a.agreementId,
      (e: unknown) => e as WsagFault,
    );
  };
  const refused = (outcome: string | WsagFault) => (typeof outcome === 'string' ? undefined : outcome);

  it('fixed: the VO books up to its share and not a node-hour more', async () => {
    expect(typeof (await reserve('astro', 4, 1, 11))).toBe('string'); // 40 of 48 node-hours
    const fault = refused(await reserve('astro', 4, 12, 15)); // 12 more
    expect(fault?.code).toBe('ShareExceeded');
    expect(fault?.description).toBe(
      'VO "astro" is over its share: 25.0 % of the site in the epoch from 2026-11-23T00:00:00Z to 2026-11-24T00:00:00Z is 48.0 node-hours, of which 40.0 node-hours are used or booked; this request needs 12.0 node-hours more, and its share is a fixed limit; room returns at 2026-11-24T00:00:00Z, when the next epoch begins',
    );
    expect(typeof (await reserve('astro', 4, 12, 14))).toBe('string'); // 8 more: exactly its share
  });

  it('extensible: past its share only into capacity nobody else is entitled to', async () => {
    expect(typeof (await reserve('bio', 4, 12, 24))).toBe('string'); // its 48 node-hours
    // Nobody's: 192 - 48 (astro) - 48 (bio) - 48 (hep's share, unused) = 48 node-hours.
    expect(typeof (await reserve('bio', 4, 15, 17))).toBe('string'); // 8 more
    const fault = refused(await reserve('bio', 4, 0, 11)); // 44 more, though the nodes are free: only 40 are nobody's
    expect(fault?.code).toBe('ShareExceeded');
    expect(fault?.description).toMatch(
      /^VO "bio" is over its share: .* of which 56\.0 node-hours are used or booked; this request needs 44\.0 node-hours more, and its share is an extensible limit, and the site has no capacity nobody else is entitled to for it;/,
    );
  });

  it('burst: past its share by (50 % - 25 %) x 8 nodes x 2 h = 4 node-hours', async () => {
    expect(typeof (await reserve('hep', 4, 1, 11))).toBe('string');
    expect(typeof (await reserve('hep', 4, 17, 19))).toBe('string'); // its 48 node-hours
    expect(typeof (await reserve('hep', 2, 20, 22))).toBe('string'); // 4 beyond: its burst allowance
    const over = refused(await reserve('hep', 1, 22, 23)); // 1 more
    expect(over?.code).toBe('ShareExceeded');
    expect(over?.description).toMatch(
      /^VO "hep" is over its share: .* its share is a burst limit \(up to 50 % of the nodes at once, for 7200 s beyond the share\), which it would pass;/,
    );
  });

  it("wsag vo shows each VO's share against its usage this epoch", async () => {
    const shown = await wsag(['vo', '--json'], { url: server.url });
    expect(shown.code, shown.stderr).toBe(0);
    const doc = JSON.parse(shown.stdout) as {
      shares: Array<{ path: string; entitledNodeHours: number; usedNodeHours: number }>;
    };
    expect(doc.shares.map((s) => [s.path, s.entitledNodeHours, s.usedNodeHours])).toEqual([
      ['astro', 48, 48],
      ['bio', 48, 56],
      ['hep', 48, 52],
    ]);
  });

  it('in negotiation, an offer past the share is countered with a start when the share allows it', async () => {
    const offer = withChargeAccount(await reservationOffer(server.client, 4, at(14 * hour), at(15 * hour)), {
      account: 'astro',
      virtualOrganisation: 'astro',
    });
    const negotiation = await server.client.initiateNegotiation();
    const answers = await server.client.negotiate(negotiation.negotiationId, [
      negotiationOffer(offer, { offerId: 'o1', counterOfferTo: 'advance-reservation-v1', state: 'Solicited' }),
    ]);
    const rejected = answers.find((a) => a.state === 'Rejected');
    expect(rejected?.note).toMatch(/^VO "astro" is over its share: .* room returns at 2026-11-24T00:00:00Z/);
    const later = answers.find((a) => a.state === 'Advisory' && a.note?.includes("when the VO's share allows it"));
    expect(later?.note).toMatch(/counter-offer \(when the VO's share allows it\): 4 nodes from 2026-11-24T00:00:00Z/);
  });
});
