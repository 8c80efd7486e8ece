import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type NodeBooking, NodeTimeline } from '../../src/scheduler/node-timeline.js';

/**
 * The node timeline keeps its bookings in blocks with summaries so searches skip whole
 * stretches; these properties hold it to a plain sorted list answering every question by
 * a scan, over random bookings, releases and soft/firm changes.
 */

type Op =
  | { type: 'add'; start: number; length: number; soft: boolean }
  | { type: 'remove'; pick: number }
  | { type: 'soft'; pick: number; soft: boolean }
  | { type: 'end'; pick: number; length: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('add' as const),
      start: fc.integer({ min: 0, max: 8000 }),
      length: fc.integer({ min: 1, max: 40 }),
      soft: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('soft' as const), pick: fc.nat(), soft: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('end' as const),
      pick: fc.nat(),
      length: fc.integer({ min: 1, max: 60 }),
    }),
  },
);
const query = fc.record({
  t: fc.integer({ min: -10, max: 8100 }),
  duration: fc.integer({ min: 1, max: 120 }),
  soft: fc.boolean(),
  ignore: fc.boolean(),
});

/** The plain model: a sorted list, every question a scan. */
function modelEarliest(list: NodeBooking[], t: number, duration: number, soft: boolean, ignore?: string): number {
  let candidate = t;
  for (const b of list) {
    if (b.end <= t || (soft && b.soft) || b.owner === ignore) continue;
    if (b.start >= candidate + duration) break;
    candidate = Math.max(candidate, b.end);
  }
  return candidate;
}

describe('node timeline against a plain sorted list', () => {
  it('answers earliestFree, isFree, freeSince and overlapping as a scan would', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 500 }),
        fc.array(query, { minLength: 1, maxLength: 30 }),
        (ops, queries) => {
          const timeline = new NodeTimeline();
          let list: NodeBooking[] = [];
          ops.forEach((o, i) => {
            if (o.type === 'add') {
              const booking = { start: o.start, end: o.start + o.length, owner: `j${i}`, soft: o.soft };
              if (list.some((b) => b.start < booking.end && booking.start < b.end)) {
                expect(() => timeline.add({ ...booking })).toThrow(/double-booked/);
                return;
              }
              timeline.add({ ...booking });
              list = [...list, booking].sort((a, b) => a.start - b.start);
            } else if (list.length > 0) {
              const b = list[o.pick % list.length] as NodeBooking;
              if (o.type === 'remove') {
                expect(timeline.remove(b.owner, b.start)).toBe(true);
                list = list.filter((x) => x !== b);
              } else if (o.type === 'end') {
                // Cut short or grown up to the next booking (a job cut at a failure, a rollback putting it back).
                const next = list.find((x) => x.start > b.start);
                const end = Math.min(b.start + o.length, next ? next.start : Number.POSITIVE_INFINITY);
                expect(timeline.setEnd(b.owner, b.start, end)).toBe(true);
                b.end = end;
              } else {
                timeline.setSoft(b.owner, b.start, o.soft);
                b.soft = o.soft;
              }
            }
          });
          expect(timeline.setEnd('nobody', -1, 5)).toBe(false);
          expect(timeline.lastEnd).toBe(
            list.length > 0 ? (list[list.length - 1] as NodeBooking).end : Number.NEGATIVE_INFINITY,
          );
          expect(timeline.bookings.map((b) => [b.start, b.end, b.owner, b.soft === true])).toEqual(
            list.map((b) => [b.start, b.end, b.owner, b.soft === true]),
          );
          for (const q of queries) {
            const ignore =
              q.ignore && list.length > 0 ? (list[q.t % list.length] as NodeBooking | undefined)?.owner : undefined;
            const expected = modelEarliest(list, q.t, q.duration, q.soft, ignore);
            expect(
              timeline.earliestFree(q.t, q.duration, { soft: q.soft, ...(ignore ? { ignoreOwner: ignore } : {}) }),
            ).toBe(expected);
            expect(timeline.isFree(q.t, q.t + q.duration, ignore, undefined, q.soft)).toBe(expected === q.t);
            const before = list.filter((b) => b.end <= q.t);
            expect(timeline.freeSince(q.t)).toBe(
              before.length > 0 ? (before[before.length - 1] as NodeBooking).end : Number.NEGATIVE_INFINITY,
            );
            const overlapping = list.filter((b) => b.start < q.t + q.duration && b.end > q.t).map((b) => b.owner);
            expect(timeline.overlapping(q.t, q.t + q.duration).map((b) => b.owner)).toEqual(overlapping);
            expect(timeline.ownersOverlapping(q.t, q.t + q.duration)).toEqual([...new Set(overlapping)]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps its blocks right while many bookings come and go', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 50, maxLength: 600 }),
        fc.array(fc.nat(), { maxLength: 600 }),
        fc.array(query, { minLength: 1, maxLength: 20 }),
        (starts, removals, queries) => {
          const timeline = new NodeTimeline();
          let list: NodeBooking[] = [];
          for (const [i, start] of [...new Set(starts.map((x) => x * 10))].entries()) {
            const booking = { start, end: start + 5 + (i % 4), owner: `j${i}`, soft: i % 3 === 0 };
            timeline.add({ ...booking });
            list.push(booking);
          }
          list.sort((a, b) => a.start - b.start);
          for (const r of removals) {
            if (list.length === 0) break;
            const b = list[r % list.length] as NodeBooking;
            expect(timeline.remove(b.owner, b.start)).toBe(true);
            list = list.filter((x) => x !== b);
          }
          expect(timeline.bookings.map((b) => b.start)).toEqual(list.map((b) => b.start));
          for (const q of queries) {
            const t = q.t * 1000;
            expect(timeline.earliestFree(t, q.duration, { soft: q.soft })).toBe(
              modelEarliest(list, t, q.duration, q.soft),
            );
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('finds the first long enough gap in a packed timeline, however many bookings it skips', () => {
    // Bookings one after another with short gaps between them: a query for a longer
    // stretch skips many of them (and their summaries) before the answer.
    const piece = fc.record({
      gap: fc.integer({ min: 0, max: 12 }),
      length: fc.integer({ min: 1, max: 20 }),
      soft: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 20, maxLength: 400 }),
        fc.array(fc.record({ pick: fc.nat(), cut: fc.nat() }), { maxLength: 120 }),
        fc.array(fc.record({ at: fc.nat(), duration: fc.integer({ min: 1, max: 60 }), soft: fc.boolean() }), {
          minLength: 1,
          maxLength: 40,
        }),
        (pieces, changes, queries) => {
          const timeline = new NodeTimeline();
          let list: NodeBooking[] = [];
          let t = 0;
          pieces.forEach((p, i) => {
            t += p.gap;
            // Owners repeat (a job with several pieces on the node).
            const booking = { start: t, end: t + p.length, owner: `j${i % 23}`, soft: p.soft };
            t += p.length;
            timeline.add({ ...booking });
            list.push(booking);
          });
          // Some leave, some are cut short (a job stopped at a failure).
          for (const c of changes) {
            if (list.length === 0) break;
            const b = list[c.pick % list.length] as NodeBooking;
            if (c.cut % 2 === 0) {
              expect(timeline.remove(b.owner, b.start)).toBe(true);
              list = list.filter((x) => x !== b);
            } else {
              const end = b.start + 1 + (c.cut % (b.end - b.start));
              expect(timeline.setEnd(b.owner, b.start, end)).toBe(true);
              b.end = end;
            }
          }
          for (const q of queries) {
            const at = q.at % (t + 10);
            expect(timeline.earliestFree(at, q.duration, { soft: q.soft })).toBe(
              modelEarliest(list, at, q.duration, q.soft),
            );
            // The free stretch found: free from every start up to `latest`, and not one later.
            const out = new Float64Array(1);
            const latest = new Float64Array(1);
            timeline.earliestFreeInto(
              at,
              q.duration,
              { soft: q.soft },
              Number.POSITIVE_INFINITY,
              Number.POSITIVE_INFINITY,
              out,
              latest,
              0,
            );
            const from = out[0] as number;
            const last = latest[0] as number;
            expect(last).toBeGreaterThanOrEqual(from);
            for (const start of [from, Math.floor((from + Math.min(last, from + 100)) / 2), Math.min(last, from + 100)])
              expect(modelEarliest(list, start, q.duration, q.soft)).toBe(start);
            if (Number.isFinite(last)) expect(modelEarliest(list, last + 1, q.duration, q.soft)).not.toBe(last + 1);
            const before = list.filter((b) => b.end <= at);
            expect(timeline.freeSince(at)).toBe(
              before.length > 0 ? (before[before.length - 1] as NodeBooking).end : Number.NEGATIVE_INFINITY,
            );
            // How long that answer holds: until the next booking's end, where it becomes that end.
            const sinceModel = (x: number) =>
              list.filter((b) => b.end <= x).reduce((e, b) => Math.max(e, b.end), Number.NEGATIVE_INFINITY);
            const sinceOut = new Float64Array(1);
            const holds = new Float64Array(1);
            timeline.freeSinceInto(at, sinceOut, holds, 0);
            expect(sinceOut[0]).toBe(sinceModel(at));
            const changes = holds[0] as number;
            if (Number.isFinite(changes)) {
              expect(sinceModel(changes - 1)).toBe(sinceModel(at));
              expect(sinceModel(changes)).toBe(changes);
            } else expect(sinceModel(Number.MAX_SAFE_INTEGER)).toBe(sinceModel(at));
            const until = at + q.duration * 20;
            expect(timeline.ownersOverlapping(at, until)).toEqual([
              ...new Set(list.filter((b) => b.start < until && b.end > at).map((b) => b.owner)),
            ]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds the gap a booking cut short opens, wherever the booking sits', () => {
    // Touching bookings; each search first reads every summary, then one booking is cut
    // short (a job stopped at a failure) and the stretch it frees is the first gap.
    for (let k = 0; k < 80; k++) {
      const timeline = new NodeTimeline();
      for (let i = 0; i < 80; i++) timeline.add({ start: 10 * i, end: 10 * i + 10, owner: `j${i}` });
      expect(timeline.earliestFree(0, 7)).toBe(800);
      expect(timeline.setEnd(`j${k}`, 10 * k, 10 * k + 3)).toBe(true); // frees 7
      expect(timeline.earliestFree(0, 7)).toBe(10 * k + 3);
      expect(timeline.earliestFree(0, 8)).toBe(k === 79 ? 10 * k + 3 : 800);
      expect(timeline.setEnd(`j${k}`, 10 * k, 10 * k + 10)).toBe(true); // put back
      expect(timeline.earliestFree(0, 7)).toBe(800);
    }
  });
});
