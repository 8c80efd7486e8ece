import { describe, expect, it } from 'vitest';
import { FairStart } from '../../src/soap/fair-start.js';

/** Requests start one per turn of the event loop, in arrival order (src/soap/fair-start.ts). */
describe('FairStart', () => {
  it('starts waiting requests in arrival order, each at a turn of its own', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const fair = new FairStart();
    const started: Array<{ request: number; turn: number }> = [];
    await Promise.all(Array.from({ length: 5 }, (_, request) => fair.turn().then(() => started.push({ request, turn: turns }))));
    ticking = false;
    expect(started.map((s) => s.request)).toEqual([0, 1, 2, 3, 4]);
    const seen = started.map((s) => s.turn);
    expect(new Set(seen).size).toBe(5);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('lets a request that comes alone start at the next turn', async () => {
    const fair = new FairStart();
    await fair.turn();
    await fair.turn();
  });
});
