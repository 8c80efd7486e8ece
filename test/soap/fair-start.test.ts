import { describe, expect, it } from 'vitest';
import { FairStart } from '../../src/soap/fair-start.js';

/** The turns at which `count` requests waiting on `fair` at once start, in the order they start. */
async function startTurns(fair: FairStart, count: number): Promise<Array<{ request: number; turn: number }>> {
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const started: Array<{ request: number; turn: number }> = [];
  await Promise.all(
    Array.from({ length: count }, (_, request) => fair.turn().then(() => started.push({ request, turn: turns }))),
  );
  ticking = false;
  return started;
}

/** Requests start a few per turn of the event loop, in arrival order (src/soap/fair-start.ts). */
describe('FairStart', () => {
  it('starts waiting requests in arrival order, at most its number per turn', async () => {
    const started = await startTurns(new FairStart(4), 10);
    expect(started.map((s) => s.request)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const perTurn = new Map<number, number>();
    for (const { turn } of started) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    expect([...perTurn.values()]).toEqual([4, 4, 2]);
    const seen = started.map((s) => s.turn);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('with one per turn, starts each at a turn of its own', async () => {
    const seen = (await startTurns(new FairStart(1), 5)).map((s) => s.turn);
    expect(new Set(seen).size).toBe(5);
  });

  it('lets a request that comes alone start at the next turn', async () => {
    const fair = new FairStart();
    await fair.turn();
    await fair.turn();
  });
});
