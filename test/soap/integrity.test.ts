import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, type WsagFault } from '../../src/client/wsag-client.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * What the server signs, its plan can keep. An 8-node cluster with its clock at
 * 12:00 (the templates' defaults are relative to it).
 */
const now = new Date('2026-11-21T12:00:00Z');
let server: TestServer;
let client: WsagClient;
let templates: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 8 }, clock: { now: () => now } });
  client = new WsagClient(server.url);
  templates = Object.fromEntries(
    (await client.templates()).map((t) => [/<wsag:Name>([^<]+)</.exec(t)?.[1] as string, t]),
  );
});
afterAll(async () => server?.close());

const offer = (template: string, settings: OfferSetting[] = []) =>
  offerFromTemplate(templates[template] as string, settings);
const refusal = (offerXml: string) =>
  client.createAgreement(offerXml).then(
    () => undefined,
    (error: unknown) => error as WsagFault,
  );
const agreementOf = async (id: string) => (await client.agreements()).find((a) => a.id === id);

describe('guarantee objectives the booking would break are refused (cases 1 and 2)', () => {
  it('advance-reservation with NodeCount 2 promises the 2 nodes it books (the NodeCount Item sets both)', async () => {
    const xml = offer('advance-reservation', [{ location: 'NodeCount', value: '2' }]);
    expect(xml).toContain('<sla:NodesAvailable>2</sla:NodesAvailable>');
    const { agreementId } = await client.createAgreement(xml);
    expect((await agreementOf(agreementId))?.nodes).toBe(2);
    await client.terminate(agreementId);
  });

  it('sla:NodesAvailable above the booked nodes: CannotSatisfy naming the term, the objective and what is booked', async () => {
    const xml = offer('advance-reservation', [{ location: '//jsdl:TotalResourceCount/jsdl:Exact', value: '2' }]);
    expect(xml).toContain('<sla:NodesAvailable>8</sla:NodesAvailable>');
    const fault = await refusal(xml);
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toBe(
      'guarantee term "NodesThroughWindow" cannot be kept: sla:NodesAvailable 8, but 2 node(s) are booked (the offer asks for 2); promise at most 2',
    );
  });

  it('a one-hour job with sla:CompletedBy ten minutes from now: CannotSatisfy, though sla:Deadline is six hours away', async () => {
    const fault = await refusal(
      offer('deadline-job', [{ location: '//sla:CompletedBy', value: '2026-11-21T12:10:00Z' }]),
    );
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toMatch(/^deadline 2026-11-21T12:10:00Z cannot be met: /);
  });

  it('sla:CompletedBy already past: CannotSatisfy', async () => {
    const fault = await refusal(
      offer('deadline-job', [{ location: '//sla:CompletedBy', value: '2026-11-21T11:00:00Z' }]),
    );
    expect(fault?.code).toBe('CannotSatisfy');
  });

  it('a later sla:CompletedBy than the deadline is kept by planning to the deadline', async () => {
    const { agreementId } = await client.createAgreement(
      offer('deadline-job', [{ location: '//sla:CompletedBy', value: '2026-11-21T20:00:00Z' }]),
    );
    expect(new Date((await agreementOf(agreementId))?.end as string).getTime()).toBeLessThanOrEqual(
      new Date('2026-11-21T18:00:00Z').getTime(),
    );
    await client.terminate(agreementId);
  });

  it('sla:StartBy before the window: CannotSatisfy saying when the plan starts it', async () => {
    const xml = offer('advance-reservation')
      .replace(/<sla:NodesAvailable>8<\/sla:NodesAvailable>/, '<sla:StartBy>2026-11-21T13:00:00Z</sla:StartBy>')
      .replace('<wsag:KPIName>NodesAvailable</wsag:KPIName>', '<wsag:KPIName>StartTime</wsag:KPIName>');
    const fault = await refusal(xml);
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toBe(
      'guarantee term "NodesThroughWindow" cannot be kept: sla:StartBy 2026-11-21T13:00:00Z, but the plan starts the job at 2026-11-21T14:00:00Z at the earliest',
    );
  });

  it('a KPI the server does not measure is refused with UnsupportedTerm', async () => {
    const xml = offer('deadline-job').replace(/<sla:CompletedBy>[^<]*<\/sla:CompletedBy>/, '');
    const fault = await refusal(xml);
    expect(fault?.code).toBe('UnsupportedTerm');
    expect(fault?.description).toMatch(
      /^guarantee term "CompletionByDeadline": KPI "CompletionTime" has no objective this server measures/,
    );
  });

  it('in a negotiation the Rejected answer is followed by a counter-offer whose objective the plan keeps', async () => {
    const { negotiationId } = await client.initiateNegotiation();
    const xml = offer('advance-reservation', [{ location: '//jsdl:TotalResourceCount/jsdl:Exact', value: '3' }]);
    const answers = await client.negotiate(negotiationId, [
      negotiationOffer(xml, { counterOfferTo: 'advance-reservation-v1', state: 'Solicited' }),
    ]);
    expect(answers[0]?.state).toBe('Rejected');
    const kept = answers.find((a) => a.note?.includes('objectives the plan keeps'));
    expect(kept?.state).toBe('Advisory');
    expect(kept?.xml).toContain('<sla:NodesAvailable>3</sla:NodesAvailable>');
    const [held] = await client.negotiate(negotiationId, [
      negotiationOffer(kept?.xml as string, { counterOfferTo: kept?.offerId as string, state: 'Solicited' }),
    ]);
    expect(held?.state).toBe('Acceptable');
    await client.terminateNegotiation(negotiationId);
  });
});

describe('Background and best-effort jobs have templates (case 8)', () => {
  it('both are accepted on a cluster the reservation fills, and wait after it', async () => {
    const full = await client.createAgreement(
      offer('advance-reservation', [
        { location: 'NodeCount', value: '8' },
        { location: '//arp:StartTime', value: '2026-11-21T12:01:00Z' }, // a minute ahead: its nodes are prepared first
        { location: '//arp:EndTime', value: '2026-11-22T12:00:00Z' },
      ]),
    );
    for (const name of ['best-effort-job', 'background-job']) {
      const { agreementId } = await client.createAgreement(offer(name));
      const created = await agreementOf(agreementId);
      expect(created?.state).toBe('Observed');
      expect(new Date(created?.start as string).getTime()).toBeGreaterThanOrEqual(
        new Date('2026-11-22T12:00:00Z').getTime(),
      );
      await client.terminate(agreementId);
    }
    await client.terminate(full.agreementId);
  });

  it('refuse a time promise: a Background job with a deadline breaks the template', async () => {
    const xml = offer('background-job').replace(
      '<sla:GuaranteeLevel>',
      '<sla:Deadline>2026-11-22T12:00:00Z</sla:Deadline><sla:GuaranteeLevel>',
    );
    expect((await refusal(xml))?.code).toBe('CreationConstraintViolation');
  });
});

describe('terms that were parsed and ignored are enforced or refused (cases 4 and 5)', () => {
  const securityPolicy = (xml: string, ...requirements: string[]) =>
    xml.replace(
      /<sla:MigrationPolicy[^>]*?(\/>|><\/sla:MigrationPolicy>)/,
      (policy) =>
        `${policy}<sla:SecurityPolicy>${requirements.map((r) => `<sla:Requirement>${r}</sla:Requirement>`).join('')}</sla:SecurityPolicy>`,
    );

  it('sla:SecurityPolicy on a cluster whose nodes meet none: CannotSatisfy naming the policy', async () => {
    const xml = securityPolicy(offer('deadline-job'), 'HardenedNode');
    expect(xml).toContain('<sla:Requirement>HardenedNode</sla:Requirement>');
    const fault = await refusal(xml);
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toContain('(sla:SecurityPolicy HardenedNode: 0 node(s) of the cluster meet it)');
  });

  it('sla:SecurityPolicy is met by the nodes of the cluster description that have it, and only by them', async () => {
    const hardened = await startTestServer({
      config: {
        clusterNodes: undefined,
        cluster: {
          nodeGroups: [
            { count: 4, idPrefix: 'open', memoryGB: 64, cpus: 32, interconnect: 'InfiniBand', island: 'a' },
            {
              count: 4,
              idPrefix: 'hard',
              memoryGB: 64,
              cpus: 32,
              interconnect: 'InfiniBand',
              island: 'b',
              securityPolicies: ['HardenedNode', 'IsolatedPartition'],
            },
          ],
        },
        admins: ['anonymous'],
      },
      clock: { now: () => now },
    });
    try {
      const there = new WsagClient(hardened.url);
      const { agreementId } = await there.createAgreement(
        securityPolicy(
          offer('deadline-job', [{ location: 'NodeCount', value: '2' }]),
          'HardenedNode',
          'IsolatedPartition',
        ),
      );
      const plan = (await (await fetch(`${hardened.url}/api/plan`)).json()) as {
        bookings: Array<{ id: string; segments: Array<{ nodeIds: string[] }> }>;
      };
      const nodes = plan.bookings.find((b) => b.id === agreementId)?.segments.flatMap((s) => s.nodeIds) ?? [];
      expect(nodes.length).toBe(2);
      expect(nodes.every((n) => n.startsWith('hard'))).toBe(true);
      const more = await there
        .createAgreement(securityPolicy(offer('deadline-job', [{ location: 'NodeCount', value: '5' }]), 'HardenedNode'))
        .then(
          () => undefined,
          (e: unknown) => e as WsagFault,
        );
      expect(more?.description).toContain('(sla:SecurityPolicy HardenedNode: 4 node(s) of the cluster meet it)');
    } finally {
      await hardened.close();
    }
  });

  it('an sla:ChargeAccount naming an account that does not exist is refused with UnknownAccount naming it', async () => {
    const xml = offer('deadline-job').replace(
      /<sla:MigrationPolicy[^>]*?(\/>|><\/sla:MigrationPolicy>)/,
      (policy) =>
        `${policy}<sla:ChargeAccount><sla:Account>ACC-1</sla:Account><sla:VirtualOrganisation>astro</sla:VirtualOrganisation><sla:Group>pulsars</sla:Group></sla:ChargeAccount>`,
    );
    const fault = await refusal(xml);
    expect(fault?.code).toBe('UnknownAccount');
    expect(fault?.description).toBe('sla:ChargeAccount: account "ACC-1" does not exist here');
  });

  const inResources = (xml: string, first: string) => xml.replace('<jsdl:Resources>', `<jsdl:Resources>${first}`);
  const hosts = (...names: string[]) =>
    `<jsdl:CandidateHosts>${names.map((n) => `<jsdl:HostName>${n}</jsdl:HostName>`).join('')}</jsdl:CandidateHosts>`;

  it('jsdl:CandidateHosts places the job on those nodes only, and names them when they are too few', async () => {
    const operated = await startTestServer({
      config: { clusterNodes: 8, admins: ['anonymous'] },
      clock: { now: () => now },
    });
    try {
      const there = new WsagClient(operated.url);
      const { agreementId } = await there.createAgreement(
        inResources(offer('deadline-job', [{ location: 'NodeCount', value: '2' }]), hosts('n007', 'n003')),
      );
      const plan = (await (await fetch(`${operated.url}/api/plan`)).json()) as {
        bookings: Array<{ id: string; segments: Array<{ nodeIds: string[] }> }>;
      };
      const nodes = plan.bookings.find((b) => b.id === agreementId)?.segments.flatMap((s) => s.nodeIds) ?? [];
      expect([...nodes].sort()).toEqual(['n003', 'n007']);
    } finally {
      await operated.close();
    }
    const fault = await refusal(
      inResources(
        offer('deadline-job', [{ location: 'NodeCount', value: '2' }]),
        hosts('n002', 'elsewhere.example.org'),
      ),
    );
    expect(fault?.code).toBe('CannotSatisfy');
    expect(fault?.description).toContain(
      '(jsdl:CandidateHosts elsewhere.example.org, n002: 1 of them are nodes of the cluster)',
    );
  });

  it.each([
    [
      'jsdl:IndividualCPUSpeed',
      'jsdl:IndividualCPUSpeed in jsdl:Resources',
      (xml: string) =>
        xml.replace(
          '<jsdl:IndividualCPUCount>',
          '<jsdl:IndividualCPUSpeed><jsdl:Exact>3000000000</jsdl:Exact></jsdl:IndividualCPUSpeed><jsdl:IndividualCPUCount>',
        ),
    ],
    [
      'jsdl:TotalDiskSpace',
      'jsdl:TotalDiskSpace in jsdl:Resources',
      (xml: string) =>
        xml.replace(
          '<jsdl:TotalResourceCount>',
          '<jsdl:TotalDiskSpace><jsdl:Exact>1</jsdl:Exact></jsdl:TotalDiskSpace><jsdl:TotalResourceCount>',
        ),
    ],
    [
      'sla:Redundancy',
      'sla:Redundancy Mirrored in sla:Storage',
      (xml: string) =>
        xml.replace(
          '</sla:Interconnect>',
          '</sla:Interconnect><sla:Storage><sla:SizeGB>10</sla:SizeGB><sla:Redundancy>Mirrored</sla:Redundancy></sla:Storage>',
        ),
    ],
    [
      'jsdl:DataStaging',
      'jsdl:DataStaging in jsdl:JobDescription',
      (xml: string) =>
        xml.replace(
          '</jsdl:Resources>',
          '</jsdl:Resources><jsdl:DataStaging><jsdl:FileName>in.dat</jsdl:FileName><jsdl:CreationFlag>overwrite</jsdl:CreationFlag></jsdl:DataStaging>',
        ),
    ],
  ])('%s is refused with UnsupportedTerm naming it, never ignored', async (element, named, edit) => {
    const xml = edit(offer('deadline-job'));
    expect(xml).toContain(`<${element}>`);
    const fault = await refusal(xml);
    expect(fault?.code).toBe('UnsupportedTerm');
    expect(fault?.description.startsWith(`${named} is not supported by this server (it would be ignored)`)).toBe(true);
  });

  it('a jsdl-posix:POSIXApplication is refused by a server whose executor runs no applications (only Slurm runs them)', async () => {
    const application =
      '<jsdl:Application xmlns:jsdl-posix="http://schemas.ggf.org/jsdl/2005/11/jsdl-posix"><jsdl-posix:POSIXApplication><jsdl-posix:Executable>/opt/apps/x</jsdl-posix:Executable></jsdl-posix:POSIXApplication></jsdl:Application>';
    const fault = await refusal(offer('deadline-job').replace('<jsdl:Resources>', `${application}<jsdl:Resources>`));
    expect(fault?.code).toBe('UnsupportedTerm');
    expect(fault?.description).toContain('this server runs no applications');
  });

  const qualified = (xml: string, condition: string) =>
    xml.replace(
      '<wsag:ServiceLevelObjective>',
      `<wsag:QualifyingCondition>${condition}</wsag:QualifyingCondition><wsag:ServiceLevelObjective>`,
    );

  it('wsag:QualifyingCondition sla:SubmittedBefore is evaluated: a reservation two hours ahead meets PT1H, not PT12H', async () => {
    const reservation = offer('advance-reservation', [{ location: 'NodeCount', value: '1' }]);
    const late = await refusal(qualified(reservation, '<sla:SubmittedBefore>PT12H</sla:SubmittedBefore>'));
    expect(late?.code).toBe('CannotSatisfy');
    expect(late?.description).toContain(
      'guarantee term "NodesThroughWindow" cannot be kept: its wsag:QualifyingCondition sla:SubmittedBefore PT12H does not hold: the job starts at 2026-11-21T14:00:00Z, 2 h after this offer',
    );
    const { agreementId } = await client.createAgreement(
      qualified(reservation, '<sla:SubmittedBefore>PT1H</sla:SubmittedBefore>'),
    );
    expect((await agreementOf(agreementId))?.state).toBe('Observed');
    await client.terminate(agreementId);
  });

  it('a wsag:QualifyingCondition the server does not evaluate is refused with UnsupportedTerm', async () => {
    const fault = await refusal(
      qualified(
        offer('advance-reservation', [{ location: 'NodeCount', value: '1' }]),
        '<weather xmlns="urn:example">sunny</weather>',
      ),
    );
    expect(fault?.code).toBe('UnsupportedTerm');
    expect(fault?.description).toBe(
      'guarantee term "NodesThroughWindow": its wsag:QualifyingCondition holds no condition this server evaluates (it evaluates sla:SubmittedBefore)',
    );
  });

  it('a penalty whose wsag:ValueExpression holds anything but sla:Amount and sla:Cap is refused, not left without an amount', async () => {
    const xml = offer('deadline-job').replace(
      /<sla:Amount>([^<]*)<\/sla:Amount>/,
      '<sla:NodesAvailable>$1</sla:NodesAvailable>',
    );
    expect(xml).toContain('<wsag:ValueExpression><sla:NodesAvailable>');
    const fault = await refusal(xml);
    expect(fault?.code).toBe('UnsupportedTerm');
    expect(fault?.description).toBe(
      'wsag:Penalty/wsag:ValueExpression holds {http://schemas.wsag-server.org/2026/11/sla-terms}NodesAvailable; this server evaluates sla:Amount and sla:Cap there',
    );
  });

  it.each(['NonBinding', 'Preparatory'])(
    'CreateAgreement with sla:RequestKind %s is refused with InvalidTerms, nothing booked',
    async (kind) => {
      const before = (await client.agreements()).length;
      const fault = await refusal(
        offer('deadline-job').replace(
          '<sla:RequestKind>Binding</sla:RequestKind>',
          `<sla:RequestKind>${kind}</sla:RequestKind>`,
        ),
      );
      expect(fault?.code).toBe('InvalidTerms');
      expect(fault?.description).toMatch(
        new RegExp(`^sla:RequestKind ${kind} asks .* but CreateAgreement makes a binding agreement`),
      );
      expect((await client.agreements()).length).toBe(before);
    },
  );
});

describe('wsag:ExpirationTime ends the agreement (case 3)', () => {
  const expiring = (xml: string, at: string) =>
    xml.replace('</wsag:ServiceProvider>', `</wsag:ServiceProvider><wsag:ExpirationTime>${at}</wsag:ExpirationTime>`);
  const whole = (at: string) => expiring(offer('advance-reservation', [{ location: 'NodeCount', value: '8' }]), at);

  it('at that time: Complete, service terms Completed, capacity released', async () => {
    let clock = new Date('2026-11-21T12:00:00Z');
    const own = await startTestServer({ config: { clusterNodes: 8 }, clock: { now: () => clock } });
    try {
      const there = new WsagClient(own.url);
      const xml = offerFromTemplate(
        (await there.templates()).find((t) => t.includes('advance-reservation-v1')) as string,
        [{ location: 'NodeCount', value: '8' }],
      );
      const { agreementId } = await there.createAgreement(expiring(xml, '2026-11-21T12:00:40Z'));
      expect((await there.state(agreementId)).state).toBe('Observed');
      const full = await there.createAgreement(xml).then(
        () => 'accepted',
        (e: WsagFault) => e.code,
      );
      expect(full).toBe('CannotSatisfy');
      clock = new Date('2026-11-21T12:00:50Z');
      await expect.poll(async () => (await there.state(agreementId)).state, { timeout: 5000 }).toBe('Complete');
      expect((await there.state(agreementId)).serviceTerms.map((t) => t.state)).toEqual(['Completed', 'Completed']);
      const again = await there.createAgreement(xml);
      expect((await there.state(again.agreementId)).state).toBe('Observed');
    } finally {
      await own.close();
    }
  });

  it('an ExpirationTime already past is refused with InvalidTerms', async () => {
    const fault = await refusal(whole('2026-11-21T11:59:00Z'));
    expect(fault?.code).toBe('InvalidTerms');
    expect(fault?.description).toBe(
      'wsag:ExpirationTime 2026-11-21T11:59:00Z has already passed (now 2026-11-21T12:00:00Z): the agreement would end before it is made',
    );
  });
});
