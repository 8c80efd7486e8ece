import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type NodeBooking, NodeTimeline } from '../../src/scheduler/node-timeline.js';

/**
 * The node timeline keeps its bookings in blocks with summaries so searches skip whole
 * stretches; these properties hold it to a plain sorted list answering every question by
 * a scan, over random bookings, releases and soft/firm changes.
 */

type Op = { type: 'add'; start: number; length: number; soft: boolean } | { type: 'remove'; pick: number } | { type: 'soft'; pick: number; soft: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant('add' as const), start: fc.integer({ min: 0, max: 8000 }), length: fc.integer({ min: 1, max: 40 }), soft: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('soft' as const), pick: fc.nat(), soft: fc.boolean() }) },
);
const query = fc.record({ t: fc.integer({ min: -10, max: 8100 }), duration: fc.integer({ min: 1, max: 120 }), soft: fc.boolean(), ignore: fc.boolean() });

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
      fc.property(fc.array(op, { maxLength: 500 }), fc.array(query, { minLength: 1, maxLength: 30 }), (ops, queries) => {
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
            } else {
              timeline.setSoft(b.owner, b.start, o.soft);
              b.soft = o.soft;
            }
          }
        });
        expect(timeline.bookings.map((b) => [b.start, b.end, b.owner, b.soft === true])).toEqual(list.map((b) => [b.start, b.end, b.owner, b.soft === true]));
        for (const q of queries) {
          const ignore = q.ignore && list.length > 0 ? (list[q.t % list.length] as NodeBooking | undefined)?.owner : undefined;
          const expected = modelEarliest(list, q.t, q.duration, q.soft, ignore);
          expect(timeline.earliestFree(q.t, q.duration, { soft: q.soft, ...(ignore ? { ignoreOwner: ignore } : {}) })).toBe(expected);
          expect(timeline.isFree(q.t, q.t + q.duration, ignore, undefined, q.soft)).toBe(expected === q.t);
          const before = list.filter((b) => b.end <= q.t);
          expect(timeline.freeSince(q.t)).toBe(before.length > 0 ? (before[before.length - 1] as NodeBooking).end : Number.NEGATIVE_INFINITY);
          expect(timeline.overlapping(q.t, q.t + q.duration).map((b) => b.owner)).toEqual(list.filter((b) => b.start < q.t + q.duration && b.end > q.t).map((b) => b.owner));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps its blocks right while many bookings come and go', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 50, maxLength: 600 }), fc.array(fc.nat(), { maxLength: 600 }), fc.array(query, { minLength: 1, maxLength: 20 }), (starts, removals, queries) => {
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
          expect(timeline.earliestFree(t, q.duration, { soft: q.soft })).toBe(modelEarliest(list, t, q.duration, q.soft));
        }
      }),
      { numRuns: 100 },
    );
  });
});
