import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SimReport } from '../../src/sim/index.js';
import { wsag } from './support.js';

const small = fileURLToPath(new URL('../../workloads/small.json', import.meta.url));
const smallCluster = fileURLToPath(new URL('../../workloads/cluster-small.json', import.meta.url));

/** The line of the figures block that starts with `label`. */
function figure(out: string[], label: string): string | undefined {
  return out.find((line) => line.startsWith(`${label} `));
}

describe('wsag sim', () => {
  it('prints the report of the small workload as text', async () => {
    const result = await wsag(['sim', '--workload', small, '--no-progress']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe('wsag sim: small: 10 jobs, 1 failure on 8 nodes (1 buffer); simulated 2 h 30 min from 2026-01-05T00:00:00Z');
    expect(result.out).toContain('requests       total  accepted  rejected  completed  dropped  open');
    expect(result.out).toContain('  deadline     6      4         2         3          1        0');
    expect(figure(result.out, 'SLA acceptance')).toMatch(/ 5 of 8 reservation and deadline requests \(62\.5 %\)$/);
    expect(figure(result.out, 'utilisation')).toMatch(/ 73\.4 % busy \(working nodes, overheads included\), 68\.9 % useful work, 4\.2 % spare nodes held, 4\.2 % failed$/);
    expect(figure(result.out, 'deadlines')).toMatch(/ 4 accepted: 3 met, 1 missed$/);
    expect(figure(result.out, 'reservations')).toMatch(/ 1 accepted: 1 honoured, 0 not honoured$/);
    expect(figure(result.out, 'SLA violations')).toMatch(/ 1: 0 deadline missed, 0 reservation not honoured, 1 left in P$/);
    expect(figure(result.out, 'penalties')).toMatch(/ 60\.00 EUR paid of 60\.00 EUR owed on violations \(0\.00 EUR excused by the guarantee level\)$/);
    expect(figure(result.out, 'checkpoints')).toMatch(/ 18 taken by 5 jobs$/);
    expect(figure(result.out, 'restarts')).toMatch(/ 1 \(1 on spare nodes\) in 1 job$/);
    expect(result.stdout).toContain('rejected requests (3):');
    expect(result.out.find((l) => l.startsWith('  a7 '))).toMatch(/Full service needs 2 standby nodes reserved at a peer provider, but no peer standby capacity is configured$/);
    expect(result.out.find((l) => l.startsWith('  a9 '))).toMatch(/^ {2}a9 +deadline +Legacy +left-in-P +paid 60\.00 EUR: Legacy pays on a missed deadline or reservation; node n1 failed/);
    expect(result.out[result.out.length - 1]).toMatch(/^\(cluster .*cluster-small\.json; 1 failure event\(s\); simulated 2 h 30 min in \d+\.\d s\)$/);
    expect(result.stdout).not.toContain('checks');
  });

  it('--jobs lists every job', async () => {
    const result = await wsag(['sim', '--workload', small, '--jobs', '--no-progress']);
    expect(result.code).toBe(0);
    expect(result.out.find((l) => l.startsWith('  a1 '))).toMatch(/^ {2}a1 +deadline +Enhanced +completed +0 +4360 +5 +2 +deadline met$/);
    expect(result.out.find((l) => l.startsWith('  a9 ') && l.includes('dropped'))).toMatch(/ 7500 +0 +0 +left-in-P$/);
  });

  it('--json prints one document: the report', async () => {
    const result = await wsag(['sim', '--workload', small, '--json']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as SimReport;
    expect(report.format).toBe('wsag-sim-report/1');
    expect(report.acceptance.rate).toBe(0.625);
    expect(report.penalties).toMatchObject({ owed: 60, paid: 60 });
    expect(report.jobs).toBeUndefined();
  });

  it('--progress writes progress lines on stderr when it is not a terminal', async () => {
    const result = await wsag(['sim', '--workload', small, '--progress', '--json']);
    expect(result.code).toBe(0);
    expect(result.err[result.err.length - 1]).toBe('sim: 100 % (10 of 10 jobs settled, simulated 2 h 30 min)');
    expect(JSON.parse(result.stdout)).toMatchObject({ format: 'wsag-sim-report/1' });
  });

  it('--until stops the run; --cluster overrides the workload\'s cluster', async () => {
    const result = await wsag(['sim', '--workload', small, '--cluster', smallCluster, '--until', '3500', '--no-progress']);
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(/simulated 58 min 20 s from 2026-01-05T00:00:00Z \(stopped by --until\)$/);
    expect(figure(result.out, 'deadlines')).toMatch(/ 4 accepted: 2 met, 0 missed, 2 open$/);
    expect(figure(result.out, 'SLA violations')).toMatch(/; 1 still in P at the stop$/);
  });

  it('usage errors exit 2 with the usage', async () => {
    const missing = await wsag(['sim']);
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('error: --workload FILE is required');
    expect(missing.err[1]).toBe('usage: wsag sim --workload FILE [--cluster FILE] [--until SECONDS] [--jobs] [--progress|--no-progress] [--json]');
    const until = await wsag(['sim', '--workload', small, '--until', 'soon']);
    expect(until.code).toBe(2);
    expect(until.err[0]).toBe('error: --until must be a number of seconds, 0 or more, got "soon"');
    const both = await wsag(['sim', '--workload', small, '--progress', '--no-progress']);
    expect(both.err[0]).toBe('error: give --progress or --no-progress, not both');
  });

  it('bad inputs exit 1 with a message naming the file, the entry and the field', async () => {
    const missing = await wsag(['sim', '--workload', '/nonexistent/workload.json']);
    expect(missing.code).toBe(1);
    expect(missing.err).toEqual(['error: /nonexistent/workload.json: no such file']);
    expect(missing.out).toEqual([]);
    const notCluster = await wsag(['sim', '--workload', small, '--cluster', small]);
    expect(notCluster.code).toBe(1);
    expect(notCluster.err).toEqual([`error: ${small}: cluster: unknown field "start" (allowed: name, description, nodes, timing, peerStandbyNodes)`]);
  });

  it('is listed in the help', async () => {
    const help = await wsag(['help']);
    expect(help.out.find((l) => l.trimStart().startsWith('sim '))).toContain('replay a workload and failures against a cluster offline');
    const own = await wsag(['help', 'sim']);
    expect(own.code).toBe(0);
    expect(own.out[0]).toBe('usage: wsag sim --workload FILE [--cluster FILE] [--until SECONDS] [--jobs] [--progress|--no-progress] [--json]');
  });
});
