import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimulatedClock, SystemClock } from '../../src/runtime/clock.js';

const T0 = Date.UTC(2026, 10, 23, 0, 0, 0);
const t = (ms: number) => new Date(T0 + ms);

describe('SimulatedClock', () => {
  it('runs due callbacks in time order, ties in the order they were set, each at its own time', async () => {
    const clock = new SimulatedClock(t(0));
    const seen: string[] = [];
    const note = (name: string) => () => void seen.push(`${name}@${clock.now().getTime() - T0}`);
    clock.at(t(30), note('c'));
    clock.at(t(10), note('a'));
    clock.at(t(30), note('d'));
    clock.at(t(20), note('b'));
    clock.at(t(50), note('late'));
    await clock.advanceTo(t(40));
    expect(seen).toEqual(['a@10', 'b@20', 'c@30', 'd@30']);
    expect(clock.now()).toEqual(t(40));
    expect(clock.pending).toBe(1);
    expect(clock.nextDue()).toEqual(t(50));
  });

  it('runs callbacks set by callbacks when they fall due, and waits for their promises', async () => {
    const clock = new SimulatedClock(t(0));
    const seen: string[] = [];
    clock.at(t(10), async () => {
      await Promise.resolve();
      seen.push('first');
      clock.at(t(15), () => void seen.push('set by first'));
      clock.at(t(100), () => void seen.push('beyond'));
    });
    clock.at(t(10), () => void seen.push('second'));
    await clock.advanceTo(t(20));
    expect(seen).toEqual(['first', 'second', 'set by first']);
    await clock.runUntilIdle();
    expect(seen.at(-1)).toBe('beyond');
    expect(clock.now()).toEqual(t(100));
  });

  it('cancels, runs a past time at once, and never goes back', async () => {
    const clock = new SimulatedClock(t(100));
    const seen: number[] = [];
    const cancel = clock.at(t(150), () => void seen.push(150));
    clock.at(t(50), () => void seen.push(clock.now().getTime() - T0));
    cancel();
    await clock.runUntilIdle();
    expect(seen).toEqual([100]);
    await expect(clock.advanceTo(t(10))).rejects.toThrow(/cannot move the simulated clock back/);
  });

  it('stops a callback that keeps rescheduling itself at the same time', async () => {
    const clock = new SimulatedClock(t(0), 100);
    const again = () => void clock.at(clock.now(), again);
    clock.at(t(0), again);
    await expect(clock.runUntilIdle()).rejects.toThrow(/more than 100 callbacks/);
  });
});

describe('SystemClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('calls back at the time, unless cancelled, and reports errors', async () => {
    vi.useFakeTimers({ now: T0 });
    const errors: unknown[] = [];
    const clock = new SystemClock((e) => errors.push(e));
    const seen: string[] = [];
    clock.at(t(1000), () => void seen.push('kept'));
    const cancel = clock.at(t(500), () => void seen.push('cancelled'));
    clock.at(t(200), () => {
      throw new Error('boom');
    });
    cancel();
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toEqual(['kept']);
    expect(errors).toEqual([new Error('boom')]);
  });

  it('waits longer than one Node timer can (about 24.8 days) by chaining timers', async () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SystemClock();
    const seen: number[] = [];
    const forty = 40 * 86_400_000;
    clock.at(t(forty), () => void seen.push(Date.now() - T0));
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(seen).toEqual([]);
    await vi.advanceTimersByTimeAsync(forty - 2 ** 31);
    expect(seen).toEqual([forty]);
  });

  it('the wall clock stepped back: a callback waits until the wall clock reaches its time, and runs once', async () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SystemClock();
    const seen: number[] = [];
    clock.at(t(600_000), () => void seen.push(Date.now() - T0));
    await vi.advanceTimersByTimeAsync(60_000);
    vi.setSystemTime(T0 - 240_000); // five minutes back: the wall clock reads 4 minutes before the start
    await vi.advanceTimersByTimeAsync(540_000); // when the timer set for 10 minutes would have fired
    expect(seen).toEqual([]);
    await vi.advanceTimersByTimeAsync(300_000); // the wall clock at 10 minutes
    expect(seen).toEqual([600_000]);
    vi.setSystemTime(T0); // back again, past nothing: it does not run twice
    await vi.advanceTimersByTimeAsync(1_200_000);
    expect(seen).toEqual([600_000]);
  });

  it('the wall clock stepped forward past a time: the callback runs within a second of the step, once', async () => {
    vi.useFakeTimers({ now: T0 });
    const clock = new SystemClock();
    const seen: number[] = [];
    clock.at(t(600_000), () => void seen.push(Date.now() - T0));
    clock.at(t(3_600_000), () => void seen.push(Date.now() - T0));
    await vi.advanceTimersByTimeAsync(60_000);
    vi.setSystemTime(T0 + 900_000); // fifteen minutes on
    await vi.advanceTimersByTimeAsync(1001); // the next look at the clock, and a timer's shortest wait
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThanOrEqual(900_000);
    expect(seen[0]).toBeLessThanOrEqual(901_001);
    // The later one keeps its wall-clock time, not its old delay.
    await vi.advanceTimersByTimeAsync(3_600_000 - 901_001 - 1);
    expect(seen).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.at(-1)).toBe(3_600_000);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(seen).toHaveLength(2);
  });

  it('does not keep the process alive', () => {
    const clock = new SystemClock();
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const cancel = clock.at(new Date(Date.now() + 60_000), () => {});
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    cancel();
    spy.mockRestore();
  });
});
