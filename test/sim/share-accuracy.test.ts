import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSitePolicy } from '../../src/domain/vo-policy.js';
import { loadInputs, parseWorkload, runShareAccuracy } from '../../src/sim/index.js';
import { wsag } from '../cli/support.js';

const root = path.resolve(import.meta.dirname, '../..');
const cluster = loadInputs(path.join(root, 'workloads/small.json')).cluster;
const policy = parseSitePolicy(
  {
    epochStart: '2026-01-05T00:00:00Z',
    epochSeconds: 86_400,
    vos: [
      { name: 'a', share: 0.5, limit: 'fixed' },
      { name: 'b', share: 0.5, limit: 'fixed' },
    ],
  },
  'policy',
);

/**
 * The share-accuracy experiment (`wsag sim --vo-policy`), worked by hand: on the 8 nodes
 * of cluster-small VO a asks for three 4-node jobs of 10 hours (120 node-hours) on a day
 * whose half is 96 node-hours. With its fixed share it gets two (80, and a minute of start-up
 * each: the third would pass 96), so 83.5 %; without shares all three, its whole entitlement.
 */
describe('share accuracy', () => {
  const workload = parseWorkload({
    name: 'two-vos',
    start: '2026-01-05T00:00:00Z',
    currency: 'EUR',
    jobs: [0, 1, 2].map((i) => ({
      id: `a${i}`,
      arrival: i * 60,
      kind: 'best-effort',
      level: 'Legacy',
      nodes: 4,
      estimate: 36_000,
      runtime: 36_000,
      vo: 'a',
    })),
  });

  it('a fixed share gets a VO what it is entitled to and no more', () => {
    const withShares = runShareAccuracy(workload, cluster, policy, true);
    const a = withShares.vos[0];
    expect(a).toMatchObject({ vo: 'a', refusedForShare: 1, refusedForCapacity: 0 });
    // Each booking holds its nodes a minute longer than the job's 10 hours: cluster-small's t_init.
    expect(withShares.epochs[0]?.vos[0]).toMatchObject({
      vo: 'a',
      entitledNodeHours: 96,
      askedNodeHours: 120,
      gotNodeHours: 80.13,
    });
    expect(a?.epochAccuracy).toBeCloseTo(80.13 / 96, 3);
    const without = runShareAccuracy(workload, cluster, policy, false);
    expect(without.epochs[0]?.vos[0]).toMatchObject({ gotNodeHours: 120.2 });
    expect(without.vos[0]?.epochAccuracy).toBe(1);
    // b asked for nothing: no accuracy to speak of.
    expect(withShares.epochs[0]?.vos[1]?.accuracy).toBeUndefined();
  });

  it("wsag sim --vo-policy prints the table beside GRUBER's figures", async () => {
    const result = await wsag([
      'sim',
      '--workload',
      path.join(root, 'workloads/vo-3.json'),
      '--vo-policy',
      path.join(root, 'workloads/vo-policy.json'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.out[0]).toBe('VO usage SLAs: share accuracy (docs/vo-policy.md)');
    expect(result.out.some((l) => /^astro\s+burst\s+30\.0 %/.test(l))).toBe(true);
    expect(result.out.at(-1)).toMatch(/^GRUBER \(Dumitrescu 2007, Table 6\.3\)/);
  });
});
