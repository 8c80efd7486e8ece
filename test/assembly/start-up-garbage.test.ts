import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectStartUpGarbage } from '../../src/assembly/start-up-garbage.js';

const heapUsed = () => v8.getHeapStatistics().used_heap_size;

/** About 80 MB the caller drops at once, as the start-up drops the agreements it read. */
function garbage(): void {
  let kept: number[][] | undefined = Array.from({ length: 200 }, () =>
    Array.from({ length: 50_000 }, (_, i) => i + 0.5),
  );
  expect(kept.length).toBe(200);
  kept = undefined;
}

describe('collectStartUpGarbage', () => {
  it('collects what the start-up left once it restored many bookings', () => {
    garbage();
    const before = heapUsed();
    collectStartUpGarbage(100_000);
    expect(before - heapUsed()).toBeGreaterThan(50 * 2 ** 20);
  });
});
