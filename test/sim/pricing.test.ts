import { describe, expect, it } from 'vitest';
import { defaultPriceCurve } from '../../src/domain/pricing.js';
import { comparePricing, loadInputs, parseCluster, parseWorkload } from '../../src/sim/index.js';
import { wsag } from '../cli/support.js';
import { noSetUp } from './support.js';

/**
 * Fixed against demand prices (docs/pricing.md). Four nodes, no set-up times. A reserves 3
 * nodes for hour 1; B then wants 1 node for the same hour. At B's request the hour is 75 %
 * booked: 1 + 0.5 x (0.75 - 0.5) / 0.3 = 1.4167 times the list price; the next start slot,
 * hour 2, is empty: the list price.
 */
const cluster = parseCluster({
  nodes: [{ count: 4, prefix: 'n', memoryGB: 32, cpus: 8 }],
  timing: noSetUp,
});
const workload = parseWorkload({
  jobs: [
    { id: 'A', arrival: 0, kind: 'reservation', level: 'Legacy', nodes: 3, window: { start: 3600, end: 7200 } },
    { id: 'B', arrival: 10, kind: 'reservation', level: 'Legacy', nodes: 1, window: { start: 3600, end: 7200 } },
  ],
});
const prices = { currency: 'EUR', nodeHour: 1, preparatoryFeeRate: 0, curve: defaultPriceCurve };

describe('wsag sim --compare-pricing', () => {
  it('a flexible customer takes the cheaper later hour under demand prices, the busy hour under fixed ones', () => {
    const c = comparePricing(workload, cluster, prices, { flexible: 1, slots: 3 });
    expect(c.fixed).toEqual({
      pricing: 'fixed',
      accepted: 2,
      refused: 0,
      movedForPrice: 0,
      revenue: 4,
      utilisation: 0.5,
      meanFactor: 1,
      peakHourLoad: 1,
    });
    // B moves to hour 2: 4 node-hours over 3 hours of 4 nodes; the busiest hour is 75 % booked.
    expect(c.demand).toEqual({
      pricing: 'demand',
      accepted: 2,
      refused: 0,
      movedForPrice: 1,
      revenue: 4,
      utilisation: 4 / 12,
      meanFactor: 1,
      peakHourLoad: 0.75,
    });
  });

  it('a customer who is not flexible pays for the busy hour', () => {
    const c = comparePricing(workload, cluster, prices, { flexible: 0, slots: 3 });
    expect(c.demand).toMatchObject({ movedForPrice: 0, revenue: 3 + 1.42, peakHourLoad: 1 });
    expect(c.demand.meanFactor).toBeCloseTo((1 + 1.41667) / 2, 4);
  });

  it('prints both runs side by side; refuses a share outside 0 to 1', async () => {
    const result = await wsag(['sim', '--workload', 'workloads/small.json', '--compare-pricing', '--flexible', '0.5']);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe('Fixed against demand prices (docs/pricing.md): 10 jobs, 50.0 % of customers flexible');
    expect(result.out.find((l) => l.startsWith('revenue'))).toMatch(/^revenue\s+\d+\.\d\d EUR\s+\d+\.\d\d EUR$/);
    const json = await wsag(['sim', '--workload', 'workloads/small.json', '--compare-pricing', '--json']);
    const { workload: small, cluster: smallCluster } = loadInputs('workloads/small.json');
    expect(JSON.parse(json.stdout)).toEqual(comparePricing(small, smallCluster, prices, { flexible: 0.5, slots: 3 }));
    expect(
      (await wsag(['sim', '--workload', 'workloads/small.json', '--compare-pricing', '--flexible', '2'])).err[0],
    ).toBe('error: --flexible expects a share from 0 to 1, got "2"');
  });
});
