import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapacityProfile } from '../../src/scheduler/capacity-profile.js';

/**
 * The capacity profile keeps its breakpoints in small sorted blocks; these properties
 * hold it to a plain list of the intervals added, every question answered by counting
 * at each instant, over random adds and removals (tiny blocks, so blocks split, empty
 * and merge often).
 */

interface Interval {
  start: number;
  end: number;
  delta: number;
}

const busyAt = (intervals: Interval[], t: number) =>
  intervals.reduce((sum, i) => (i.start <= t && t < i.end ? sum + i.delta : sum), 0);

/** Every instant where the count may change, sorted. */
const changePoints = (intervals: Interval[]) =>
  [...new Set(intervals.flatMap((i) => [i.start, i.end]))].sort((a, b) => a - b);

/** The breakpoints of the canonical step function: where the count differs from just before. */
function breakpoints(intervals: Interval[]): number[] {
  let previous = 0;
  const out: number[] = [];
  for (const t of changePoints(intervals)) {
    const now = busyAt(intervals, t);
    if (now !== previous) out.push(t);
    previous = now;
  }
  return out;
}

function modelFirstFit(intervals: Interval[], from: number, duration: number, maxUsed: number): number {
  const candidates = [from, ...breakpoints(intervals).filter((t) => t > from)];
  const points = breakpoints(intervals);
  for (const c of candidates) {
    const inside = [c, ...points.filter((t) => t > c && t < c + duration)];
    if (inside.every((t) => busyAt(intervals, t) <= maxUsed)) return c;
  }
  throw new Error('unreachable: after the last breakpoint nothing is busy');
}

function modelWindows(
  intervals: Interval[],
  from: number,
  until: number,
  maxUsed: number,
): Array<{ start: number; end: number }> {
  const points = [from, ...breakpoints(intervals).filter((t) => t > from && t < until)];
  const out: Array<{ start: number; end: number }> = [];
  let open: number | undefined;
  for (const t of points) {
    const free = busyAt(intervals, t) <= maxUsed;
    if (free && open === undefined) open = t;
    if (!free && open !== undefined) {
      if (t > open) out.push({ start: open, end: t });
      open = undefined;
    }
  }
  if (open !== undefined && until > open) out.push({ start: open, end: until });
  return out;
}

type Op = { type: 'add'; start: number; length: number; delta: number } | { type: 'remove'; pick: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('add' as const),
      start: fc.integer({ min: 0, max: 300 }),
      length: fc.integer({ min: 0, max: 60 }),
      delta: fc.integer({ min: 1, max: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('remove' as const), pick: fc.nat() }) },
);
const query = fc.record({
  t: fc.integer({ min: -5, max: 380 }),
  duration: fc.integer({ min: 1, max: 80 }),
  maxUsed: fc.integer({ min: 0, max: 8 }),
  span: fc.integer({ min: 0, max: 120 }),
});

describe('capacity profile against a list of intervals', () => {
  it('answers every question as counting would, with blocks splitting and emptying', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(op, { maxLength: 200 }),
        fc.array(query, { minLength: 1, maxLength: 20 }),
        (blockSize, ops, queries) => {
          const profile = new CapacityProfile(blockSize);
          let intervals: Interval[] = [];
          for (const o of ops) {
            if (o.type === 'add') {
              const interval = { start: o.start, end: o.start + o.length, delta: o.delta };
              profile.add(interval.start, interval.end, interval.delta);
              if (interval.end > interval.start) intervals = [...intervals, interval];
            } else if (intervals.length > 0) {
              const gone = intervals[o.pick % intervals.length] as Interval;
              profile.add(gone.start, gone.end, -gone.delta);
              intervals = intervals.filter((i) => i !== gone);
            }
          }
          expect(profile.size).toBe(breakpoints(intervals).length);
          const points = breakpoints(intervals);
          for (const q of queries) {
            const { t, duration, maxUsed } = q;
            expect(profile.at(t)).toBe(busyAt(intervals, t));
            const inside = [t, ...points.filter((p) => p > t && p < t + duration)];
            expect(profile.maxOver(t, t + duration)).toBe(Math.max(...inside.map((p) => busyAt(intervals, p))));
            expect(profile.firstFit(t, duration, maxUsed)).toBe(modelFirstFit(intervals, t, duration, maxUsed));
            expect(profile.nextChangeAfter(t)).toBe(points.find((p) => p > t));
            expect(profile.nextReleaseAfter(t)).toBe(
              points.find((p) => p > t && busyAt(intervals, p) < busyAt(intervals, p - 1)),
            );
            expect(profile.windows(t, t + q.span, maxUsed)).toEqual(modelWindows(intervals, t, t + q.span, maxUsed));
            // Busy node-time over [t, t + span): each interval's overlap times its count.
            const area = intervals.reduce(
              (sum, i) => sum + i.delta * Math.max(0, Math.min(i.end, t + q.span) - Math.max(i.start, t)),
              0,
            );
            expect(profile.busyArea(t, t + q.span)).toBe(area);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
