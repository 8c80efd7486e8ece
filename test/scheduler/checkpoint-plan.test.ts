import { describe, expect, it } from 'vitest';
import {
  checkpointBounds,
  checkpointSeconds,
  checkpointSizeMB,
  checkpointTiming,
  chooseCheckpointCount,
  computeIntervalSeconds,
  countForFrequency,
  estimatedRuntimeSeconds,
  initNewSeconds,
  initRestartSeconds,
  jobMaxSeconds,
  migrationSeconds,
  minSlotSeconds,
  optimalCheckpointCount,
  payingCheckpointCount,
  perHour,
  planFor,
  youngDalyIntervalSeconds,
  worstCaseSlotSeconds,
  type CheckpointTiming,
} from '../../src/scheduler/checkpoint-plan.js';
import { defaultSiteTiming, type SiteTiming } from '../../src/scheduler/site.js';

/**
 * The seed's worked example (002 section 3.4.6): t_hat 3600 s, t_cp 120 s, n_romax 2, a
 * local restart (t_migr 0), with the default site's initialisation (35 s without storage)
 * and deinitialisation (15 s). Its worst case is 3960 + 120 n + 7200 / (n + 1) seconds,
 * smallest at n = 7 (5700 s); t_minslot is 3650 + 120 n.
 */
const example: CheckpointTiming = {
  tInitNew: 35,
  tInitRestart: 35,
  tHat: 3600,
  tCp: 120,
  tDeinit: 15,
  tMigr: 0,
  outages: 2,
};

/** f(x) of 3.12 for a local restart. */
const f = (tHat: number, n: number, tCp: number, outages: number) => jobMaxSeconds(tHat, n, tCp, outages, 0);

describe('initialisation and runtime (3.1-3.3)', () => {
  it('(3.1) t_initnew = t_nodeinit + t_stinit(s) + t_stmount', () => {
    expect(initNewSeconds(defaultSiteTiming, 0)).toBe(35);
    expect(initNewSeconds(defaultSiteTiming, 100)).toBe(30 + 0.5 * 100 + 5);
  });

  it('(3.2) t_initrestart = t_nodeinit + t_strollback(s) + t_stmount', () => {
    expect(initRestartSeconds(defaultSiteTiming, 0)).toBe(35);
    expect(initRestartSeconds(defaultSiteTiming, 100)).toBe(30 + 1 * 100 + 5);
  });

  it('(3.3) t_hat = f_slow * t', () => {
    expect(estimatedRuntimeSeconds(defaultSiteTiming, 3600)).toBeCloseTo(3636, 9);
    expect(estimatedRuntimeSeconds({ ...defaultSiteTiming, slowdownFactor: 1 }, 3600)).toBe(3600);
  });
});

/** A site with measured checkpoint costs fixed here, so the figures below do not follow the defaults. */
const measured: SiteTiming = { ...defaultSiteTiming, checkpointSecondsPerNodeGB: 0.25, snapshotSecondsPerGB: 0.1 };

describe('(3.4) checkpoint cost', () => {
  const sequential: SiteTiming = { ...measured, parallelCheckpoint: false };
  const parallel: SiteTiming = { ...measured, parallelCheckpoint: true };

  it('a sequential checkpointer costs |P| * t_cpnode(m) + t_snapshot(s)', () => {
    // 4 nodes x 0.25 s/GB x 16 GB + 0.1 s/GB x 100 GB
    expect(checkpointSeconds(sequential, 4, 16, 100)).toBeCloseTo(4 * 4 + 10, 9);
    expect(checkpointSeconds(sequential, 8, 16, 100)).toBeCloseTo(8 * 4 + 10, 9);
  });

  it("a parallel checkpointer costs one node's time, whatever the node count", () => {
    expect(checkpointSeconds(parallel, 4, 16, 100)).toBeCloseTo(4 + 10, 9);
    expect(checkpointSeconds(parallel, 64, 16, 100)).toBeCloseTo(4 + 10, 9);
    expect(checkpointSeconds(parallel, 1, 16, 100)).toBeCloseTo(checkpointSeconds(sequential, 1, 16, 100), 9);
  });

  it('grows linearly with memory and storage', () => {
    expect(checkpointSeconds(sequential, 2, 32, 0)).toBeCloseTo(2 * checkpointSeconds(sequential, 2, 16, 0), 9);
    expect(checkpointSeconds(parallel, 1, 0, 200)).toBeCloseTo(2 * checkpointSeconds(parallel, 1, 0, 100), 9);
  });
});

describe('(3.5) migration', () => {
  it('t_migr = s_cp / bw(A,B)', () => {
    expect(migrationSeconds(1000, 100)).toBe(10);
    expect(migrationSeconds(checkpointSizeMB(4, 16, 100), 100)).toBeCloseTo(((4 * 16 + 100) * 1024) / 100, 9);
  });

  it('is infinite without bandwidth', () => {
    expect(migrationSeconds(1000, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(migrationSeconds(1000, -5)).toBe(Number.POSITIVE_INFINITY);
    expect(migrationSeconds(0, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it("the checkpoint holds every node's memory and the storage, in MB", () => {
    expect(checkpointSizeMB(4, 16, 100)).toBe(164 * 1024);
    expect(checkpointSizeMB(1, 0, 0)).toBe(0);
  });
});

describe('compute interval, slot and worst case (3.6-3.8)', () => {
  it('(3.6) t_compint = t_hat / (n_cp + 1)', () => {
    expect(computeIntervalSeconds(3600, 7)).toBe(450);
    expect(computeIntervalSeconds(3600, 0)).toBe(3600); // no checkpoints: restart from scratch
  });

  it('(3.7) t_minslot = t_initnew + t_hat + n_cp t_cp + t_deinit', () => {
    expect(minSlotSeconds(35, 3600, 7, 120, 15)).toBe(35 + 3600 + 840 + 15);
    expect(minSlotSeconds(35, 3600, 0, 120, 15)).toBe(3650);
  });

  it("(3.8) the seed's example: f(7) = 3600 + 7*120 + 2*3600/8 = 5340", () => {
    expect(jobMaxSeconds(3600, 7, 120, 2, 0)).toBe(5340);
  });

  it('(3.8) adds t_migr once per covered outage', () => {
    expect(jobMaxSeconds(3600, 7, 120, 2, 60)).toBe(5340 + 2 * 60);
    expect(jobMaxSeconds(3600, 7, 120, 2, Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });

  it('(3.8) without covered outages is t_hat + n_cp t_cp, even without bandwidth (no NaN)', () => {
    expect(jobMaxSeconds(3600, 7, 120, 0, 0)).toBe(4440);
    expect(jobMaxSeconds(3600, 7, 120, 0, Number.POSITIVE_INFINITY)).toBe(4440);
  });

  it('the worst-case slot adds initialisation, a restart and a lost checkpoint per outage, and deinitialisation', () => {
    // 35 + 5340 + 2 * (35 + 120) + 15
    expect(worstCaseSlotSeconds(example, 7)).toBe(5700);
    expect(worstCaseSlotSeconds({ ...example, outages: 0 }, 7)).toBe(minSlotSeconds(35, 3600, 7, 120, 15));
    expect(worstCaseSlotSeconds({ ...example, tMigr: 100 }, 7)).toBe(5900);
  });
});

describe('(3.12-3.17) optimalCheckpointCount', () => {
  it("the seed's example: x = -1 + sqrt(60) = 6.746, rounded up to 7, f(7) = 5340", () => {
    expect(-1 + Math.sqrt((2 * 3600) / 120)).toBeCloseTo(6.745967, 6);
    const n = optimalCheckpointCount(3600, 120, 2);
    expect(n).toBe(7);
    expect(jobMaxSeconds(3600, n, 120, 2, 0)).toBe(5340);
    expect(f(3600, 6, 120, 2)).toBeGreaterThan(5340);
    expect(f(3600, 8, 120, 2)).toBeGreaterThan(5340);
  });

  it('one outage: about 4 (figure 3.2); 4 and 5 tie at 4800 s and the fewer is taken', () => {
    const n = optimalCheckpointCount(3600, 120, 1);
    expect(n).toBe(4);
    expect(f(3600, 4, 120, 1)).toBe(4800);
    expect(f(3600, 5, 120, 1)).toBe(4800);
    expect(f(3600, 3, 120, 1)).toBeGreaterThan(4800);
    expect(f(3600, 6, 120, 1)).toBeGreaterThan(4800);
  });

  it('more outages, more checkpoints', () => {
    expect(optimalCheckpointCount(3600, 120, 3)).toBeGreaterThan(optimalCheckpointCount(3600, 120, 2));
  });

  it("no covered outages: no checkpoints (figure 3.2's lowest curve)", () => {
    expect(optimalCheckpointCount(3600, 120, 0)).toBe(0);
  });

  it('no checkpoints for no runtime, or when one checkpoint costs more than it saves', () => {
    expect(optimalCheckpointCount(0, 120, 2)).toBe(0);
    expect(optimalCheckpointCount(3600, 4000, 1)).toBe(0); // x = -1 + sqrt(0.9) < 0
    expect(optimalCheckpointCount(3600, 1800, 1)).toBe(0); // x = sqrt(2) - 1 = 0.41: f(0) = f(1) = 7200, the fewer taken
  });

  it('free checkpoints: as many as whole seconds of computation', () => {
    expect(optimalCheckpointCount(3600, 0, 1)).toBe(3600);
  });

  it('is the whole count that minimises f, for many inputs', () => {
    for (const [tHat, tCp, outages] of [
      [3600, 120, 1],
      [3600, 120, 2],
      [3636, 14, 1],
      [86400, 300, 3],
      [7200, 7, 4],
      [600, 50, 1],
      [100000, 1, 2],
    ] as const) {
      const n = optimalCheckpointCount(tHat, tCp, outages);
      let best = 0;
      for (let k = 1; k <= Math.min(2000, tHat); k++)
        if (f(tHat, k, tCp, outages) < f(tHat, best, tCp, outages)) best = k;
      expect(f(tHat, n, tCp, outages)).toBeCloseTo(f(tHat, best, tCp, outages), 9);
      expect(n).toBe(best); // the fewest of the minimising counts
    }
  });
});

describe('checkpointTiming', () => {
  it('computes every input of the formulas for one job', () => {
    const site: SiteTiming = { ...measured, parallelCheckpoint: false };
    const timing = checkpointTiming(site, {
      runtimeSeconds: 3600,
      nodes: 4,
      memoryPerNodeGB: 16,
      storageGB: 100,
      coveredOutages: 2,
      migrationSeconds: 12,
    });
    expect(timing.tInitNew).toBe(85);
    expect(timing.tInitRestart).toBe(135);
    expect(timing.tHat).toBeCloseTo(3636, 9);
    expect(timing.tCp).toBeCloseTo(26, 9);
    expect(timing.tDeinit).toBe(15);
    expect(timing.tMigr).toBe(12);
    expect(timing.outages).toBe(2);
  });
});

describe('perHour and countForFrequency', () => {
  it('count <-> checkpoints per hour of computation (t_hat)', () => {
    expect(perHour(7, 3600)).toBe(7);
    expect(perHour(7, 7200)).toBe(3.5);
    expect(perHour(3, 0)).toBe(0);
    expect(countForFrequency(2, 7200)).toBe(4);
    expect(countForFrequency(7, 3600)).toBe(7);
    expect(countForFrequency(0.1, 3600)).toBe(0);
    expect(countForFrequency(1.6, 3600)).toBe(2); // rounded
    expect(countForFrequency(-1, 3600)).toBe(0);
  });
});

describe('(3.9-3.11) checkpointBounds', () => {
  it('min <= optimum <= max, and exactly the counts in [min, max] fit before the deadline', () => {
    const bounds = checkpointBounds(example, 6000, 6000);
    expect(bounds).toEqual({ min: 4, max: 12, slotMax: 19 });
    const optimum = optimalCheckpointCount(example.tHat, example.tCp, example.outages);
    expect(bounds!.min).toBeLessThanOrEqual(optimum);
    expect(optimum).toBeLessThanOrEqual(bounds!.max);
    for (let n = 0; n <= 100; n++) {
      const fits = worstCaseSlotSeconds(example, n) <= 6000;
      expect({ n, fits }).toEqual({ n, fits: n >= bounds!.min && n <= bounds!.max });
    }
    expect(worstCaseSlotSeconds(example, 3)).toBeGreaterThan(6000);
    expect(worstCaseSlotSeconds(example, 13)).toBeGreaterThan(6000);
  });

  it('a deadline that only the optimum meets gives min = max = optimum', () => {
    expect(checkpointBounds(example, 5700, 6000)).toMatchObject({ min: 7, max: 7 });
  });

  it('undefined when no count fits', () => {
    expect(checkpointBounds(example, 5699, 6000)).toBeUndefined();
    expect(checkpointBounds({ ...example, tMigr: Number.POSITIVE_INFINITY }, 1e9, 1e9)).toBeUndefined();
  });

  it('slotMax: the most checkpoints for which t_minslot fits in the free slot', () => {
    expect(checkpointBounds(example, 6000, 4490)?.slotMax).toBe(7); // t_minslot(7) = 4490
    expect(checkpointBounds(example, 6000, 4489)?.slotMax).toBe(6);
    expect(checkpointBounds(example, 6000, 3650)?.slotMax).toBe(0);
    expect(checkpointBounds(example, 6000, 3649)?.slotMax).toBeLessThan(0);
  });

  it('without covered outages: from no checkpoints up to what the deadline leaves room for', () => {
    const noOutages = { ...example, outages: 0 };
    expect(checkpointBounds(noOutages, 4490, 4490)).toEqual({ min: 0, max: 7, slotMax: 7 });
  });

  it('free checkpoints (t_cp 0): slotMax only when the job fits in the slot', () => {
    const free = { ...example, tCp: 0 };
    expect(checkpointBounds(free, 1e6, 3650)?.slotMax).toBe(3600);
    expect(checkpointBounds(free, 1e6, 3649)?.slotMax).toBe(-1);
  });
});

describe('planFor', () => {
  it("the seed's example with 7 checkpoints", () => {
    expect(planFor(example, 7)).toEqual({
      count: 7,
      intervalSeconds: 450,
      checkpointSeconds: 120,
      minSlotSeconds: 4490,
      jobMaxSeconds: 5340,
      worstCaseSeconds: 5700,
      outages: 2,
    });
  });

  it('no checkpoints: the whole run is one interval', () => {
    expect(planFor(example, 0)).toMatchObject({
      count: 0,
      intervalSeconds: 3600,
      minSlotSeconds: 3650,
      jobMaxSeconds: 10800,
    });
  });
});

describe('chooseCheckpointCount', () => {
  it('without a requested frequency: the optimum when it lies within the bounds', () => {
    expect(chooseCheckpointCount(example, 6000, 6000)).toEqual({ count: 7 });
  });

  it('the optimum clamped into the bounds when the free slot is shorter', () => {
    // slotMax = floor((4370 - 3650) / 120) = 6, min 4
    expect(chooseCheckpointCount(example, 6000, 4370)).toEqual({ count: 6 });
  });

  it('a requested frequency inside the bounds is taken as it is', () => {
    expect(chooseCheckpointCount(example, 6000, 6000, 5)).toEqual({ count: 5 });
    expect(chooseCheckpointCount(example, 6000, 6000, 4)).toEqual({ count: 4 });
    expect(chooseCheckpointCount(example, 6000, 6000, 12)).toEqual({ count: 12 });
  });

  it('a requested frequency outside the bounds is refused with a reason naming the bounds', () => {
    const low = chooseCheckpointCount(example, 6000, 6000, 1);
    expect(low).toEqual({
      reason:
        'checkpoint frequency 1 per hour (1 checkpoints) is outside the bounds 4.00 to 12.00 per hour (4 to 12 checkpoints)',
    });
    const high = chooseCheckpointCount(example, 6000, 6000, 13);
    expect('reason' in high && high.reason).toContain('(4 to 12 checkpoints)');
    // The slot, not the deadline, sets the upper bound here.
    const slot = chooseCheckpointCount(example, 6000, 4370, 7);
    expect('reason' in slot && slot.reason).toContain('4.00 to 6.00 per hour (4 to 6 checkpoints)');
  });

  it('a reason when the slot is too short for the checkpoints the deadline needs', () => {
    expect(chooseCheckpointCount(example, 6000, 3700)).toEqual({
      reason: 'the free slot is too short for the 4 checkpoints the deadline needs',
    });
  });

  it('a reason when even the optimum misses the deadline', () => {
    expect(chooseCheckpointCount(example, 5699, 6000)).toEqual({
      reason:
        'even the best checkpoint plan (7 checkpoints) needs 5700 s with 2 covered outage(s), but only 5699 s remain until the deadline',
    });
  });

  it('free checkpoints and a slot shorter than the job: a reason, not a count', () => {
    expect(chooseCheckpointCount({ ...example, tCp: 0 }, 1e6, 3649)).toHaveProperty('reason');
  });
});

describe('checkpoints by need', () => {
  // The example's worst case 3960 + 120 n + 7200 / (n + 1): 4 checkpoints (5760 s) are the fewest
  // that keep a deadline 6000 s away, 2 (6570 s) for one 7000 s away, none beyond 11160 s.
  const byNeed = { shortestBooking: false, paying: 0 };

  it('the fewest checkpoints that keep the deadline, not the optimum', () => {
    expect(chooseCheckpointCount(example, 6000, 6000, undefined, byNeed)).toEqual({ count: 4 });
    expect(chooseCheckpointCount(example, 7000, 7000, undefined, byNeed)).toEqual({ count: 2 });
    expect(chooseCheckpointCount(example, 11_160, 11_160, undefined, byNeed)).toEqual({ count: 0 });
    // The booking (t_minslot, 3.7) is what the count saves: 3650 + 120 n.
    expect(planFor(example, 2).minSlotSeconds).toBe(3890);
    expect(planFor(example, 7).minSlotSeconds).toBe(4490);
  });

  it('at least those that pay for themselves, within the bounds', () => {
    expect(chooseCheckpointCount(example, 7000, 7000, undefined, { ...byNeed, paying: 5 })).toEqual({ count: 5 });
    expect(chooseCheckpointCount(example, 6000, 6000, undefined, { ...byNeed, paying: 20 })).toEqual({ count: 12 });
  });

  it('a worst-case booking (Enhanced, Full) keeps the optimum, whose booking is shortest', () => {
    expect(chooseCheckpointCount(example, 7000, 7000, undefined, { shortestBooking: true, paying: 0 })).toEqual({
      count: 7,
    });
  });

  it("Young/Daly's interval: sqrt(2 t_cp M) - t_cp for the job's mean time between failures", () => {
    // 8 nodes at 0.02 failures a day: M = 86400 / 0.16 = 540000 s; t_cp 64 s.
    expect(youngDalyIntervalSeconds(64, 8, 0.02)).toBeCloseTo(Math.sqrt(2 * 64 * 540_000) - 64, 6);
    expect(youngDalyIntervalSeconds(64, 8, 0)).toBe(Number.POSITIVE_INFINITY);
    // A checkpoint slower than twice M: the interval is M.
    expect(youngDalyIntervalSeconds(2_000_000, 8, 0.02)).toBe(540_000);
  });

  it('the checkpoints that pay: none for a job shorter than the interval, one per interval beyond', () => {
    const interval = youngDalyIntervalSeconds(64, 8, 0.02); // about 8250 s
    expect(payingCheckpointCount(3600, 64, 8, 0.02)).toBe(0);
    expect(payingCheckpointCount(36_000, 64, 8, 0.02)).toBe(Math.ceil(36_000 / interval) - 1);
    expect(payingCheckpointCount(36_000, 64, 8, 0.02)).toBe(4);
    expect(payingCheckpointCount(36_000, 64, 8, 0)).toBe(0);
    // Ten times the failure rate: about three times as many.
    expect(payingCheckpointCount(36_000, 64, 8, 0.2)).toBe(14);
  });
});
