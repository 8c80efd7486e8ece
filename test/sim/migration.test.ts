import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PeersConfig } from '../../src/engine/migration/peers.js';
import {
  loadInputs,
  loadPeers,
  runSimulation,
  simulate,
  type JobOutcome,
  type SimReport,
  type SimulatedPeersConfig,
  type Workload,
} from '../../src/sim/index.js';

/**
 * workloads/migration.json with the peers of workloads/peers-small.json, against the
 * figures worked out by hand in workloads/README.md ("migration.json, worked out by hand"):
 * n1 fails at 1000 s under the Standard job m1, which cannot restart before r1's window
 * ends at 8060 s, too late for its deadline at 6000 s.
 */
const workloadFile = fileURLToPath(new URL('../../workloads/migration.json', import.meta.url));
const peersFile = fileURLToPath(new URL('../../workloads/peers-small.json', import.meta.url));

function inputs(edit?: (w: Workload) => void) {
  const { workload, cluster } = loadInputs(workloadFile);
  edit?.(workload);
  return { workload, cluster };
}

function peers(edit?: (p: PeersConfig, terms: SimulatedPeersConfig['terms']) => void): SimulatedPeersConfig {
  const config = loadPeers(peersFile);
  edit?.(config.peers, config.terms);
  return config;
}

async function withPeers(config: SimulatedPeersConfig, edit?: (w: Workload) => void): Promise<SimReport> {
  const { workload, cluster } = inputs(edit);
  return runSimulation(workload, cluster, { jobs: true, peers: config });
}

function job(report: SimReport, id: string): JobOutcome {
  const found = report.jobs?.find((j) => j.id === id);
  if (!found) throw new Error(`no outcome for ${id}`);
  return found;
}

describe('workloads/migration.json without peers', () => {
  const { workload, cluster } = inputs();
  const report = simulate(workload, cluster, { jobs: true });

  it('m1 stays in P from the failure until its deadline and its penalty is excused: the Grid had nothing to offer', () => {
    expect(job(report, 'm1')).toMatchObject({
      status: 'dropped',
      start: 0,
      end: 6000,
      checkpoints: 1,
      hits: 1,
      violation: 'left-in-P',
      penalty: 100,
      paid: 0,
    });
    expect(report.violated[0]?.liability).toMatch(
      /^not liable: a resource outage hit the job and Standard's mechanisms were applied/,
    );
    expect(job(report, 'r1')).toMatchObject({ status: 'completed', start: 60, end: 8060, honoured: true });
    expect(report.deadlines).toEqual({ accepted: 1, met: 0, missed: 1, open: 0 });
    expect(report.penalties).toMatchObject({ owed: 100, paid: 0, excused: 100 });
    expect(report.migration).toBeUndefined();
    expect(report.options).toEqual({});
  });

  it('runSimulation without peers gives the same report as simulate', async () => {
    expect(JSON.stringify(await runSimulation(workload, cluster, { jobs: true }))).toBe(JSON.stringify(report));
  });
});

describe('workloads/migration.json with workloads/peers-small.json (hand-checked)', async () => {
  const report = await withPeers(peers());

  it('the controller runs once, at the failure, and moves m1 to the cheaper peer: 4 nodes x 3000 s x 12 EUR per node-hour', () => {
    expect(report.options.migration).toEqual({ peers: ['cheap', 'dear'] });
    const m = report.migration;
    expect(m).toMatchObject({
      runs: 1,
      problematicWeighed: 1,
      migrations: 1,
      problematicMigrated: 1,
      price: 40,
      notMigrated: {},
      keptThenViolated: 0,
    });
    expect(m?.moves).toEqual([
      {
        id: 'm1',
        kind: 'deadline',
        level: 'Standard',
        at: 1000,
        peer: 'cheap',
        remoteAgreementId: 'cheap-1',
        price: 40,
        problematic: true,
        penalty: 100,
        payable: 100,
        start: 1103,
        end: 4103, // the 102400 MB checkpoint arrives after 102.4 s, then 5/6 of 3600 s of work
        detail: 'migrated to cheap (agreement cheap-1) for 40.00 EUR, below the penalty 100.00 EUR',
      },
    ]);
    // Both peers were asked; the dearer one's offer (120.00 EUR) was declined.
    expect(m?.peers.map((p) => [p.name, p.quotes, p.refusals, p.migrations, p.price, p.nodeSeconds])).toEqual([
      ['cheap', 1, 0, 1, 40, 4 * 3000],
      ['dear', 1, 0, 0, 0, 0],
    ]);
  });

  it('m1 completes at the peer by its deadline: no violation, its penalty saved; the price is paid', () => {
    expect(job(report, 'm1')).toMatchObject({
      status: 'completed',
      start: 0,
      end: 4103,
      met: true,
      checkpoints: 1,
      busyNodeSeconds: 4000,
      paid: 0,
      migratedTo: { peer: 'cheap', at: 1000, price: 40 },
    });
    expect(job(report, 'm1').violation).toBeUndefined();
    expect(report.deadlines).toEqual({ accepted: 1, met: 1, missed: 0, open: 0 });
    expect(report.violations.total).toBe(0);
    expect(report.penalties).toMatchObject({ owed: 0, paid: 0 });
    // Had it stayed, the provider would have declined a cheaper Grid offer: Standard would pay.
    expect(report.migration?.penaltiesSaved).toEqual({ jobs: 1, owed: 100, payable: 100 });
  });

  it("counts m1's work before the failure as busy, not as useful: it was done at the peer", () => {
    // r1's nodes are busy from 0: their preparation for its window at 60.
    expect(report.utilisation).toMatchObject({
      busyNodeSeconds: 4 * 1000 + 3 * 8060,
      usefulNodeSeconds: 3 * 8000,
      failedNodeSeconds: 7060,
    });
    expect(report.checkpoints).toEqual({ taken: 1, jobs: 1 });
    // The run ends with r1, the last job; n1's repair at 9000 comes after.
    expect(report.span).toEqual({ endSeconds: 8060, stoppedBy: 'end of workload' });
  });

  it('two runs give identical reports', async () => {
    expect(JSON.stringify(await withPeers(peers()))).toBe(JSON.stringify(report));
  });
});

describe('the variants of workloads/README.md', () => {
  it('only the dearer peer: its offer (120.00 EUR) is not below the penalty, m1 is kept and dropped, and Standard pays: the Grid had room', async () => {
    const report = await withPeers(peers((p) => (p.policy.excludePeers = ['cheap'])));
    expect(report.migration).toMatchObject({
      runs: 1,
      migrations: 0,
      price: 0,
      notMigrated: { 'dearer-than-penalty': 1 },
      keptThenViolated: 1,
      penaltiesSaved: { jobs: 0, owed: 0, payable: 0 },
    });
    expect(report.migration?.peers.map((p) => [p.name, p.quotes])).toEqual([
      ['cheap', 0],
      ['dear', 1],
    ]);
    expect(job(report, 'm1')).toMatchObject({ status: 'dropped', end: 6000, violation: 'left-in-P', paid: 100 });
    expect(report.violated[0]?.liability).toBe(
      'liable: Standard resumes the job on Grid resources when local ones are lacking (Hovestadt 2006, section 3.2.2), but the provider kept it: ' +
        'the cheapest offer (120.00 EUR from dear) costs no less than the penalty 100.00 EUR; paying the penalty is cheaper',
    );
    expect(report.penalties).toMatchObject({ owed: 100, paid: 100, excused: 0 });
  });

  it("m1's SLA forbids migration: no peer is asked, m1 is dropped, and its penalty is excused", async () => {
    const report = await withPeers(peers(), (w) => {
      const m1 = w.jobs.find((j) => j.id === 'm1');
      if (m1) m1.migration = 'None';
    });
    expect(report.migration).toMatchObject({
      runs: 1,
      migrations: 0,
      notMigrated: { 'customer-policy': 1 },
      keptThenViolated: 1,
    });
    expect(report.migration?.peers.map((p) => p.quotes)).toEqual([0, 0]);
    expect(job(report, 'm1')).toMatchObject({ status: 'dropped', violation: 'left-in-P', paid: 0 });
    expect(report.violated[0]?.liability).toMatch(/^not liable: a resource outage hit the job/);
  });

  it('a peer with too few nodes refuses: m1 is dropped, and its penalty is excused (the Grid had nothing for it)', async () => {
    const report = await withPeers(
      peers((p, terms) => {
        p.policy.excludePeers = ['dear']; // a new list: the parsed policy shares the default's arrays
        terms.set('cheap', { ...(terms.get('cheap') as NonNullable<ReturnType<typeof terms.get>>), nodes: 2 });
      }),
    );
    expect(report.migration).toMatchObject({ migrations: 0, notMigrated: { 'peers-refused': 1 } });
    expect(report.migration?.peers[0]).toMatchObject({ name: 'cheap', quotes: 1, refusals: 1 });
    expect(job(report, 'm1')).toMatchObject({ status: 'dropped', paid: 0 });
  });

  it('a policy that keeps Standard jobs here: m1 is kept by the provider, and Standard pays', async () => {
    const report = await withPeers(
      peers((p) => {
        p.policy.levels = ['Enhanced', 'Full'];
      }),
    );
    expect(report.migration).toMatchObject({ migrations: 0, notMigrated: { 'provider-policy': 1 } });
    expect(job(report, 'm1')).toMatchObject({ status: 'dropped', paid: 100 });
    expect(report.violated[0]?.liability).toMatch(
      /but the provider kept it: the provider migrates only Enhanced, Full jobs, not Standard$/,
    );
  });
});
