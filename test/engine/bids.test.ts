import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagFault } from '../../src/client/wsag-client.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { withChargeAccount } from '../../src/xml/offer-additions.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { wsag } from '../cli/support.js';
import { deadlineOffer, at, planOf, secondsOf, simulatedServer, type SimulatedServer } from './run-time-support.js';

/**
 * Best-effort capacity sold by bid (Tycoon) through the server: two accounts bid
 * for the spare capacity of a 2-node cluster on a simulated clock; the higher bid goes ahead
 * of waiting lower bids, and each job is priced at its bid.
 */
let server: SimulatedServer;
const repository = new MemoryAgreementRepository();
beforeAll(async () => {
  server = await simulatedServer({
    nodes: 2,
    parts: { repository, negotiationRepository: new MemoryNegotiationRepository() },
  });
  for (const id of ['low', 'high']) {
    expect((await wsag(['account', 'create', id, '--owner', 'anonymous'], { url: server.url })).code).toBe(0);
    expect((await wsag(['account', 'allocate', id, '1000', '--key', `grant-${id}`], { url: server.url })).code).toBe(0);
  }
});
afterAll(async () => server?.close());

const bestEffort = async (account: string, bid: number) =>
  withChargeAccount(
    offerFromTemplate((await server.client.templates()).find((t) => t.includes('best-effort-job-v1')) as string, [
      { location: 'NodeCount', value: '2' },
      { location: 'RuntimeEstimate', value: '3600' },
      { location: 'Bid', value: String(bid) },
    ]),
    { account },
  );

describe('best-effort work sold by bid', () => {
  it('a higher bid goes ahead of waiting lower bids; each job is priced at its bid', async () => {
    const lows: string[] = [];
    for (let i = 0; i < 3; i++)
      lows.push((await server.client.createAgreement(await bestEffort('low', 1))).agreementId);
    const startOf = async (id: string) => secondsOf((await planOf(server)).bookings.find((b) => b.id === id)?.start);
    const before = await Promise.all(lows.map(startOf));
    expect(before[0]).toBe(0); // running
    const high = (await server.client.createAgreement(await bestEffort('high', 3))).agreementId;
    // The high bid runs right after the running job; the waiting low bids move back behind it.
    const end0 = secondsOf((await planOf(server)).bookings.find((b) => b.id === lows[0])?.end) as number;
    expect(await startOf(high)).toBe(end0);
    const after = await Promise.all(lows.map(startOf));
    expect(after[0]).toBe(0);
    expect(after[1] as number).toBeGreaterThan(before[1] as number);
    expect(after[2] as number).toBeGreaterThan(before[2] as number);
    // 2 nodes x 1 hour x the bid (the booking includes the node set-up: a little over an hour).
    const [stored, storedLow] = [await repository.get(high), await repository.get(lows[1] as string)];
    expect(stored?.priceFactor).toBe(3);
    expect(storedLow?.priceFactor).toBeUndefined();
    expect((stored?.price?.amount as number) / (storedLow?.price?.amount as number)).toBeCloseTo(3, 1);
  });

  it('a bid on a job with a time promise is refused: that is priced by the curve', async () => {
    const offer = (await deadlineOffer(server.client, { level: 'Standard', deadline: at(50_000) })).replace(
      /(<sla:ServiceLevel>[\s\S]*?)(<\/sla:ServiceLevel>)/,
      '$1<sla:Bid>2</sla:Bid>$2',
    );
    const refused = await server.client.createAgreement(offer).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(WsagFault);
    expect((refused as WsagFault).description).toMatch(/^sla:Bid is for best-effort and background work/);
    const zero = (await bestEffort('low', 1)).replace('<sla:Bid>1</sla:Bid>', '<sla:Bid>0</sla:Bid>');
    const free = (await server.client.createAgreement(zero).then(
      () => undefined,
      (e: unknown) => e,
    )) as WsagFault;
    expect(free.code).toBe('SchemaViolation'); // sla:BidType is above 0
    expect(free.description).toMatch(/Bid/);
  });
});
