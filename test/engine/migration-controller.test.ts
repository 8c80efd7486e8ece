import { describe, expect, it } from 'vitest';
import type { MigrationRecord } from '../../src/domain/agreement.js';
import type { GuaranteeTerm, ServiceRequest } from '../../src/domain/terms.js';
import { compatibleVersion, libraryMismatch } from '../../src/engine/migration/migration-compatibility.js';
import {
  applyCustomerPolicy,
  buildCompatibilityProfiles,
  filterByBandwidth,
  matchTargets,
  MigrationController,
  migrationSteps,
  selectCandidates,
  startRun,
  type MigrationControllerDeps,
  type MigrationRun,
} from '../../src/engine/migration/migration-controller.js';
import type { MigrationJob } from '../../src/engine/migration/migration-jobs.js';
import { penaltyAtStake } from '../../src/engine/migration/migration-penalty.js';
import type { ProblemList } from '../../src/engine/migration/migration-schedule.js';
import {
  defaultMigrationPolicy,
  type LocalSite,
  type Peer,
  type PeersConfig,
  type ProviderMigrationPolicy,
} from '../../src/engine/migration/peers.js';
import type {
  CheckpointData,
  PeerProviders,
  PeerQuote,
  PeerQuoteAnswer,
  PeerRequest,
  RemoteAgreement,
} from '../../src/engine/migration/ports.js';

const now = new Date('2026-11-23T12:00:00Z');
const at = (hours: number) => new Date(now.getTime() + hours * 3600_000);
const horizonSeconds = 4 * 3600;

const local: LocalSite = {
  domain: 'pc2',
  operatingSystem: 'LINUX',
  architecture: 'x86_64',
  checkpointSystem: 'BLCR 0.8.5',
};

function peer(name: string, over: Partial<Peer> = {}): Peer {
  return {
    name,
    factoryUrl: `http://${name}.example.org`,
    kind: 'wsag-server',
    bandwidthMBps: 100,
    domain: 'pc2',
    profile: {
      operatingSystems: ['LINUX'],
      architectures: ['x86_64'],
      checkpointSystems: ['BLCR 0.8.5'],
      libraries: [{ name: 'libmpi.so', version: '4.1.5' }],
    },
    ...over,
  };
}

function request(over: Partial<ServiceRequest> = {}): ServiceRequest {
  return {
    nodeCount: 4,
    libraries: [],
    runtimeSeconds: 3600,
    deadline: at(3),
    requestKind: 'Binding',
    guaranteeLevel: 'Standard',
    maxCoveredOutages: 1,
    migrationPolicy: { scope: 'Grid', include: [], exclude: [] },
    securityPolicy: [],
    ...over,
  };
}

/** deadline-job's guarantee: complete by the deadline, 50 EUR for every started 30 minutes late, at most 500 EUR. */
const completion = (deadline: Date): GuaranteeTerm => ({
  name: 'CompletionByDeadline',
  serviceScope: ['ComputeJob'],
  kpiName: 'CompletionTime',
  target: { kind: 'CompletedBy', at: deadline },
  penalties: [{ assessmentInterval: { timeInterval: 'PT30M' }, valueUnit: 'EUR', amount: 50, cap: 500 }],
  rewards: [],
});

/** A deadline job that has run: a 1 GB checkpoint, an hour left to resume, due in three hours. */
function job(id: string, over: Partial<MigrationJob> = {}): MigrationJob {
  const req = over.request ?? request();
  return {
    agreementId: id,
    templateName: 'deadline-job',
    request: req,
    guaranteeTerms: [completion(req.deadline ?? at(3))],
    kind: 'Deadline',
    running: false,
    value: 1,
    checkpointMB: 1024,
    remainingRuntimeSeconds: 1800,
    resumeSeconds: 3600,
    latestStart: at(2),
    ...over,
  };
}

/** Peers answering with fixed prices (EUR) or refusals; every call is written down. */
class FakePeers implements PeerProviders {
  readonly calls: string[] = [];
  readonly asked: Array<{ peer: string; request: PeerRequest }> = [];
  private remote = 0;
  constructor(
    private readonly answers: Record<string, number | string>,
    private readonly failTransferTo: string[] = [],
  ) {}

  async quote(peer: Peer, request: PeerRequest): Promise<PeerQuoteAnswer> {
    this.calls.push(`quote ${peer.name}`);
    this.asked.push({ peer: peer.name, request });
    const answer = this.answers[peer.name];
    if (typeof answer !== 'number')
      return { quoted: false, reason: `${peer.name}: rejected: ${answer ?? 'no capacity'}` };
    return {
      quoted: true,
      quote: {
        peer: peer.name,
        negotiationId: `neg-${peer.name}`,
        negotiationAddress: `${peer.factoryUrl}/wsag/Negotiation`,
        offerId: 'N-2',
        price: { amount: answer, currency: 'EUR' },
        offer: '<offer/>',
      },
    };
  }
  async accept(peer: Peer, quote: PeerQuote): Promise<RemoteAgreement> {
    this.calls.push(`accept ${peer.name} ${quote.offerId}`);
    this.remote += 1;
    return { peer: peer.name, agreementId: `remote-${this.remote}`, address: `${peer.factoryUrl}/wsag/Agreement` };
  }
  async decline(peer: Peer): Promise<void> {
    this.calls.push(`decline ${peer.name}`);
  }
  async transferCheckpoint(peer: Peer, remoteAgreementId: string, checkpoint: CheckpointData): Promise<void> {
    this.calls.push(`transfer ${peer.name} ${remoteAgreementId} ${checkpoint.sizeBytes}`);
    if (this.failTransferTo.includes(peer.name)) throw new Error('connection reset');
  }
  async terminate(peer: Peer, remote: RemoteAgreement): Promise<void> {
    this.calls.push(`terminate ${peer.name} ${remote.agreementId}`);
  }
  reserveStandby(peer: Peer, request: PeerRequest): Promise<PeerQuoteAnswer> {
    return this.quote(peer, request);
  }
  bindStandby(peer: Peer, hold: PeerQuote): Promise<RemoteAgreement> {
    return this.accept(peer, hold);
  }
}

/**
 * A schedule whose P is given; `frees` says which problems a job's departure solves (the
 * copy of the schedule in step 7); releasing a job does the same to the live P.
 */
class FakeSchedule {
  constructor(
    private problems: ProblemList,
    private readonly frees: Record<string, string[]> = {},
  ) {}
  problematic(): ProblemList {
    return [...this.problems];
  }
  problematicWithout(removed: readonly string[]): ProblemList {
    const solved = new Set(removed.flatMap((id) => this.frees[id] ?? []));
    return this.problems.filter((p) => !solved.has(p.id) && !removed.includes(p.id));
  }
  release(id: string): void {
    this.problems = this.problematicWithout([id]);
  }
}

function setUp(options: {
  peers: Peer[];
  answers: Record<string, number | string>;
  problems: string[];
  frees?: Record<string, string[]>;
  policy?: Partial<ProviderMigrationPolicy>;
  failTransferTo?: string[];
}) {
  const providers = new FakePeers(options.answers, options.failTransferTo);
  const schedule = new FakeSchedule(
    options.problems.map((id) => ({ id, reason: 'node n03 failed at 2026-11-23T11:30:00Z' })),
    options.frees,
  );
  const records = new Map<string, MigrationRecord>();
  const released: string[] = [];
  const config: PeersConfig = { local, policy: { ...defaultMigrationPolicy, ...options.policy }, peers: options.peers };
  const deps: MigrationControllerDeps = {
    peers: config,
    providers,
    timing: { problemHorizonSeconds: horizonSeconds },
    schedule,
    currency: 'EUR',
    providerName: 'site-a',
    checkpointOf: async (id) => (id.startsWith('fresh') ? undefined : { bytes: new Uint8Array(16), sizeBytes: 16 }),
    release: async (id) => {
      released.push(id);
      schedule.release(id);
    },
    record: async (id, migration) => {
      records.set(id, migration);
    },
  };
  return { deps, providers, schedule, records, released, controller: new MigrationController(deps) };
}

/** A run with the steps before `step` done, to test one step alone. */
async function runUpTo(stepName: string, jobs: MigrationJob[], deps: MigrationControllerDeps): Promise<MigrationRun> {
  const run = startRun(jobs, now, deps);
  for (const step of migrationSteps) {
    if (step.name === stepName) break;
    await step.run(run, deps);
  }
  return run;
}
const caseOf = (run: MigrationRun, id: string) => run.cases.find((c) => c.job.agreementId === id);
const targetsOf = (run: MigrationRun, id: string) => caseOf(run, id)?.targets.map((t) => t.name);

describe('the penalty a problematic job would pay if it stayed', () => {
  it('is assessed from its business value list for the lateness after a repair: (4 h horizon + 1 h left) - 3 h = 2 h late = 4 x 50 EUR', () => {
    expect(penaltyAtStake(job('a'), now, horizonSeconds, 'EUR')).toEqual({ amount: 200, currency: 'EUR' });
  });

  it('is capped as the term says, and nothing for Background jobs or objectives a move does not change', () => {
    const late = job('b', { request: request({ deadline: at(-4) }), guaranteeTerms: [completion(at(-4))] });
    expect(penaltyAtStake(late, now, horizonSeconds, 'EUR').amount).toBe(500); // 9 h late: 18 x 50 = 900, capped at 500
    expect(
      penaltyAtStake(job('c', { request: request({ guaranteeLevel: 'Background' }) }), now, horizonSeconds, 'EUR')
        .amount,
    ).toBe(0);
    const checkpointTerm: GuaranteeTerm = {
      ...completion(at(3)),
      target: { kind: 'MaxCheckpointInterval', interval: 'PT1H' },
    };
    expect(penaltyAtStake(job('d', { guaranteeTerms: [checkpointTerm] }), now, horizonSeconds, 'EUR').amount).toBe(0);
  });

  it('a reservation loses its whole window: a count-based penalty is charged once', () => {
    const window = { start: at(1), end: at(3) };
    const nodes: GuaranteeTerm = {
      name: 'NodesThroughWindow',
      serviceScope: ['Reservation'],
      kpiName: 'NodesAvailable',
      target: { kind: 'NodesAvailable', nodes: 4 },
      penalties: [{ assessmentInterval: { count: 1 }, valueUnit: 'EUR', amount: 200 }],
      rewards: [],
    };
    const reservation = job('r', {
      kind: 'Reservation',
      request: request({ window, deadline: undefined }),
      guaranteeTerms: [nodes],
    });
    expect(penaltyAtStake(reservation, now, horizonSeconds, 'EUR')).toEqual({ amount: 200, currency: 'EUR' });
  });
});

describe("step 1: candidates by the provider's policy", () => {
  it('problematic jobs first, then other jobs least valuable first; refused problematic jobs are reported, others left out', async () => {
    const { deps } = setUp({
      peers: [peer('b')],
      answers: {},
      problems: ['p1', 'p2'],
      policy: { excludeAgreements: ['g-excluded'] },
    });
    const jobs = [
      job('g-rich', { value: 9 }),
      job('p2', { value: 1 }),
      job('g-poor', { value: 2 }),
      job('p1', { value: 5 }),
      job('g-excluded', { value: 1 }),
      job('g-running-reservation', {
        kind: 'Reservation',
        running: true,
        request: request({ window: { start: at(-1), end: at(1) }, deadline: undefined }),
      }),
      job('g-best-effort', { kind: 'BestEffort' }),
    ];
    const run = startRun(jobs, now, deps);
    await selectCandidates.run(run, deps);
    expect(run.cases.map((c) => c.job.agreementId)).toEqual(['p1', 'p2', 'g-poor', 'g-rich']);
    expect(run.cases.filter((c) => c.problematic).map((c) => c.job.agreementId)).toEqual(['p1', 'p2']);
  });

  it('a problematic job of a level the provider does not migrate is reported with the rule', async () => {
    const { deps } = setUp({ peers: [peer('b')], answers: {}, problems: ['p'] });
    const run = startRun([job('p', { request: request({ guaranteeLevel: 'Legacy' }) })], now, deps);
    await selectCandidates.run(run, deps);
    expect(caseOf(run, 'p')?.report).toMatchObject({
      reason: 'provider-policy',
      detail: 'not migrated: the provider migrates only Standard, Enhanced, Full jobs, not Legacy',
    });
  });

  it('drops peers outside the domain when the provider keeps jobs inside it, and Grid peers for checkpoints above the limit', async () => {
    const { deps } = setUp({
      peers: [peer('inside'), peer('grid', { domain: 'elsewhere' })],
      answers: {},
      problems: ['p', 'q'],
      policy: { maxGridCheckpointMB: 512 },
    });
    const run = startRun([job('p'), job('q', { checkpointMB: 100 })], now, deps);
    await selectCandidates.run(run, deps);
    expect(targetsOf(run, 'p')).toEqual(['inside']);
    expect(caseOf(run, 'p')?.report.dropped).toEqual([
      {
        peer: 'grid',
        step: 'selectCandidates',
        reason:
          "outside our administrative domain, and the checkpoint (1024 MB) exceeds the provider's maximum for Grid peers (512 MB)",
      },
    ]);
    expect(targetsOf(run, 'q')).toEqual(['inside', 'grid']);
  });
});

describe("step 2: the customer's policy overrules", () => {
  it('Scope None forbids migration whatever the provider allows', async () => {
    const { deps } = setUp({ peers: [peer('b')], answers: {}, problems: ['p'] });
    const run = await runUpTo(
      'applyCustomerPolicy',
      [job('p', { request: request({ migrationPolicy: { scope: 'None', include: [], exclude: [] } }) })],
      deps,
    );
    await applyCustomerPolicy.run(run, deps);
    expect(caseOf(run, 'p')?.report).toMatchObject({
      reason: 'customer-policy',
      detail:
        'not migrated: the SLA forbids migration (sla:MigrationPolicy Scope None): prohibition overrules admission',
    });
  });

  it('AdministrativeDomain keeps only peers of our domain; exclude and include lists name peers, domains or URLs', async () => {
    const peers = [peer('b'), peer('c'), peer('grid', { domain: 'site-x' })];
    const { deps } = setUp({ peers, answers: {}, problems: ['domain-only', 'not-c', 'only-grid'] });
    const run = await runUpTo(
      'applyCustomerPolicy',
      [
        job('domain-only', {
          request: request({ migrationPolicy: { scope: 'AdministrativeDomain', include: [], exclude: [] } }),
        }),
        job('not-c', {
          request: request({ migrationPolicy: { scope: 'Grid', include: [], exclude: ['http://c.example.org'] } }),
        }),
        job('only-grid', {
          request: request({ migrationPolicy: { scope: 'Grid', include: ['site-x'], exclude: [] } }),
        }),
      ],
      deps,
    );
    await applyCustomerPolicy.run(run, deps);
    expect(targetsOf(run, 'domain-only')).toEqual(['b', 'c']);
    expect(caseOf(run, 'domain-only')?.report.dropped[0]?.reason).toBe(
      'outside our administrative domain (pc2), and the SLA allows migration only inside it',
    );
    expect(targetsOf(run, 'not-c')).toEqual(['b', 'grid']);
    expect(targetsOf(run, 'only-grid')).toEqual(['grid']);
  });

  it("the provider's narrower scope wins over the customer's wider one", async () => {
    const { deps } = setUp({
      peers: [peer('b'), peer('grid', { domain: 'site-x' })],
      answers: {},
      problems: ['p'],
      policy: { scope: 'AdministrativeDomain' },
    });
    const run = await runUpTo('buildCompatibilityProfiles', [job('p')], deps);
    expect(targetsOf(run, 'p')).toEqual(['b']);
  });
});

describe('steps 3 and 4: compatibility profiles and static matching', () => {
  it('a job with a checkpoint needs our checkpoint system and its loaded libraries as they are; a fresh job neither', async () => {
    const libraries = [{ name: 'libmpi.so', version: '4.1.5', loaded: true }];
    const { deps } = setUp({ peers: [peer('b')], answers: {}, problems: ['ran', 'fresh'] });
    const run = await runUpTo(
      'buildCompatibilityProfiles',
      [
        job('ran', { request: request({ libraries }) }),
        job('fresh', { checkpointMB: 0, request: request({ libraries }) }),
      ],
      deps,
    );
    await buildCompatibilityProfiles.run(run, deps);
    expect(caseOf(run, 'ran')?.profile).toEqual({
      operatingSystem: 'LINUX',
      architecture: 'x86_64',
      checkpointSystem: 'BLCR 0.8.5',
      libraries,
    });
    expect(caseOf(run, 'fresh')?.profile).toEqual({
      operatingSystem: 'LINUX',
      architecture: 'x86_64',
      libraries: [{ ...libraries[0], loaded: false }],
    });
  });

  it('a loaded library in another version drops the peer; an unloaded one in a compatible version does not', async () => {
    const peers = [
      peer('same'),
      peer('patch', { profile: { ...peer('x').profile, libraries: [{ name: 'libmpi.so', version: '4.1.6' }] } }),
    ];
    const { deps } = setUp({ peers, answers: {}, problems: ['loaded', 'unloaded'] });
    const run = await runUpTo(
      'matchTargets',
      [
        job('loaded', { request: request({ libraries: [{ name: 'libmpi.so', version: '4.1.5', loaded: true }] }) }),
        job('unloaded', { request: request({ libraries: [{ name: 'libmpi.so', version: '4.1.5', loaded: false }] }) }),
      ],
      deps,
    );
    await matchTargets.run(run, deps);
    expect(targetsOf(run, 'loaded')).toEqual(['same']);
    expect(caseOf(run, 'loaded')?.report.dropped).toEqual([
      {
        peer: 'patch',
        step: 'matchTargets',
        reason:
          'library libmpi.so 4.1.5 is loaded in the checkpoint and needs the identical version; the peer has 4.1.6',
      },
    ]);
    expect(targetsOf(run, 'unloaded')).toEqual(['same', 'patch']);
  });

  it('other operating systems, architectures and checkpoint systems drop the peer; no compatible peer is reported', async () => {
    const other = (over: Partial<Peer['profile']>) => ({ ...peer('x').profile, ...over });
    const peers = [
      peer('aix', { profile: other({ operatingSystems: ['AIX'] }) }),
      peer('arm', { profile: other({ architectures: ['aarch64'] }) }),
      peer('dmtcp', { profile: other({ checkpointSystems: ['DMTCP 3.0'] }) }),
    ];
    const { deps } = setUp({ peers, answers: {}, problems: ['p'] });
    const run = await runUpTo('matchTargets', [job('p')], deps);
    await matchTargets.run(run, deps);
    expect(caseOf(run, 'p')?.report.reason).toBe('no-compatible-peer');
    expect(caseOf(run, 'p')?.report.dropped.map((d) => d.reason)).toEqual([
      "operating system LINUX is not among the peer's (AIX)",
      "architecture x86_64 is not among the peer's (aarch64)",
      'the checkpoint was written by BLCR 0.8.5, which the peer does not run (DMTCP 3.0)',
    ]);
  });

  it('"compatible" is the same major version with a minor at least as new; any patch level', () => {
    expect(compatibleVersion('5.1.2', '5.1.1')).toBe(true);
    expect(compatibleVersion('1.9', '1.10')).toBe(true);
    expect(compatibleVersion('1.10', '1.9')).toBe(false);
    expect(compatibleVersion('4.1', '5.1')).toBe(false);
    expect(compatibleVersion('2', '2.7')).toBe(true);
    expect(
      libraryMismatch({ name: 'libcap.so', version: '1.10', loaded: false }, [{ name: 'libz.so', version: '1.2' }]),
    ).toBe('library libcap.so is not installed at the peer');
  });
});

describe('step 5: the bandwidth filter', () => {
  it('drops a peer that cannot receive the checkpoint before the latest start; 1024 MB at 1 MB/s is 1024 s', async () => {
    const { deps } = setUp({
      peers: [peer('slow', { bandwidthMBps: 1 }), peer('fast', { bandwidthMBps: 100 })],
      answers: {},
      problems: ['p'],
    });
    const run = await runUpTo(
      'filterByBandwidth',
      [job('p', { latestStart: new Date(now.getTime() + 600_000) })],
      deps,
    );
    await filterByBandwidth.run(run, deps);
    expect(targetsOf(run, 'p')).toEqual(['fast']);
    expect(caseOf(run, 'p')?.report.dropped).toEqual([
      {
        peer: 'slow',
        step: 'filterByBandwidth',
        reason:
          'the checkpoint (1024 MB) takes 1024 s at 1 MB/s and would arrive at 2026-11-23T12:17:04Z, after the latest start 2026-11-23T12:10:00Z (to finish by the deadline 2026-11-23T15:00:00Z)',
      },
    ]);
  });

  it('a job without a checkpoint moves nothing and passes', async () => {
    const { deps } = setUp({ peers: [peer('slow', { bandwidthMBps: 0.001 })], answers: {}, problems: ['fresh'] });
    const run = await runUpTo('filterByBandwidth', [job('fresh', { checkpointMB: 0, latestStart: now })], deps);
    await filterByBandwidth.run(run, deps);
    expect(targetsOf(run, 'fresh')).toEqual(['slow']);
  });

  it('no peer in time: reported as bandwidth', async () => {
    const { deps } = setUp({ peers: [peer('slow', { bandwidthMBps: 1 })], answers: {}, problems: ['p'] });
    const run = await runUpTo('filterByBandwidth', [job('p', { latestStart: now })], deps);
    await filterByBandwidth.run(run, deps);
    expect(caseOf(run, 'p')?.report.reason).toBe('bandwidth');
  });
});

describe('the whole run (fake peers)', () => {
  it('the cheapest offer below the penalty: accepted, checkpoint sent, job released, agreement told; other offers declined', async () => {
    const { controller, providers, records, released } = setUp({
      peers: [peer('b'), peer('c'), peer('d')],
      answers: { b: 120, c: 80, d: 'no capacity' },
      problems: ['p'],
    });
    const report = await controller.run([job('p')], now);
    expect(report.jobs).toEqual([
      expect.objectContaining({
        agreementId: 'p',
        problematic: true,
        migrated: true,
        peer: 'c',
        remoteAgreementId: 'remote-1',
        price: { amount: 80, currency: 'EUR' },
        penalty: { amount: 200, currency: 'EUR' },
        unsolved: false,
        detail: 'migrated to c (agreement remote-1) for 80.00 EUR, below the penalty 200.00 EUR',
        offers: [
          { peer: 'b', price: { amount: 120, currency: 'EUR' } },
          { peer: 'c', price: { amount: 80, currency: 'EUR' } },
          { peer: 'd', refused: 'd: rejected: no capacity' },
        ],
      }),
    ]);
    expect(providers.calls.slice(3)).toEqual(['accept c N-2', 'transfer c remote-1 16', 'decline b']);
    expect(records.get('p')).toEqual({
      peer: 'c',
      remoteAgreementId: 'remote-1',
      remoteAddress: 'http://c.example.org/wsag/Agreement',
      at: now,
      price: { amount: 80, currency: 'EUR' },
      penalty: { amount: 200, currency: 'EUR' },
    });
    expect(released).toEqual(['p']);
    expect(report).toMatchObject({ problematicBefore: ['p'], problematicAfter: [], violations: [] });
  });

  it('asks each peer for the work left, from when the checkpoint arrives, by the original deadline', async () => {
    const { controller, providers } = setUp({
      peers: [peer('b', { bandwidthMBps: 10 })],
      answers: { b: 50 },
      problems: ['p'],
    });
    await controller.run([job('p')], now);
    const asked = providers.asked[0]?.request;
    expect(asked?.name).toBe('migrated: agreement p from site-a');
    // 1024 MB at 10 MB/s: 102.4 s, so the checkpoint is there at 12:01:43 (whole seconds, rounded up).
    expect(asked?.request).toMatchObject({
      earliestStart: new Date('2026-11-23T12:01:43Z'),
      deadline: at(3),
      runtimeSeconds: 1800,
      requestKind: 'Binding',
      nodeCount: 4,
    });
  });

  it('every offer dearer than the penalty: nothing moves, the offers are declined, the violation is reported', async () => {
    const { controller, providers, released } = setUp({
      peers: [peer('b'), peer('c')],
      answers: { b: 250, c: 200 },
      problems: ['p'],
    });
    const report = await controller.run([job('p')], now);
    expect(report.jobs[0]).toMatchObject({
      migrated: false,
      reason: 'dearer-than-penalty',
      unsolved: true,
      detail:
        'not migrated: the cheapest offer (200.00 EUR from c) costs no less than the penalty 200.00 EUR; paying the penalty is cheaper',
    });
    expect(providers.calls.filter((c) => !c.startsWith('quote'))).toEqual(['decline c', 'decline b']);
    expect(released).toEqual([]);
    expect(report.violations).toEqual([
      {
        agreementId: 'p',
        reason: expect.stringContaining('node n03 failed') as string,
        penalty: { amount: 200, currency: 'EUR' },
      },
    ]);
  });

  it('a customer policy of None: not migrated, no peer asked, the violation reported with the reason', async () => {
    const { controller, providers } = setUp({ peers: [peer('b')], answers: { b: 10 }, problems: ['p'] });
    const report = await controller.run(
      [job('p', { request: request({ migrationPolicy: { scope: 'None', include: [], exclude: [] } }) })],
      now,
    );
    expect(providers.calls).toEqual([]);
    expect(report.jobs[0]).toMatchObject({ migrated: false, reason: 'customer-policy', unsolved: true });
    expect(report.violations[0]?.reason).toContain('the SLA forbids migration');
    expect(report.violations[0]?.penalty).toEqual({ amount: 200, currency: 'EUR' });
  });

  it('a peer with the wrong version of a loaded library is never asked; a compatible one takes the job', async () => {
    const old = peer('old', {
      profile: { ...peer('x').profile, libraries: [{ name: 'libmpi.so', version: '4.1.2' }] },
    });
    const { controller, providers } = setUp({ peers: [old, peer('b')], answers: { old: 10, b: 90 }, problems: ['p'] });
    const report = await controller.run(
      [job('p', { request: request({ libraries: [{ name: 'libmpi.so', version: '4.1.5', loaded: true }] }) })],
      now,
    );
    expect(providers.calls.filter((c) => c.startsWith('quote'))).toEqual(['quote b']);
    expect(report.jobs[0]).toMatchObject({ migrated: true, peer: 'b' });
  });

  it('a peer too slow for the checkpoint is never asked', async () => {
    const { controller, providers } = setUp({
      peers: [peer('slow', { bandwidthMBps: 0.1 }), peer('b')],
      answers: { slow: 10, b: 90 },
      problems: ['p'],
    });
    const report = await controller.run([job('p')], now);
    expect(providers.calls.filter((c) => c.startsWith('quote'))).toEqual(['quote b']);
    expect(report.jobs[0]?.dropped.map((d) => d.step)).toEqual(['filterByBandwidth']);
  });

  it('a failed transfer ends the new agreement and the next cheapest affordable offer is tried', async () => {
    const { controller, providers } = setUp({
      peers: [peer('b'), peer('c')],
      answers: { b: 50, c: 60 },
      problems: ['p'],
      failTransferTo: ['b'],
    });
    const report = await controller.run([job('p')], now);
    expect(providers.calls.slice(2)).toEqual([
      'accept b N-2',
      'transfer b remote-1 16',
      'terminate b remote-1',
      'accept c N-2',
      'transfer c remote-2 16',
    ]);
    expect(report.jobs[0]).toMatchObject({
      migrated: true,
      peer: 'c',
      warnings: ['a cheaper migration failed first: b: connection reset'],
    });
  });

  it('peers that all refuse: reported with their reasons', async () => {
    const { controller } = setUp({
      peers: [peer('b')],
      answers: { b: 'no 4 nodes are free before the deadline' },
      problems: ['p'],
    });
    const report = await controller.run([job('p')], now);
    expect(report.jobs[0]).toMatchObject({
      reason: 'peers-refused',
      detail: 'not migrated: no peer made an offer (b: rejected: no 4 nodes are free before the deadline)',
    });
  });
});

describe('step 7: other jobs make room for problematic ones', () => {
  // p cannot be placed (200 EUR at stake, it is too big for any peer); g1 alone frees nothing, g1 and g2 together free p's nodes.
  const jobs = () => [
    job('p', { value: 10 }),
    job('g1', { value: 1, checkpointMB: 0 }),
    job('g2', { value: 2, checkpointMB: 0 }),
    job('g3', { value: 3, checkpointMB: 0 }),
  ];
  const frees = { g2: ['p'] };
  const peers = [peer('b')];

  it('assumes jobs gone one by one until P shrinks, then moves them if their prices sum to less than the penalties saved', async () => {
    const { controller, providers, released } = setUp({
      peers,
      answers: { b: 'p is too big' },
      problems: ['p'],
      frees,
    });
    // The peer refuses p, but takes the small jobs for 60 EUR each: 120 < 200.
    providers.quote = async (peer: Peer, request: PeerRequest) => {
      providers.calls.push(`quote ${request.name?.split(' ')[2]}`);
      return request.name?.includes('agreement p ')
        ? { quoted: false, reason: 'b: p is too big' }
        : {
            quoted: true,
            quote: {
              peer: peer.name,
              negotiationId: 'n',
              negotiationAddress: '',
              offerId: 'N-2',
              price: { amount: 60, currency: 'EUR' },
              offer: '<o/>',
            },
          };
    };
    const report = await controller.run(jobs(), now);
    expect(released).toEqual(['g1', 'g2']);
    expect(report.jobs.map((j) => [j.agreementId, j.migrated, j.reason])).toEqual([
      ['p', false, 'peers-refused'],
      ['g1', true, undefined],
      ['g2', true, undefined],
    ]);
    expect(report.jobs[1]).toMatchObject({ solves: ['p'], penalty: { amount: 200, currency: 'EUR' } });
    expect(report.jobs[0]).toMatchObject({ solvedBy: ['g1', 'g2'], unsolved: false });
    expect(report).toMatchObject({ problematicAfter: [], violations: [] });
    expect(providers.calls.filter((c) => c.startsWith('quote'))).toEqual(['quote p', 'quote g1', 'quote g2']);
  });

  it('keeps the jobs here when their prices sum to no less than the penalties saved', async () => {
    const { controller, released } = setUp({
      peers,
      answers: { b: 100 },
      problems: ['p'],
      frees,
      policy: { excludeAgreements: ['p'] },
    });
    const report = await controller.run(jobs(), now);
    expect(released).toEqual([]);
    // g1 + g2 solve p for 200 EUR, no less than its 200 EUR; the assumptions stay and g3 joins them (002 section 3.6.8): 300 EUR.
    expect(report.jobs.map((j) => [j.agreementId, j.reason])).toEqual([
      ['p', 'provider-policy'],
      ['g1', 'dearer-than-penalty'],
      ['g2', 'dearer-than-penalty'],
      ['g3', 'dearer-than-penalty'],
    ]);
    expect(report.jobs[3]?.detail).toBe(
      'not migrated: moving g1, g2, g3 costs 300.00 EUR, no less than the penalties it saves (200.00 EUR for p)',
    );
    expect(report.violations.map((v) => v.agreementId)).toEqual(['p']);
  });

  it('does not move other jobs when the provider migrates only problematic ones', async () => {
    const { controller, released, providers } = setUp({
      peers,
      answers: { b: 'p is too big' },
      problems: ['p'],
      frees,
      policy: { candidates: 'problematic' },
    });
    const report = await controller.run(jobs(), now);
    expect(released).toEqual([]);
    expect(report.jobs.map((j) => j.agreementId)).toEqual(['p']);
    expect(providers.calls).toEqual(['quote b']);
  });
});
