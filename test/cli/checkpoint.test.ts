import { describe, expect, it } from 'vitest';
import { wsag } from './support.js';
import { defaultSiteTiming } from '../../src/scheduler/site.js';

/** The row of the plan table whose label is `label` (`  t_jobmax    5340 s  ...`). */
function row(out: string[], label: string): string | undefined {
  return out.find((line) => line.trimStart().startsWith(`${label} `));
}

interface JsonPlan {
  runtimeSeconds: number;
  slowdown: number;
  checkpointCost: 'given' | 'derived';
  derivedFrom?: { nodes: number; memoryPerNodeGB: number; sequential: boolean };
  storageGB: number;
  timing: {
    tInitNew: number;
    tInitRestart: number;
    tHat: number;
    tCp: number;
    tDeinit: number;
    tMigr: number;
    outages: number;
  };
  optimum: number;
  count: number;
  chosenBy: string;
  checkpointsPerHour: number;
  requestedPerHour?: number;
  deadlineSeconds?: number;
  slotSeconds?: number;
  bounds?: { min: number; max: number; slotMax: number; minPerHour: number; maxPerHour: number };
  plan: {
    count: number;
    intervalSeconds: number;
    checkpointSeconds: number;
    minSlotSeconds: number;
    jobMaxSeconds: number;
    worstCaseSeconds: number;
    outages: number;
  };
}

describe('wsag checkpoint', () => {
  it("the seed's example: 7 checkpoints, 450 s apart, worst-case runtime 5340 s", async () => {
    const result = await wsag(['checkpoint', '--runtime', '3600', '--checkpoint-cost', '120', '--outages', '2']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(
      'checkpoint plan: 7 checkpoint(s), one every 450 s of computation; worst-case runtime 5340 s with 2 outage(s)',
    );
    expect(row(result.out, 't_hat')).toMatch(/^ {2}t_hat +3600 s +runtime 3600 s x slowdown 1 \(3\.3\)$/);
    expect(row(result.out, 't_cp')).toMatch(/ 120 s +one checkpoint, as given/);
    expect(row(result.out, 'n_cp')).toMatch(
      /^ {2}n_cp +7 +optimum for 2 covered outage\(s\): x = -1 \+ sqrt\(2 x 3600 \/ 120\) = 6\.746 \(3\.16\)$/,
    );
    expect(row(result.out, 't_compint')).toMatch(/ 450 s +computation between checkpoints \(3\.6\)$/);
    // t_minslot = t_initnew 35 + 3600 + 7 x 120 + t_deinit 15 (default site, no storage)
    expect(row(result.out, 't_minslot')).toMatch(
      / 4490 s +slot without outages: t_initnew 35 \+ t_hat \+ 7 x t_cp \+ t_deinit 15 \(3\.7\)$/,
    );
    expect(row(result.out, 't_jobmax')).toMatch(/ 5340 s +worst-case runtime with 2 outage\(s\).*\(3\.8\)$/);
    // 35 + 5340 + 2 x (35 + 120) + 15
    expect(row(result.out, 'worst slot')).toMatch(/ 5700 s +worst-case slot with initialisation and restarts/);
    expect(result.stdout).not.toContain('bounds');
  });

  it('--json: the timing, the optimum and the plan', async () => {
    const result = await wsag([
      'checkpoint',
      '--runtime',
      '3600',
      '--checkpoint-cost',
      '120',
      '--outages',
      '2',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(result.err).toEqual([]);
    const plan = JSON.parse(result.stdout) as JsonPlan;
    expect(plan).toMatchObject({
      runtimeSeconds: 3600,
      slowdown: 1,
      checkpointCost: 'given',
      storageGB: 0,
      timing: { tInitNew: 35, tInitRestart: 35, tHat: 3600, tCp: 120, tDeinit: 15, tMigr: 0, outages: 2 },
      optimum: 7,
      count: 7,
      chosenBy: 'optimum',
      checkpointsPerHour: 7,
      plan: {
        count: 7,
        intervalSeconds: 450,
        checkpointSeconds: 120,
        minSlotSeconds: 4490,
        jobMaxSeconds: 5340,
        worstCaseSeconds: 5700,
        outages: 2,
      },
    });
    expect(plan.bounds).toBeUndefined();
    expect(plan.derivedFrom).toBeUndefined();
  });

  it('one covered outage by default: about 4 checkpoints (figure 3.2)', async () => {
    const plan = JSON.parse(
      (await wsag(['checkpoint', '--runtime', '3600', '--checkpoint-cost', '120', '--json'])).stdout,
    ) as JsonPlan;
    expect(plan.timing.outages).toBe(1);
    expect(plan.count).toBe(4);
    expect(plan.plan.jobMaxSeconds).toBe(4800);
  });

  it('no covered outages: no checkpoints', async () => {
    const result = await wsag(['checkpoint', '--runtime', '3600', '--checkpoint-cost', '120', '--outages', '0']);
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(/^checkpoint plan: 0 checkpoint\(s\)/);
    expect(row(result.out, 'n_cp')).toContain('no checkpoints');
    expect(row(result.out, 't_jobmax')).toMatch(/ 3600 s /);
  });

  it('--slowdown turns the runtime into t_hat (3.3)', async () => {
    const plan = JSON.parse(
      (await wsag(['checkpoint', '--runtime', '3600', '--checkpoint-cost', '120', '--slowdown', '1.01', '--json']))
        .stdout,
    ) as JsonPlan;
    expect(plan.slowdown).toBe(1.01);
    expect(plan.timing.tHat).toBeCloseTo(3636, 9);
    expect(plan.plan.intervalSeconds).toBeCloseTo(3636 / (plan.count + 1), 9);
  });

  it('derives t_cp from nodes, memory and storage with the site defaults; --sequential multiplies by the nodes', async () => {
    const parallel = JSON.parse(
      (
        await wsag([
          'checkpoint',
          '--runtime',
          '86400',
          '--nodes',
          '16',
          '--memory-gb',
          '64',
          '--storage-gb',
          '500',
          '--json',
        ])
      ).stdout,
    ) as JsonPlan;
    const { checkpointSecondsPerNodeGB: perGB, snapshotSecondsPerGB: snapshot } = defaultSiteTiming;
    // per-node GB cost x 64 GB + snapshot cost x 500 GB; storage also in t_initnew (30 + 0.5 x 500 + 5) and t_initrestart (30 + 500 + 5)
    expect(parallel).toMatchObject({
      checkpointCost: 'derived',
      derivedFrom: { nodes: 16, memoryPerNodeGB: 64, sequential: false },
      storageGB: 500,
    });
    expect(parallel.timing.tCp).toBeCloseTo(perGB * 64 + snapshot * 500, 9);
    expect(parallel.timing.tInitNew).toBe(285);
    expect(parallel.timing.tInitRestart).toBe(535);
    const sequential = JSON.parse(
      (
        await wsag([
          'checkpoint',
          '--runtime',
          '86400',
          '--nodes',
          '16',
          '--memory-gb',
          '64',
          '--storage-gb',
          '500',
          '--sequential',
          '--json',
        ])
      ).stdout,
    ) as JsonPlan;
    expect(sequential.timing.tCp).toBeCloseTo(16 * perGB * 64 + snapshot * 500, 9);
    expect(sequential.count).toBeLessThan(parallel.count);
    const text = await wsag([
      'checkpoint',
      '--runtime',
      '86400',
      '--nodes',
      '16',
      '--memory-gb',
      '64',
      '--storage-gb',
      '500',
      '--sequential',
    ]);
    expect(row(text.out, 't_cp')).toContain(
      `16 node(s) x ${perGB} s/GB x 64 GB + ${snapshot} s/GB x 500 GB storage, sequential checkpointer (3.4)`,
    );
    // Defaults: one node with all of the site's memory per node (16 GB), no storage.
    const defaults = JSON.parse((await wsag(['checkpoint', '--runtime', '3600', '--json'])).stdout) as JsonPlan;
    expect(defaults.derivedFrom).toEqual({ nodes: 1, memoryPerNodeGB: 16, sequential: false });
    expect(defaults.timing.tCp).toBe(perGB * 16);
  });

  it('--migration-seconds adds t_migr per covered outage (3.8)', async () => {
    const plan = JSON.parse(
      (
        await wsag([
          'checkpoint',
          '--runtime',
          '3600',
          '--checkpoint-cost',
          '120',
          '--outages',
          '2',
          '--migration-seconds',
          '60',
          '--json',
        ])
      ).stdout,
    ) as JsonPlan;
    expect(plan.count).toBe(7); // the optimum is for a local restart
    expect(plan.plan.jobMaxSeconds).toBe(5340 + 120);
  });

  it('--frequency without a deadline: that many checkpoints per hour of computation', async () => {
    const result = await wsag([
      'checkpoint',
      '--runtime',
      '7200',
      '--checkpoint-cost',
      '120',
      '--frequency',
      '2',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as JsonPlan;
    expect(plan).toMatchObject({ count: 4, chosenBy: 'frequency', requestedPerHour: 2, checkpointsPerHour: 2 });
  });

  describe('with --deadline-seconds', () => {
    const example = ['checkpoint', '--runtime', '3600', '--checkpoint-cost', '120', '--outages', '2'];

    it('prints the bounds (3.9-3.11) and the optimum when it lies within them', async () => {
      const result = await wsag([...example, '--deadline-seconds', '6000']);
      expect(result.err).toEqual([]);
      expect(result.code).toBe(0);
      expect(row(result.out, 'n_cp')).toMatch(/^ {2}n_cp +7 +optimum/);
      expect(row(result.out, 'deadline')).toMatch(/ 6000 s +time until the deadline; free slot 6000 s$/);
      expect(row(result.out, 'bounds')).toMatch(
        / 4\.\.12 +checkpoints: at least 4 and at most 12 for the deadline, at most 19 for the slot; 4\.00 to 12\.00 per hour \(3\.9-3\.11\)$/,
      );
      const plan = JSON.parse((await wsag([...example, '--deadline-seconds', '6000', '--json'])).stdout) as JsonPlan;
      expect(plan).toMatchObject({
        count: 7,
        chosenBy: 'optimum',
        deadlineSeconds: 6000,
        slotSeconds: 6000,
        bounds: { min: 4, max: 12, slotMax: 19, minPerHour: 4, maxPerHour: 12 },
      });
    });

    it('clamps the optimum to a shorter free slot (--slot-seconds)', async () => {
      const result = await wsag([...example, '--deadline-seconds', '6000', '--slot-seconds', '4370', '--json']);
      expect(result.code).toBe(0);
      const plan = JSON.parse(result.stdout) as JsonPlan;
      expect(plan).toMatchObject({
        optimum: 7,
        count: 6,
        chosenBy: 'clamped optimum',
        slotSeconds: 4370,
        bounds: { min: 4, max: 12, slotMax: 6 },
      });
      expect(plan.plan.minSlotSeconds).toBe(4370);
      const text = await wsag([...example, '--deadline-seconds', '6000', '--slot-seconds', '4370']);
      expect(row(text.out, 'n_cp')).toMatch(/ 6 +the optimum 7, clamped to the bounds$/);
    });

    it('takes a requested frequency inside the bounds', async () => {
      const result = await wsag([...example, '--deadline-seconds', '6000', '--frequency', '5']);
      expect(result.code).toBe(0);
      expect(row(result.out, 'n_cp')).toMatch(
        / 5 +requested 5 per hour of computation, within the bounds \(the optimum is 7\)$/,
      );
    });

    it('refuses a requested frequency outside the bounds, naming them: exit 1', async () => {
      const result = await wsag([...example, '--deadline-seconds', '6000', '--frequency', '1', '--json']);
      expect(result.code).toBe(1);
      expect(result.out).toEqual([]);
      expect(result.err).toEqual([
        'error: no checkpoint plan fits: checkpoint frequency 1 per hour (1 checkpoints) is outside the bounds 4.00 to 12.00 per hour (4 to 12 checkpoints)',
      ]);
    });

    it('says why when even the optimum misses the deadline, or the slot is too short: exit 1', async () => {
      const late = await wsag([...example, '--deadline-seconds', '5699']);
      expect(late.code).toBe(1);
      expect(late.out).toEqual([]);
      expect(late.err).toEqual([
        'error: no checkpoint plan fits: even the best checkpoint plan (7 checkpoints) needs 5700 s with 2 covered outage(s), but only 5699 s remain until the deadline',
      ]);
      const short = await wsag([...example, '--deadline-seconds', '6000', '--slot-seconds', '3700']);
      expect(short.code).toBe(1);
      expect(short.err).toEqual([
        'error: no checkpoint plan fits: the free slot is too short for the 4 checkpoints the deadline needs',
      ]);
    });
  });

  describe('bad input: a usage error naming the option, exit 2', () => {
    const cases: [string[], string][] = [
      [[], "error: --runtime SECONDS is required (t_i, the job's runtime)"],
      [['--runtime', 'abc'], 'error: --runtime must be a number greater than 0, got "abc"'],
      [['--runtime=-5'], 'error: --runtime must be a number greater than 0, got "-5"'],
      [['--runtime', '0'], 'error: --runtime must be a number greater than 0, got "0"'],
      [
        ['--runtime', '3600', '--checkpoint-cost', '-1'],
        'error: --checkpoint-cost needs a value; a value that starts with "-" is written --checkpoint-cost=-VALUE',
      ],
      [
        ['--runtime', '3600', '--checkpoint-cost=-1'],
        'error: --checkpoint-cost must be a number greater than 0, got "-1"',
      ],
      [
        ['--runtime', '3600', '--checkpoint-cost', '2m'],
        'error: --checkpoint-cost must be a number greater than 0, got "2m"',
      ],
      [['--runtime', '3600', '--outages', '1.5'], 'error: --outages must be a whole number, 0 or more, got "1.5"'],
      [['--runtime', '3600', '--outages=-1'], 'error: --outages must be a whole number, 0 or more, got "-1"'],
      [['--runtime', '3600', '--slowdown', '0.9'], 'error: --slowdown must be a number, 1 or more, got "0.9"'],
      [['--runtime', '3600', '--nodes', '0'], 'error: --nodes must be a whole number, 1 or more, got "0"'],
      [['--runtime', '3600', '--memory-gb', 'lots'], 'error: --memory-gb must be a number greater than 0, got "lots"'],
      [['--runtime', '3600', '--storage-gb=-2'], 'error: --storage-gb must be a number, 0 or more, got "-2"'],
      [
        ['--runtime', '3600', '--deadline-seconds', 'soon'],
        'error: --deadline-seconds must be a number greater than 0, got "soon"',
      ],
      [['--runtime', '3600', '--frequency', 'x'], 'error: --frequency must be a number, 0 or more, got "x"'],
      [['--runtime', '3600', '--slot-seconds', '100'], 'error: --slot-seconds needs --deadline-seconds'],
      [
        ['--runtime', '3600', '--checkpoint-cost', '120', '--nodes', '4'],
        'error: give either --checkpoint-cost or --nodes/--memory-gb/--sequential to derive it, not both',
      ],
      [['--runtime'], "error: Option '--runtime <value>' argument missing"],
      [['--runtime', '3600', '--url', 'http://x'], 'error: unknown option --url'],
    ];
    for (const [argv, message] of cases) {
      it(`wsag checkpoint ${argv.join(' ')}`, async () => {
        const result = await wsag(['checkpoint', ...argv]);
        expect(result.code).toBe(2);
        expect(result.out).toEqual([]);
        expect(result.err[0]).toBe(message);
        expect(result.err[1]).toMatch(/^usage: wsag checkpoint --runtime SECONDS /);
      });
    }
  });

  it("is listed in wsag help, and wsag help checkpoint explains --slowdown's default", async () => {
    const help = await wsag(['help']);
    expect(help.stdout).toMatch(/^ {2}checkpoint /m);
    const own = await wsag(['help', 'checkpoint']);
    expect(own.code).toBe(0);
    expect(own.out[0]).toMatch(/^usage: wsag checkpoint --runtime SECONDS/);
    expect(own.stdout).toContain('--slowdown FACTOR  f_slow (3.3); default 1, so --runtime is t_hat itself');
    expect(own.stdout).toContain('wsag checkpoint --runtime 3600 --checkpoint-cost 120 --outages 2');
  });
});
