import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SimComparison, SimReport } from '../../src/sim/index.js';
import { wsag } from './support.js';

const small = fileURLToPath(new URL('../../workloads/small.json', import.meta.url));
const smallCluster = fileURLToPath(new URL('../../workloads/cluster-small.json', import.meta.url));
const migration = fileURLToPath(new URL('../../workloads/migration.json', import.meta.url));
const peers = fileURLToPath(new URL('../../workloads/peers-small.json', import.meta.url));
const usage =
  'usage: wsag sim --workload FILE[.swf] [--cluster FILE] [--swf-rules FILE] [--failures FILE.csv | --failure-rate R [--failure-shape K]] [--peers FILE [--compare-migration] | --vo-policy FILE | --compare-pricing [--flexible SHARE] [--price-curve CURVE] | --interactive SHARE [--start-within SECONDS] [--session-nodes N] [--session-minutes M] [--warm-nodes N] | --baselines [--loads L,L,...] [--draws N]] [--refused leave|queue] [--until SECONDS] [--jobs] [--progress|--no-progress] [--json]';

/** The line of the figures block that starts with `label`. */
function figure(out: string[], label: string): string | undefined {
  return out.find((line) => line.startsWith(`${label} `));
}

describe('wsag sim', () => {
  it('prints the report of the small workload as text', async () => {
    const result = await wsag(['sim', '--workload', small, '--no-progress']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(
      'wsag sim: small: 10 jobs, 1 failure on 8 nodes (1 buffer); simulated 2 h 30 min from 2026-01-05T00:00:00Z',
    );
    expect(result.out).toContain('requests       total  accepted  rejected  completed  dropped  open');
    expect(result.out).toContain('  deadline     6      4         2         3          1        0');
    expect(figure(result.out, 'SLA acceptance')).toMatch(/ 5 of 8 reservation and deadline requests \(62\.5 %\)$/);
    expect(figure(result.out, 'utilisation')).toMatch(
      / 73\.7 % busy \(working nodes, overheads included\), 68\.9 % useful work, 4\.2 % spare nodes held, 4\.2 % failed$/,
    );
    expect(figure(result.out, 'deadlines')).toMatch(/ 4 accepted: 3 met, 1 missed$/);
    expect(figure(result.out, 'reservations')).toMatch(/ 1 accepted: 1 honoured, 0 not honoured$/);
    expect(figure(result.out, 'SLA violations')).toMatch(
      / 1: 0 deadline missed, 0 reservation not honoured, 1 left in P$/,
    );
    expect(figure(result.out, 'penalties')).toMatch(
      / 60\.00 EUR paid of 60\.00 EUR owed on violations \(0\.00 EUR excused by the guarantee level\)$/,
    );
    expect(figure(result.out, 'checkpoints')).toMatch(/ 18 taken by 5 jobs, 1.4 node-hours writing them$/);
    expect(figure(result.out, 'restarts')).toMatch(/ 1 \(1 on spare nodes\) in 1 job$/);
    expect(result.stdout).toContain('rejected requests (3):');
    expect(result.out.find((l) => l.startsWith('  a7 '))).toMatch(
      /Full service needs 2 standby nodes reserved at a peer provider, but no peer standby capacity is configured$/,
    );
    expect(result.out.find((l) => l.startsWith('  a9 '))).toMatch(
      /^ {2}a9 +deadline +Legacy +left-in-P +paid 60\.00 EUR: liable: Legacy holds its promise by the advance reservation alone .*; node n1 failed/,
    );
    expect(result.out[result.out.length - 1]).toMatch(
      /^\(cluster .*cluster-small\.json; 1 failure event\(s\); simulated 2 h 30 min in \d+\.\d s\)$/,
    );
    expect(result.stdout).not.toContain('checks');
    expect(figure(result.out, 'migration')).toBeUndefined();
  });

  it('--jobs lists every job', async () => {
    const result = await wsag(['sim', '--workload', small, '--jobs', '--no-progress']);
    expect(result.code).toBe(0);
    expect(result.out.find((l) => l.startsWith('  a1 '))).toMatch(
      /^ {2}a1 +deadline +Enhanced +completed +0 +4360 +5 +2 +deadline met$/,
    );
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

  it("--until stops the run; --cluster overrides the workload's cluster", async () => {
    const result = await wsag([
      'sim',
      '--workload',
      small,
      '--cluster',
      smallCluster,
      '--until',
      '3500',
      '--no-progress',
    ]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(/simulated 58 min 20 s from 2026-01-05T00:00:00Z \(stopped by --until\)$/);
    expect(figure(result.out, 'deadlines')).toMatch(/ 4 accepted: 2 met, 0 missed, 2 open$/);
    expect(figure(result.out, 'SLA violations')).toMatch(/; 1 still in P at the stop$/);
  });

  it('usage errors exit 2 with the usage', async () => {
    const missing = await wsag(['sim']);
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('error: --workload FILE is required');
    expect(missing.err[1]).toBe(usage);
    const until = await wsag(['sim', '--workload', small, '--until', 'soon']);
    expect(until.code).toBe(2);
    expect(until.err[0]).toBe('error: --until must be a number of seconds, 0 or more, got "soon"');
    const both = await wsag(['sim', '--workload', small, '--progress', '--no-progress']);
    expect(both.err[0]).toBe('error: give --progress or --no-progress, not both');
    const compare = await wsag(['sim', '--workload', small, '--compare-migration']);
    expect(compare.code).toBe(2);
    expect(compare.err[0]).toBe('error: --compare-migration needs --peers FILE: the peers to migrate to');
  });

  it('bad inputs exit 1 with a message naming the file, the entry and the field', async () => {
    const missing = await wsag(['sim', '--workload', '/nonexistent/workload.json']);
    expect(missing.code).toBe(1);
    expect(missing.err).toEqual(['error: /nonexistent/workload.json: no such file']);
    expect(missing.out).toEqual([]);
    const notCluster = await wsag(['sim', '--workload', small, '--cluster', small]);
    expect(notCluster.code).toBe(1);
    expect(notCluster.err).toEqual([
      `error: ${small}: cluster: unknown field "start" (allowed: name, description, nodes, timing, peerStandbyNodes)`,
    ]);
    const notPeers = await wsag(['sim', '--workload', small, '--peers', small]);
    expect(notPeers.code).toBe(1);
    expect(notPeers.err).toEqual([
      `error: ${small}: a peers file is an object with "peers" (and optionally "local" and "policy"), see docs/operations.md`,
    ]);
  });

  it('is listed in the help', async () => {
    const help = await wsag(['help']);
    expect(help.out.find((l) => l.trimStart().startsWith('sim '))).toContain(
      'replay a workload and failures against a cluster offline',
    );
    const own = await wsag(['help', 'sim']);
    expect(own.code).toBe(0);
    expect(own.out[0]).toBe(usage);
    expect(own.stdout).toContain('--compare-migration');
  });
});

describe('wsag sim with peers', () => {
  it('--peers migrates m1 of workloads/migration.json and reports the migration section', async () => {
    const result = await wsag(['sim', '--workload', migration, '--peers', peers, '--no-progress']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(figure(result.out, 'deadlines')).toMatch(/ 1 accepted: 1 met, 0 missed$/);
    expect(figure(result.out, 'SLA violations')).toMatch(/ 0: /);
    expect(figure(result.out, 'migration')).toMatch(
      / 1 job migrated \(1 from P\) for 40\.00 EUR; 1 job in P weighed in 1 controller run$/,
    );
    expect(figure(result.out, 'penalties saved')).toMatch(
      / 100\.00 EUR on 1 job \(100\.00 EUR of it payable under the liability rules\)$/,
    );
    expect(figure(result.out, 'kept in P')).toMatch(/ 0$/);
    expect(figure(result.out, 'peers')).toMatch(
      / cheap: 1 job for 40\.00 EUR \(1 quote, 0 refused\); dear: 0 jobs for 0\.00 EUR \(1 quote, 0 refused\)$/,
    );
    expect(result.stdout).toContain('migrations (1):');
    expect(result.out.find((l) => l.startsWith('  m1 '))).toMatch(
      /^ {2}m1 +deadline +Standard +at 1000 s +to cheap for 40\.00 EUR +runs there 1103 s to 4103 s +penalty 100\.00 EUR saved$/,
    );
    expect(result.out[result.out.length - 1]).toMatch(
      /^\(cluster .*cluster-small\.json; peers .*peers-small\.json; 1 failure event\(s\); simulated 2 h 14 min in \d+\.\d s\)$/,
    );
    const json = await wsag(['sim', '--workload', migration, '--peers', peers, '--json']);
    const report = JSON.parse(json.stdout) as SimReport;
    expect(report.options).toEqual({ migration: { peers: ['cheap', 'dear'] } });
    expect(report.migration).toMatchObject({
      migrations: 1,
      price: 40,
      penaltiesSaved: { jobs: 1, owed: 100, payable: 100 },
    });
  });

  it('--compare-migration runs twice and prints the figures side by side', async () => {
    const result = await wsag([
      'sim',
      '--workload',
      migration,
      '--peers',
      peers,
      '--compare-migration',
      '--no-progress',
    ]);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(
      'wsag sim: migration: 2 jobs, 1 failure on 8 nodes (1 buffer), without and with migration to 2 peers (cheap, dear)',
    );
    const row = (label: string) =>
      result.out
        .find((l) => l.startsWith(`${label}  `))
        ?.split(/ {2,}/)
        .slice(1);
    expect(row('figure')).toEqual(['without migration', 'with migration']);
    expect(row('deadlines met')).toEqual(['0 of 1', '1 of 1']);
    expect(row('SLA violations')).toEqual(['1', '0']);
    expect(row('penalties owed')).toEqual(['100.00 EUR', '0.00 EUR']);
    expect(row('penalties paid')).toEqual(['0.00 EUR', '0.00 EUR']);
    expect(row('checkpoints taken')).toEqual(['1', '1']);
    expect(row('migrations')).toEqual(['0', '1']);
    expect(row('prices paid to peers')).toEqual(['0.00 EUR', '40.00 EUR']);
    expect(row('penalties saved')).toEqual(['-', '100.00 EUR (100.00 EUR payable)']);
    expect(row('penalties paid + prices')).toEqual(['0.00 EUR', '40.00 EUR']);
    expect(result.out[result.out.length - 1]).toMatch(
      /^\(cluster .*; peers .*peers-small\.json; 1 failure event\(s\); two runs of 2 h 14 min simulated in \d+\.\d s\)$/,
    );
  });

  it('--compare-migration --json prints both reports; --progress labels each run', async () => {
    const result = await wsag([
      'sim',
      '--workload',
      migration,
      '--peers',
      peers,
      '--compare-migration',
      '--json',
      '--progress',
    ]);
    expect(result.code).toBe(0);
    const comparison = JSON.parse(result.stdout) as SimComparison;
    expect(comparison.format).toBe('wsag-sim-comparison/1');
    expect(comparison.without.options).toEqual({});
    expect(comparison.without.migration).toBeUndefined();
    expect(comparison.with.options.migration?.peers).toEqual(['cheap', 'dear']);
    expect(comparison.with.migration?.migrations).toBe(1);
    expect(result.err.filter((l) => l.endsWith('% (2 of 2 jobs settled, simulated 2 h 14 min)'))).toEqual([
      'sim without migration: 100 % (2 of 2 jobs settled, simulated 2 h 14 min)',
      'sim with migration: 100 % (2 of 2 jobs settled, simulated 2 h 14 min)',
    ]);
  });
});
