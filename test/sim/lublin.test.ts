import { describe, expect, it } from 'vitest';
import { gammaCdf, gammaDraw, lublinJobs, lublinSwf } from '../../src/sim/lublin.js';
import { readSwf } from '../../src/sim/swf.js';
import { wsag } from '../cli/support.js';

/**
 * The Lublin-Feitelson generator: the shapes its paper describes (serial and power-of-two
 * sizes, runtimes growing with size, a daily cycle), user estimates after Tsafrir et al.,
 * and a trace `wsag sim` reads as it reads the archive's logs.
 */
const jobs = lublinJobs({ jobs: 20_000, nodes: 128, seed: 7 });
const share = (pick: (j: (typeof jobs)[number]) => boolean, among = jobs) => among.filter(pick).length / among.length;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('Lublin-Feitelson traces', () => {
  it('draws sizes as the model does: serial jobs, mostly powers of two, none larger than the machine', () => {
    const batch = jobs.filter((j) => !j.interactive);
    const interactive = jobs.filter((j) => j.interactive);
    // The model's serial shares: 0.2927 of batch jobs, 0.1541 of interactive ones.
    expect(share((j) => j.nodes === 1, batch)).toBeCloseTo(0.2927, 1);
    expect(share((j) => j.nodes === 1, interactive)).toBeCloseTo(0.1541, 1);
    const parallel = jobs.filter((j) => j.nodes > 1);
    expect(share((j) => (j.nodes & (j.nodes - 1)) === 0, parallel)).toBeGreaterThan(0.7);
    expect(Math.max(...jobs.map((j) => j.nodes))).toBe(128);
    // Interactive jobs stay below 2^5.5 nodes.
    expect(Math.max(...interactive.map((j) => j.nodes))).toBeLessThanOrEqual(46);
  });

  it('draws longer runtimes for batch jobs and for larger jobs, never above e^12 seconds', () => {
    const batch = jobs.filter((j) => !j.interactive).map((j) => j.runtime);
    const interactive = jobs.filter((j) => j.interactive).map((j) => j.runtime);
    expect(median(batch)).toBeGreaterThan(5 * median(interactive));
    expect(Math.max(...jobs.map((j) => j.runtime))).toBeLessThanOrEqual(Math.ceil(Math.exp(12)));
    const small = jobs.filter((j) => !j.interactive && j.nodes <= 2).map((j) => j.runtime);
    const large = jobs.filter((j) => !j.interactive && j.nodes >= 32).map((j) => j.runtime);
    // p = pa x nodes + pb falls with size: more of the long gamma for large jobs.
    expect(median(large)).toBeGreaterThan(median(small));
  });

  it('follows a daily cycle: more arrivals in the afternoon than at night', () => {
    const hour = (j: (typeof jobs)[number]) => Math.floor((j.arrival % 86_400) / 3600);
    const afternoon = share((j) => hour(j) >= 12 && hour(j) < 18);
    const night = share((j) => hour(j) >= 0 && hour(j) < 6);
    expect(afternoon).toBeGreaterThan(2 * night);
    const arrivals = jobs.map((j) => j.arrival);
    expect(arrivals).toEqual([...arrivals].sort((a, b) => a - b));
  });

  it('gives estimates users give: popular values at least the runtime, a share of jobs killed at their limit', () => {
    expect(jobs.every((j) => j.estimate >= j.runtime)).toBe(true);
    const popular = new Set([5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 360, 480, 600, 720, 900, 1080, 1440]);
    expect(share((j) => popular.has(j.estimate / 60) || j.estimate / 60 > 1440)).toBe(1);
    expect(share((j) => j.estimate === j.runtime)).toBeGreaterThan(0.13);
    expect(share((j) => j.estimate === j.runtime)).toBeLessThan(0.3);
    expect(share((j) => j.estimate >= 3 * j.runtime)).toBeGreaterThan(0.3);
  });

  it('is the same trace for the same seed, another for another', () => {
    const a = lublinSwf({ jobs: 200, nodes: 64, seed: 3 });
    expect(lublinSwf({ jobs: 200, nodes: 64, seed: 3 })).toBe(a);
    expect(lublinSwf({ jobs: 200, nodes: 64, seed: 4 })).not.toBe(a);
  });

  it('is a trace wsag sim reads: every job, the machine from MaxNodes', () => {
    const trace = readSwf(lublinSwf({ jobs: 500, nodes: 64, seed: 5 }));
    expect(trace.jobs).toBe(500);
    expect(trace.maxNodes).toBe(64);
    expect(trace.workload.jobs as unknown[]).toHaveLength(500);
  });

  it('draws gamma variates with the right mean and reads the gamma CDF right', () => {
    let state = 12_345;
    const random = () => {
      state = (state * 48_271) % 2_147_483_647;
      return state / 2_147_483_647;
    };
    for (const [shape, scale] of [
      [0.5, 2],
      [6.57, 0.823],
      [639.1, 0.0156],
    ] as const) {
      let sum = 0;
      for (let i = 0; i < 50_000; i++) sum += gammaDraw(shape, scale, random);
      expect(sum / 50_000 / (shape * scale)).toBeCloseTo(1, 1);
    }
    // P(X <= 2) for gamma(2, 1) is 1 - 3 e^-2; gamma(1, s) is the exponential.
    expect(gammaCdf(2, 2, 1)).toBeCloseTo(1 - 3 * Math.exp(-2), 10);
    expect(gammaCdf(30, 1, 10)).toBeCloseTo(1 - Math.exp(-3), 10);
    expect(gammaCdf(0, 3, 1)).toBe(0);
  });
});

describe('wsag sim-trace', () => {
  it('prints the trace; bad numbers are usage errors', async () => {
    const run = await wsag(['sim-trace', '--jobs', '5', '--nodes', '32', '--seed', '9']);
    expect(run.code).toBe(0);
    expect(`${run.stdout}\n`).toBe(lublinSwf({ jobs: 5, nodes: 32, seed: 9 }));
    const bad = await wsag(['sim-trace', '--nodes', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--nodes expects a whole number from 1 to 1000000, got "0"');
  });
});
