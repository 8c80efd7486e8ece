import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { defaultSwfRules, gamma, generateFailures, readFailureCsv, readSwf } from '../../src/sim/swf.js';
import { loadInputs } from '../../src/sim/index.js';
import { wsag } from '../cli/support.js';

/**
 * Real traces: the Standard Workload Format, node failures from CSV or drawn at a
 * rate. test/sim/fixtures/tiny.swf is a trace written for the tests (eight jobs: one never
 * ran, one has no processor count, one is larger than the 8-node machine).
 */
const tiny = fs.readFileSync('test/sim/fixtures/tiny.swf', 'utf8');

describe('SWF traces', () => {
  it('turns each job into a request: arrival from the first submit, nodes from processors, estimate at least the run time', () => {
    const trace = readSwf(tiny, { ...defaultSwfRules, deadlineShare: 0, reservationShare: 0 });
    expect(trace).toMatchObject({
      jobs: 8,
      maxNodes: 8,
      skipped: { 'never ran (run time 0 or unknown)': 1, 'no processor count': 1 },
    });
    const jobs = trace.workload.jobs as Array<Record<string, unknown>>;
    expect(jobs.map((j) => [j.id, j.kind, j.arrival, j.nodes, j.estimate, j.runtime])).toEqual([
      ['swf-1', 'best-effort', 0, 2, 4000, 3600],
      ['swf-2', 'best-effort', 60, 4, 1800, 1800],
      ['swf-5', 'best-effort', 240, 16, 7200, 7200],
      ['swf-6', 'best-effort', 300, 1, 600, 600], // no requested time: the run time
      ['swf-7', 'best-effort', 360, 2, 3600, 1200],
      ['swf-8', 'best-effort', 420, 8, 2400, 2400],
    ]);
    expect(trace.workload.start).toBe('2026-01-05T00:00:00.000Z');
  });

  it('makes the configured shares deadline jobs (arrival + slack x estimate + 10 min) and reservations (after the lead)', () => {
    const deadlines = readSwf(tiny, { ...defaultSwfRules, deadlineShare: 1, deadlineSlack: 3 }).workload.jobs as Array<
      Record<string, unknown>
    >;
    expect(deadlines.every((j) => j.kind === 'deadline' && j.level === 'Standard')).toBe(true);
    expect(deadlines[0]).toMatchObject({ id: 'swf-1', deadline: 0 + 3 * 4000 + 600 });
    const reservations = readSwf(tiny, {
      ...defaultSwfRules,
      deadlineShare: 0,
      reservationShare: 1,
      reservationLeadSeconds: 900,
    }).workload.jobs as Array<Record<string, unknown>>;
    expect(reservations[1]).toMatchObject({
      id: 'swf-2',
      kind: 'reservation',
      window: { start: 960, end: 960 + 1800 },
    });
    // Over many jobs the drawn shares come out as configured, the same for the same seed.
    const many = Array.from(
      { length: 2000 },
      (_, i) => `${i + 1} ${i * 10} 0 600 1 -1 -1 1 600 -1 1 1 1 1 1 1 -1 -1`,
    ).join('\n');
    const kinds = (seed: number) =>
      (readSwf(many, { ...defaultSwfRules, seed }).workload.jobs as Array<{ kind: string }>).map((j) => j.kind);
    const share = (kind: string) => kinds(7).filter((k) => k === kind).length / 2000;
    expect(share('deadline')).toBeGreaterThan(0.27);
    expect(share('deadline')).toBeLessThan(0.33);
    expect(share('reservation')).toBeGreaterThan(0.08);
    expect(share('reservation')).toBeLessThan(0.12);
    expect(kinds(7)).toEqual(kinds(7));
    expect(kinds(8)).not.toEqual(kinds(7));
  });

  it('puts best-effort jobs at the levels of bestEffortLevels; a rules file naming another level is an error', () => {
    const many = Array.from(
      { length: 1000 },
      (_, i) => `${i + 1} ${i * 10} 0 600 1 -1 -1 1 600 -1 1 1 1 1 1 1 -1 -1`,
    ).join('\n');
    const levels = (rules: Partial<typeof defaultSwfRules>) =>
      (
        readSwf(many, { ...defaultSwfRules, deadlineShare: 0, reservationShare: 0, ...rules }).workload.jobs as Array<{
          level: string;
        }>
      ).map((j) => j.level);
    expect(new Set(levels({}))).toEqual(new Set(['Legacy']));
    const mixed = levels({ bestEffortLevels: { Legacy: 0.7, Standard: 0.3 } });
    const standard = mixed.filter((l) => l === 'Standard').length / 1000;
    expect(standard).toBeGreaterThan(0.25);
    expect(standard).toBeLessThan(0.35);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swf-rules-'));
    const rules = path.join(dir, 'rules.json');
    fs.writeFileSync(rules, JSON.stringify({ bestEffortLevels: { Full: 1 } }));
    expect(() => loadInputs('test/sim/fixtures/tiny.swf', undefined, { swfRulesFile: rules })).toThrow(
      'bestEffortLevels are shares of the levels Legacy, Standard adding up to 1, such as { "Legacy": 0.7, "Standard": 0.3 }',
    );
    fs.rmSync(dir, { recursive: true });
  });

  it('reads a trace as the Parallel Workloads Archive publishes it (.swf.gz), and names a file that is not gzip', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-swf-'));
    try {
      const packed = path.join(dir, 'tiny.swf.gz');
      fs.writeFileSync(packed, zlib.gzipSync(tiny));
      const plain = loadInputs('test/sim/fixtures/tiny.swf');
      const unpacked = loadInputs(packed);
      expect(unpacked.workload.jobs).toEqual(plain.workload.jobs);
      expect(unpacked.workload.jobs.length).toBeGreaterThan(0);
      const notGzip = path.join(dir, 'plain.swf.gz');
      fs.writeFileSync(notGzip, tiny);
      expect(() => loadInputs(notGzip)).toThrow(`${notGzip}: not a gzip file, as its name says`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the line of a job that is not 18 numbers', () => {
    expect(() => readSwf('; MaxNodes: 4\n1 0 0 60 1 -1\n')).toThrow(
      'line 2: a job line has 18 numbers, got "1 0 0 60 1 -1"',
    );
  });
});

describe('failure traces', () => {
  it('draws Weibull gaps with the same mean: shape 0.7 (Schroeder and Gibson 2006) bunches failures', () => {
    expect(gamma(1)).toBeCloseTo(1, 12);
    expect(gamma(5)).toBeCloseTo(24, 10);
    expect(gamma(0.5)).toBeCloseTo(Math.sqrt(Math.PI), 12);
    const nodes = Array.from({ length: 100 }, (_, i) => `n${i}`);
    const span = 4000 * 86_400; // 4000 days at 0.05 a node and day: 200 failures a node
    const gaps = (shape: number) => {
      const failures = generateFailures(nodes, 0.05, span, 7, 60, shape);
      const out: number[] = [];
      for (const node of nodes) {
        const mine = failures.filter((f) => f.node === node);
        for (let i = 1; i < mine.length; i++)
          out.push((mine[i]?.at as number) - ((mine[i - 1]?.repairAt as number) ?? 0));
      }
      const mean = out.reduce((a, b) => a + b, 0) / out.length;
      const sd = Math.sqrt(out.reduce((a, b) => a + (b - mean) ** 2, 0) / out.length);
      return { mean, cv: sd / mean, count: failures.length };
    };
    const exponential = gaps(1);
    const weibull = gaps(0.7);
    for (const g of [exponential, weibull]) expect(g.mean / 1_728_000).toBeGreaterThan(0.95); // 86400 / 0.05
    for (const g of [exponential, weibull]) expect(g.mean / 1_728_000).toBeLessThan(1.05);
    expect(exponential.cv).toBeGreaterThan(0.93);
    expect(exponential.cv).toBeLessThan(1.07);
    expect(weibull.cv).toBeGreaterThan(1.3); // a Weibull of shape 0.7 has a CV of about 1.46
    // Shape 1 is the exponential as drawn before.
    expect(generateFailures(nodes, 0.05, span, 7, 60, 1)).toEqual(generateFailures(nodes, 0.05, span, 7, 60));
  });

  it('wsag sim --failure-shape needs --failure-rate and a shape from 0.1 to 10', async () => {
    const alone = await wsag(['sim', '--workload', 'workloads/small.json', '--failure-shape', '0.7']);
    expect(alone.err[0]).toBe('error: --failure-shape shapes drawn failures: give --failure-rate R too');
    const shaped = (shape: string) =>
      wsag(['sim', '--workload', 'workloads/small.json', '--failure-rate', '1', '--failure-shape', shape]);
    expect((await shaped('0')).err[0]).toBe('error: --failure-shape expects a Weibull shape from 0.1 to 10, got "0"');
    const ok = await shaped('0.7');
    expect(ok.code).toBe(0);
  });

  it('reads node,down,up from CSV, up empty for a node never repaired; names a bad line', () => {
    expect(readFailureCsv('node,down,up\nn1,600,4200\n# a comment\nn3,1000,\n')).toEqual([
      { at: 600, node: 'n1', repairAt: 4200 },
      { at: 1000, node: 'n3' },
    ]);
    expect(() => readFailureCsv('node,at\nn1,5\n')).toThrow(
      'the first line must be the header "node,down,up", got "node,at"',
    );
    expect(() => readFailureCsv('node,down,up\nn1,600,500\n')).toThrow(
      'line 2: expected node,down,up with down >= 0 and up after down (or empty), got "n1,600,500"',
    );
  });

  it('draws failures at the given rate per node and day, each node out once at a time, the same for the same seed', () => {
    const nodes = Array.from({ length: 500 }, (_, i) => `n${i}`);
    const failures = generateFailures(nodes, 0.02, 200 * 86_400, 3);
    // 500 nodes x 200 days x 0.02 = 2000 expected.
    expect(failures.length).toBeGreaterThan(1800);
    expect(failures.length).toBeLessThan(2200);
    for (const node of ['n0', 'n1', 'n499']) {
      const own = failures.filter((f) => f.node === node);
      for (let i = 1; i < own.length; i++) expect(own[i]?.at).toBeGreaterThan(own[i - 1]?.repairAt as number);
    }
    expect(generateFailures(nodes, 0.02, 200 * 86_400, 3)).toEqual(failures);
  });

  it('wsag sim runs an SWF trace with failures from a CSV file; the options are checked', async () => {
    const { workload, cluster } = loadInputs('test/sim/fixtures/tiny.swf', undefined, {
      failuresFile: 'test/sim/fixtures/failures.csv',
    });
    expect(cluster.nodes).toHaveLength(8);
    expect(workload.jobs.map((j) => j.id)).not.toContain('swf-5'); // 16 nodes: larger than the machine
    expect(workload.failures).toEqual([
      { at: 600, node: 'n1', repairAt: 4200 },
      { at: 1000, node: 'n3' },
    ]);
    const result = await wsag(['sim', '--workload', 'test/sim/fixtures/tiny.swf', '--failure-rate', '2', '--json']);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { failures: { events: number } }).failures.events).toBeGreaterThan(0);
    const both = await wsag([
      'sim',
      '--workload',
      'test/sim/fixtures/tiny.swf',
      '--failure-rate',
      '2',
      '--failures',
      'test/sim/fixtures/failures.csv',
    ]);
    expect(both.err[0]).toBe('error: give --failures FILE or --failure-rate R, not both');
  });
});
