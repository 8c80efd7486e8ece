import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadInputs, loadPeers, runSimulation, simulate } from '../../src/sim/index.js';
import {
  failuresOutputFile,
  generate,
  generateVo,
  generateWithFailures,
  outputFile,
  prng,
  render,
  voOutputFile,
} from '../../workloads/generate.js';

const small = new URL('../../workloads/small.json', import.meta.url).pathname;
const peersFile = new URL('../../workloads/peers.json', import.meta.url).pathname;

describe('workloads/10k.json', () => {
  it('is exactly what workloads/generate.ts writes', () => {
    expect(fs.readFileSync(outputFile, 'utf8') === render(generate())).toBe(true);
  });

  it('the PRNG is mulberry32: the published first value for seed 1, then a fixed stream', () => {
    const random = prng(1);
    expect(random()).toBe(0.6270739405881613);
    expect([random(), random()].map((x) => Math.round(x * 1e9))).toEqual([2735721, 527447040]);
  });

  it('is a valid workload for cluster-256.json: 10,000 jobs of every kind over four weeks', () => {
    const { workload, cluster } = loadInputs(outputFile);
    expect(workload.jobs).toHaveLength(10_000);
    expect(cluster.nodes).toHaveLength(256);
    expect(cluster.nodes.filter((n) => n.buffer)).toHaveLength(8);
    const kinds = new Set(workload.jobs.map((j) => `${j.kind}/${j.level}`));
    expect([...kinds].sort()).toEqual([
      'background/Background',
      'best-effort/Legacy',
      'best-effort/Standard',
      'deadline/Enhanced',
      'deadline/Full',
      'deadline/Legacy',
      'deadline/Standard',
      'reservation/Enhanced',
      'reservation/Full',
      'reservation/Legacy',
      'reservation/Standard',
    ]);
    expect(Math.max(...workload.jobs.map((j) => j.arrival))).toBeLessThan(28 * 86400);
    expect(workload.failures.length).toBeGreaterThan(10);
  });
});

describe('workloads/10k-failures.json', () => {
  it('is exactly what workloads/generate.ts writes', () => {
    expect(fs.readFileSync(failuresOutputFile, 'utf8') === render(generateWithFailures())).toBe(true);
  });

  it('has the jobs of 10k.json, a tenth of the SLA jobs forbidding migration, and a heavier failure trace with whole groups of nodes', () => {
    const base = loadInputs(outputFile).workload;
    const { workload } = loadInputs(failuresOutputFile);
    expect(workload.jobs.map(({ migration: _m, ...job }) => job)).toEqual(base.jobs);
    const sla = workload.jobs.filter((j) => j.kind === 'deadline' || j.kind === 'reservation');
    const forbidding = sla.filter((j) => j.migration === 'None').length / sla.length;
    expect(forbidding).toBeGreaterThan(0.08);
    expect(forbidding).toBeLessThan(0.12);
    expect(workload.failures.length).toBeGreaterThan(5 * base.failures.length);
    const atOnce = new Map<number, number>();
    for (const f of workload.failures) atOnce.set(f.at, (atOnce.get(f.at) ?? 0) + 1);
    expect(Math.max(...atOnce.values())).toBeGreaterThanOrEqual(16);
  });

  it('has other draws of the same model: the same jobs, other failures (generate.ts --heavy-draw S)', () => {
    const committed = generateWithFailures();
    const draw = generateWithFailures(3);
    expect(draw.jobs.map(({ migration: _m, ...job }) => job)).toEqual(
      committed.jobs.map(({ migration: _m, ...job }) => job),
    );
    expect(draw.failures).not.toEqual(committed.failures);
    expect(draw.failures.length / committed.failures.length).toBeGreaterThan(0.5);
    expect(draw.failures.length / committed.failures.length).toBeLessThan(2);
    expect(render(generateWithFailures(3))).toBe(render(draw));
  });
});

describe('determinism', () => {
  it('two runs of the small workload give identical reports', () => {
    const a = loadInputs(small);
    const b = loadInputs(small);
    expect(JSON.stringify(simulate(a.workload, a.cluster, { jobs: true }))).toBe(
      JSON.stringify(simulate(b.workload, b.cluster, { jobs: true })),
    );
  });

  it('two runs of the first two days of the 10k workload give identical reports, with no consistency check tripped', () => {
    const first = loadInputs(outputFile);
    const second = loadInputs(outputFile);
    const a = simulate(first.workload, first.cluster, { untilSeconds: 2 * 86400, jobs: true });
    const b = simulate(second.workload, second.cluster, { untilSeconds: 2 * 86400, jobs: true });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.checks).toEqual({ retiredWithoutCompletion: 0, completionClamped: 0, lateWithoutProblem: 0 });
    expect(a.requests.total.requests).toBeGreaterThan(500);
    expect(a.requests.total.completed).toBeGreaterThan(0);
  });

  it('two runs of the first five days of 10k-failures.json with migration to workloads/peers.json give identical reports, and the failures put jobs at risk', {
    timeout: 90_000,
  }, async () => {
    const run = async () => {
      const { workload, cluster } = loadInputs(failuresOutputFile);
      return runSimulation(workload, cluster, { untilSeconds: 5 * 86400, jobs: true, peers: loadPeers(peersFile) });
    };
    const a = await run();
    expect(JSON.stringify(a)).toBe(JSON.stringify(await run()));
    expect(a.migration?.runs).toBeGreaterThan(0);
    expect(a.migration?.problematicWeighed).toBeGreaterThan(0);
    expect(a.checks).toEqual({ retiredWithoutCompletion: 0, completionClamped: 0, lateWithoutProblem: 0 });
  });
});

describe('the whole 10k workload', () => {
  // About 10 s on the development machine (the CLI reports its own time); every job is
  // accounted for and no consistency check trips.
  it('runs to the end with every job accounted for', { timeout: 90_000 }, () => {
    const { workload, cluster } = loadInputs(outputFile);
    const report = simulate(workload, cluster);
    const total = report.requests.total;
    expect(total.requests).toBe(10_000);
    expect(total.accepted + total.rejected).toBe(10_000);
    expect(total.completed + total.dropped).toBe(total.accepted);
    expect(total.open).toBe(0);
    expect(report.checks).toEqual({ retiredWithoutCompletion: 0, completionClamped: 0, lateWithoutProblem: 0 });
    expect(report.acceptance.bestEffortRejected).toBe(0);
    expect(report.deadlines.met + report.deadlines.missed).toBe(report.deadlines.accepted);
    expect(report.reservations.honoured + report.reservations.notHonoured).toBe(report.reservations.accepted);
    expect(report.utilisation.busy).toBeGreaterThan(0.5);
    expect(report.utilisation.busy).toBeLessThan(1);
    expect(report.failures.events).toBe(workload.failures.length);
  });
});

describe('workloads/vo-3.json', () => {
  it('is exactly what workloads/generate.ts writes, and a valid three-VO workload for cluster-small.json', () => {
    expect(fs.readFileSync(voOutputFile, 'utf8') === render(generateVo())).toBe(true);
    const { workload } = loadInputs(voOutputFile);
    expect(new Set(workload.jobs.map((j) => j.vo))).toEqual(new Set(['atlas', 'astro', 'bio']));
  });
});
