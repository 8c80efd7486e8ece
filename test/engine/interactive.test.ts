import { afterEach, describe, expect, it } from 'vitest';
import { WsagFault } from '../../src/client/wsag-client.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { paper } from '../runtime/support.js';
import { at, planOf, secondsOf, simulatedServer, type SimulatedServer } from './run-time-support.js';

/**
 * Interactive jobs through the server (CrossBroker): a simulated clock, the paper site (30 s
 * to start a node) with four nodes kept prepared for sessions (a warm pool, w001..w004) and
 * one ordinary node. An interactive job starts within WSAG_INTERACTIVE_START_SECONDS (5 s) of
 * acceptance, on warm nodes (the hand-over alone, 1 s), or is refused at once; best-effort
 * work makes room and resumes after it; SLA work never does.
 */
let server: SimulatedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const warmSite = (parts: NonNullable<Parameters<typeof simulatedServer>[0]>['parts'] = {}) =>
  simulatedServer({
    parts,
    config: {
      cluster: {
        nodeGroups: [
          { count: 4, idPrefix: 'w', memoryGB: 16, cpus: 16, interconnect: 'InfiniBand', warm: true },
          { count: 1, idPrefix: 'n', memoryGB: 16, cpus: 16, interconnect: 'InfiniBand' },
        ],
        timing: paper,
      },
    },
  });

async function offer(
  s: SimulatedServer,
  template: string,
  settings: Array<{ location: string; value: string }>,
): Promise<string> {
  return offerFromTemplate((await s.client.templates()).find((t) => t.includes(`${template}-v1`)) as string, settings);
}
const interactive = (s: SimulatedServer, nodes: number, seconds = 600) =>
  offer(s, 'interactive-job', [
    { location: 'NodeCount', value: String(nodes) },
    { location: 'RuntimeEstimate', value: String(seconds) },
  ]);

describe('an interactive job', () => {
  it('on warm nodes full of best-effort work starts within the bound; the suspended job resumes after it and completes', async () => {
    const repository = new MemoryAgreementRepository();
    server = await warmSite({ repository, negotiationRepository: new MemoryNegotiationRepository() });
    const s = server;
    const batch = (
      await s.client.createAgreement(
        await offer(s, 'best-effort-job', [
          { location: 'NodeCount', value: '5' },
          { location: 'RuntimeEstimate', value: '3600' },
        ]),
      )
    ).agreementId;
    await s.advanceTo(600);
    expect((await s.client.state(batch)).serviceTerms[0]?.state).toBe('Ready'); // computing on all 5 nodes

    const session = (await s.client.createAgreement(await interactive(s, 2))).agreementId;
    const plan = await planOf(s);
    const booked = plan.bookings.find((b) => b.id === session);
    expect(secondsOf(booked?.start)).toBeGreaterThanOrEqual(600);
    expect(secondsOf(booked?.start)).toBeLessThanOrEqual(604);
    expect(booked?.nodeIds?.every((n) => n.startsWith('w'))).toBe(true);
    // The batch job gave way: what it ran stays, the rest comes after the session.
    const moved = plan.bookings.find((b) => b.id === batch);
    expect(moved?.segments.map((seg) => secondsOf(seg.start))).toEqual([0, secondsOf(booked?.end)]);
    await s.execution.idle();
    expect(s.rm.callsOf('stop', batch).map((c) => [c.reason, secondsOf(c.at)])).toEqual([['suspension', 600]]);

    await s.runUntilIdle();
    expect((await s.client.state(session)).state).toBe('Complete');
    expect((await s.client.state(session)).guaranteeTerms).toEqual([
      { termName: 'NodesThroughSession', state: 'Fulfilled' },
    ]);
    expect((await s.client.state(batch)).state).toBe('Complete');
    expect(s.rm.callsOf('start', batch).length).toBe(2); // started, then resumed after the session
    // The promise: the session from its hand-over (1 s after the booking starts) for its 600 s.
    const handedOver = (secondsOf(booked?.start) as number) + 1;
    const stored = await repository.get(session);
    expect(stored?.request).toMatchObject({
      interactive: true,
      window: { start: at(handedOver), end: at(handedOver + 600) },
    });
  });

  it('without a warm pool: refused at once, naming the preparation and the soonest start', async () => {
    server = await simulatedServer({ nodes: 4 });
    const refused = await server.client.createAgreement(await interactive(server, 1)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((refused as WsagFault).code).toBe('CannotSatisfy');
    expect((refused as WsagFault).description).toBe(
      'an interactive job starts within 5 s or not at all: its nodes need 31 s of preparation (node initialisation, storage, mount and hand-over) ' +
        'and no nodes are kept prepared for interactive sessions (WSAG_WARM_NODES); the soonest start the site can promise is 2026-11-23T00:00:31Z',
    );
    expect((await planOf(server)).bookings).toEqual([]);
  });

  it('on warm nodes full of sessions is refused at once with the reason; nothing changes', async () => {
    server = await warmSite();
    const s = server;
    const first = (await s.client.createAgreement(await interactive(s, 4, 7200))).agreementId;
    const before = JSON.stringify((await planOf(s)).bookings);
    const refused = await s.client.createAgreement(await interactive(s, 1)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(WsagFault);
    expect((refused as WsagFault).code).toBe('CannotSatisfy');
    expect((refused as WsagFault).description).toMatch(
      /an interactive job starts within 5 s or not at all: .*SLA jobs are never suspended for it/,
    );
    expect(JSON.stringify((await planOf(s)).bookings)).toBe(before);
    expect((await s.client.state(first)).state).toBe('Observed');
  });

  it('is not negotiated, held or left pending; and its terms are checked', async () => {
    server = await simulatedServer({ nodes: 4 });
    const s = server;
    const { negotiationId } = await s.client.initiateNegotiation();
    const answers = await s.client.negotiate(negotiationId, [
      negotiationOffer(await interactive(s, 1), { counterOfferTo: 'interactive-job-v1', state: 'Solicited' }),
    ]);
    expect(answers[0]?.state).toBe('Rejected');
    expect(answers[0]?.note).toMatch(
      /sla:Interactive starts the job within seconds or not at all, so it is not negotiated or held: send it with CreateAgreement/,
    );
    const pending = await s.client.createPendingAgreement(await interactive(s, 1)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((pending as WsagFault).code).toBe('InvalidTerms');
    const withDeadline = await offer(s, 'deadline-job', [
      { location: '//sla:ServiceLevel/sla:GuaranteeLevel', value: 'Legacy' },
    ]);
    const both = withDeadline.replace(
      /(<sla:ServiceLevel>[\s\S]*?)(<\/sla:ServiceLevel>)/,
      '$1<sla:Interactive>true</sla:Interactive>$2',
    );
    const invalid = await s.client.createAgreement(both).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((invalid as WsagFault).description).toMatch(
      /sla:Interactive starts the job within seconds of acceptance or not at all: leave out sla:Deadline and sla:EarliestStart/,
    );
  });
});
