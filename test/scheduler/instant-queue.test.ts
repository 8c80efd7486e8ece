import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InstantQueue } from '../../src/scheduler/instant-queue.js';

describe('instant queue', () => {
  it('gives back, up to each instant, exactly the ids queued at or before it, earliest first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 200 }),
        fc.array(fc.integer({ min: -5, max: 110 }), { maxLength: 20 }),
        (instants, cuts) => {
          const queue = new InstantQueue();
          const at = new Map(instants.map((t, i) => [`j${i}`, t]));
          for (const [id, t] of at) queue.push(t, id);
          let waiting = [...at.keys()];
          for (const t of [...cuts].sort((a, b) => a - b)) {
            const taken = queue.takeUntil(t);
            const due = waiting.filter((id) => (at.get(id) as number) <= t);
            waiting = waiting.filter((id) => (at.get(id) as number) > t);
            expect([...taken].sort()).toEqual([...due].sort());
            const times = taken.map((id) => at.get(id) as number);
            expect(times).toEqual([...times].sort((a, b) => a - b));
            expect(queue.size).toBe(waiting.length);
          }
        },
      ),
    );
  });

  it('takes nothing before the first instant', () => {
    const queue = new InstantQueue();
    queue.push(10, 'a');
    queue.push(5, 'b');
    expect(queue.takeUntil(4)).toEqual([]);
    expect(queue.takeUntil(5)).toEqual(['b']);
    expect(queue.takeUntil(100)).toEqual(['a']);
    expect(queue.size).toBe(0);
  });
});
