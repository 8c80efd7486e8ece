import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault, type NegotiationOfferInfo } from '../../src/client/wsag-client.js';
import { acceptingOffer, negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * What the planning scheduler says on the wire: a request it cannot serve is refused with
 * its reason (CannotSatisfy), and in a negotiation the Rejected counter-offer is followed by
 * Advisory counter-offers it could serve instead (the same window later, fewer nodes, a
 * later deadline), each of which can then be solicited and accepted.
 *
 * An 8-node cluster, its clock fixed at 12:00; 5 nodes are reserved from 14:00 to 16:00.
 */
const now = new Date('2026-11-21T12:00:00Z');
let server: TestServer;
let client: WsagClient;
let reservationTemplate: string;
let deadlineTemplate: string;

const window = (from: string, to: string): OfferSetting[] => [
  {
    location:
      "/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:StartTime",
    value: from,
  },
  {
    location:
      "/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:EndTime",
    value: to,
  },
];
const reservation = (nodes: number, settings: OfferSetting[] = []) =>
  offerFromTemplate(reservationTemplate, [{ location: 'NodeCount', value: String(nodes) }, ...settings]);

beforeAll(async () => {
  let n = 0;
  server = await startTestServer({
    config: { clusterNodes: 8, admins: ['anonymous'] },
    clock: { now: () => now },
    ids: { next: () => `id-${++n}` },
  });
  client = new WsagClient(server.url);
  const templates = await client.templates();
  reservationTemplate = templates.find((t) => t.includes('advance-reservation-v1')) as string;
  deadlineTemplate = templates.find((t) => t.includes('deadline-job-v1')) as string;
  await client.createAgreement(reservation(5)); // the template's window: 14:00 to 16:00
});
afterAll(async () => server?.close());

async function solicit(
  offerXml: string,
  counterOfferTo: string,
  negotiationId?: string,
): Promise<{ negotiationId: string; answers: NegotiationOfferInfo[] }> {
  const id = negotiationId ?? (await client.initiateNegotiation()).negotiationId;
  const answers = await client.negotiate(id, [negotiationOffer(offerXml, { counterOfferTo, state: 'Solicited' })]);
  return { negotiationId: id, answers };
}

describe('CreateAgreement for more nodes than are free in the window', () => {
  it("is refused with CannotSatisfy and the scheduler's reason", async () => {
    const refused = await client.createAgreement(reservation(8)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(WsagFault);
    expect((refused as WsagFault).code).toBe('CannotSatisfy');
    expect((refused as WsagFault).description).toBe(
      '8 nodes are not free from 2026-11-21T14:00:00Z to 2026-11-21T16:00:00Z: 3 of 8 nodes are free throughout that window ' +
        'with its preparation and release (2026-11-21T13:59:24Z to 2026-11-21T16:00:15Z)',
    );
  });
});

describe('a Solicited offer the scheduler cannot serve', () => {
  it('is Rejected with the reason, followed by Advisory counter-offers: the same window later, and fewer nodes', async () => {
    const { negotiationId, answers } = await solicit(reservation(8), 'advance-reservation-v1');
    expect(answers.map((a) => [a.state, a.counterOfferTo])).toEqual([
      ['Rejected', answers[0]?.counterOfferTo],
      ['Advisory', answers[0]?.counterOfferTo],
      ['Advisory', answers[0]?.counterOfferTo],
    ]);
    const [rejected, later, fewer] = answers as [NegotiationOfferInfo, NegotiationOfferInfo, NegotiationOfferInfo];
    expect(rejected.note).toBe(
      '8 nodes are not free from 2026-11-21T14:00:00Z to 2026-11-21T16:00:00Z: 3 of 8 nodes are free throughout that window ' +
        'with its preparation and release (2026-11-21T13:59:24Z to 2026-11-21T16:00:15Z); earliest feasible start for 8 nodes: 2026-11-21T16:00:51Z (ends 2026-11-21T18:00:51Z)',
    );
    // The same window later, on all 8 nodes: once the others' nodes are released (16:00:15) and prepared again (36 s).
    expect(later.note).toBe(
      'counter-offer (later start): the same window moved to start at 2026-11-21T16:00:51Z; 8 nodes from 2026-11-21T16:00:51Z to 2026-11-21T18:00:51Z; solicit it to hold the capacity',
    );
    expect(later.slot).toEqual({ nodes: 8, start: '2026-11-21T16:00:51Z', end: '2026-11-21T18:00:51Z' });
    expect(later.price).toEqual({ amount: 16, currency: 'EUR' });
    expect(later.xml).toContain('<arp:StartTime>2026-11-21T16:00:51Z</arp:StartTime>');
    expect(later.xml).toContain('<arp:EndTime>2026-11-21T18:00:51Z</arp:EndTime>');
    // The same window, on the 3 nodes that are free: the node count and the promise both say 3.
    expect(fewer.note).toBe(
      'counter-offer (fewer nodes): 3 nodes instead of 8; 3 nodes from 2026-11-21T14:00:00Z to 2026-11-21T16:00:00Z; solicit it to hold the capacity',
    );
    expect(fewer.slot).toEqual({ nodes: 3, start: '2026-11-21T14:00:00Z', end: '2026-11-21T16:00:00Z' });
    // 5 of the 8 nodes are booked in that window (load 0.625): the default price curve's factor there is
    // 1 + 0.5 x (0.625 - 0.5) / (0.8 - 0.5) = 1.2083, so 3 nodes x 2 h x 1 EUR cost 7.25 EUR (docs/pricing.md).
    expect(fewer.price).toEqual({ amount: 7.25, currency: 'EUR' });
    expect(fewer.xml).toContain('<jsdl:TotalResourceCount><jsdl:Exact>3</jsdl:Exact></jsdl:TotalResourceCount>');
    expect(fewer.xml).toContain('<sla:NodesAvailable>3</sla:NodesAvailable>');
    // Nothing is held for any of them.
    expect((await client.plan()).bookings.filter((b) => b.kind === 'hold')).toEqual([]);

    // Each counter-offer, solicited as it is, is Acceptable: it holds its capacity.
    const [heldFewer] = (await solicit(fewer.xml, fewer.offerId, negotiationId)).answers;
    expect(heldFewer).toMatchObject({ state: 'Acceptable', slot: fewer.slot, price: fewer.price });
    const [heldLater] = (await solicit(later.xml, later.offerId, negotiationId)).answers;
    expect(heldLater).toMatchObject({ state: 'Acceptable', slot: later.slot });

    // Accepting one makes it the agreement (the other hold of the negotiation is released).
    const agreement = await client.createAgreement(acceptingOffer(heldFewer?.xml as string));
    const stored = await server.repository.get(agreement.agreementId);
    expect(stored).toMatchObject({
      state: 'Observed',
      request: { nodeCount: 3 },
      allocation: { nodes: 3, promised: { start: new Date('2026-11-21T14:00:00Z') } },
    });
    expect((await client.plan()).bookings.filter((b) => b.kind === 'hold')).toEqual([]);
    await client.terminate(agreement.agreementId);
  });

  it('a Legacy deadline likelier to break than to hold is refused, naming its risk and what to ask for', async () => {
    // 8 nodes for 120 h at 0.02 failures a node and day: 0.8 failures expected, a 55 % risk.
    const longJob = (level: string) =>
      offerFromTemplate(deadlineTemplate, [
        { location: 'NodeCount', value: '8' },
        { location: 'RuntimeEstimate', value: String(120 * 3600) },
        { location: 'GuaranteeLevel', value: level },
        { location: '//sla:ServiceLevel/sla:Deadline', value: '2026-12-05T00:00:00Z' },
        { location: '//sla:CompletedBy', value: '2026-12-05T00:00:00Z' },
      ]);
    const job = longJob('Legacy');
    const refused = await client.createAgreement(job).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((refused as WsagFault).code).toBe('CannotSatisfy');
    expect((refused as WsagFault).description).toBe(
      'a Legacy deadline has no fault tolerance: a failure of any of its 8 node(s) during its 120 h run breaks it; ' +
        'at the 0.020 failures per node and day this site observes the risk is 55 %, above the 50 % it accepts ' +
        '(promiseRiskLimit): ask for Standard or a higher level (checkpointed), or fewer nodes or a shorter run',
    );
    const { answers } = await solicit(job, 'deadline-job-v1');
    expect(answers[0]?.state).toBe('Rejected');
    expect(answers[0]?.note).toContain('the risk is 55 %');
    // The same job at Standard is checkpointed: no risk refusal.
    const accepted = await client.createAgreement(longJob('Standard'));
    await client.terminate(accepted.agreementId);
  });

  it('a deadline that cannot be met gets a counter-offer with a later deadline, which can be held', async () => {
    // With the 5 nodes from 14:00, all 8 nodes are reserved from 12:30 to 16:00 (the first window ends a minute
    // early: its nodes are released and prepared for the next): the job cannot start before 16:00:15, their release.
    const first = await client.createAgreement(reservation(8, window('2026-11-21T12:30:00Z', '2026-11-21T13:59:00Z')));
    const second = await client.createAgreement(reservation(3));

    const job = offerFromTemplate(deadlineTemplate, [
      { location: '//sla:ServiceLevel/sla:Deadline', value: '2026-11-21T14:00:00Z' },
      { location: '//sla:CompletedBy', value: '2026-11-21T14:00:00Z' },
    ]);
    const refused = await client.createAgreement(job).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((refused as WsagFault).code).toBe('CannotSatisfy');
    expect((refused as WsagFault).description).toMatch(
      /^deadline 2026-11-21T14:00:00Z cannot be met: earliest worst-case completion with \d+ checkpoints and 1 covered outage is 2026-11-21T17:\d\d:\d\dZ on 4 nodes$/,
    );

    const { negotiationId, answers } = await solicit(job, 'deadline-job-v1');
    expect(answers.map((a) => a.state)).toEqual(['Rejected', 'Advisory']);
    const [rejected, laterDeadline] = answers as [NegotiationOfferInfo, NegotiationOfferInfo];
    expect(rejected.note).toMatch(/^deadline 2026-11-21T14:00:00Z cannot be met: /);
    expect(laterDeadline.note).toMatch(
      /^counter-offer \(later deadline\): deadline 2026-11-21T17:\d\d:\d\dZ instead of 2026-11-21T14:00:00Z; 4 nodes from 2026-11-21T16:00:15Z to /,
    );
    const deadline = /<sla:Deadline>([^<]+)</.exec(laterDeadline.xml)?.[1] as string;
    expect(deadline).toMatch(/^2026-11-21T17:\d\d:\d\dZ$/);
    expect(laterDeadline.xml).toContain(`<sla:CompletedBy>${deadline}</sla:CompletedBy>`);

    const [held] = (await solicit(laterDeadline.xml, laterDeadline.offerId, negotiationId)).answers;
    expect(held).toMatchObject({ state: 'Acceptable', slot: { nodes: 4, start: '2026-11-21T16:00:15Z' } });
    await client.terminateNegotiation(negotiationId);
    await client.terminate(first.agreementId);
    await client.terminate(second.agreementId);
  });
});
