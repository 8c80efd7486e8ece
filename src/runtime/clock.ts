import type { Clock } from '../engine/ports.js';

/**
 * The clock plan execution runs on: the time now, and a callback at a point in time. The
 * real one uses timers; the simulated one (tests, `wsag sim`) moves only when told, so a
 * day of execution runs in milliseconds and the same calls give the same order of events.
 */
export interface RuntimeClock extends Clock {
  /**
   * Runs `callback` at `time` (at once, on the next turn, if `time` has passed); returns a function that cancels it.
   */
  at(time: Date, callback: () => void | Promise<void>): () => void;
}

/** Longest delay a Node timer takes (about 24.8 days); longer waits are chained. */
const maxTimerMs = 2 ** 31 - 1;

/** How often the clock looks for a step of the wall clock, and how large a step it notices. */
const stepCheckMs = 1000;
const stepToleranceMs = 1000;

/**
 * Real time. Timers are unref'd: a pending checkpoint or deadline alone does not keep the
 * process alive (the server's listener does). Errors thrown by callbacks go to `onError`.
 *
 * Node's timers run on a monotonic clock, but `time` is wall-clock time: when the wall clock
 * is stepped (NTP, an operator), a timer would fire early or late by the step. So a timer
 * that wakes before its time arms again, and while timers are pending the clock compares the
 * wall clock with the monotonic one every second and, on a step, arms them all again: a
 * callback runs once, when the wall clock reaches its time.
 */
export class SystemClock implements RuntimeClock {
  private readonly armed = new Set<() => void>();
  private watch: NodeJS.Timeout | undefined;
  private offset = 0;

  constructor(private readonly onError: (error: unknown) => void = () => {}) {}

  now(): Date {
    return new Date();
  }

  at(time: Date, callback: () => void | Promise<void>): () => void {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const arm = () => {
      if (timer) clearTimeout(timer);
      const wait = time.getTime() - Date.now();
      timer = setTimeout(wait > maxTimerMs ? arm : fire, Math.max(0, Math.min(wait, maxTimerMs)));
      timer.unref();
    };
    const fire = () => {
      if (done) return;
      if (Date.now() < time.getTime()) return arm(); // the wall clock was stepped back meanwhile
      done = true;
      this.disarm(arm);
      try {
        Promise.resolve(callback()).catch(this.onError);
      } catch (error) {
        this.onError(error);
      }
    };
    arm();
    this.armed.add(arm);
    this.watchSteps();
    return () => {
      done = true;
      this.disarm(arm);
      if (timer) clearTimeout(timer);
    };
  }

  private disarm(arm: () => void): void {
    this.armed.delete(arm);
    if (this.armed.size === 0 && this.watch) {
      clearInterval(this.watch);
      this.watch = undefined;
    }
  }

  /** While timers are pending: a step of the wall clock against the monotonic one arms them again. */
  private watchSteps(): void {
    if (this.watch) return;
    this.offset = Date.now() - performance.now();
    this.watch = setInterval(() => {
      const offset = Date.now() - performance.now();
      if (Math.abs(offset - this.offset) > stepToleranceMs) for (const arm of [...this.armed]) arm();
      this.offset = offset;
    }, stepCheckMs);
    this.watch.unref();
  }
}

interface Due {
  time: number;
  seq: number;
  callback: () => void | Promise<void>;
}

/**
 * Time that moves only when told. `advanceTo(t)` runs every callback due by `t` in time
 * order (ties in the order they were set), each at its own time, and waits for the
 * promises they return before the next; callbacks may set new ones, which run too if due.
 */
export class SimulatedClock implements RuntimeClock {
  private current: number;
  private seq = 0;
  private readonly queue: Due[] = [];

  constructor(
    start: Date,
    private readonly maxCallbacks = 1_000_000,
  ) {
    this.current = start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  at(time: Date, callback: () => void | Promise<void>): () => void {
    const due: Due = { time: Math.max(time.getTime(), this.current), seq: this.seq++, callback };
    // Insert after every entry that is due no later (time order, then insertion order).
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.queue[mid] as Due).time <= due.time) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, due);
    return () => {
      const i = this.queue.indexOf(due);
      if (i >= 0) this.queue.splice(i, 1);
    };
  }

  /** Callbacks waiting. */
  get pending(): number {
    return this.queue.length;
  }

  /** When the next callback is due, if any. */
  nextDue(): Date | undefined {
    const next = this.queue[0];
    return next ? new Date(next.time) : undefined;
  }

  /** Runs everything due by `time`, then stands at `time`. */
  async advanceTo(time: Date): Promise<void> {
    const target = time.getTime();
    if (target < this.current)
      throw new RangeError(
        `cannot move the simulated clock back from ${new Date(this.current).toISOString()} to ${time.toISOString()}`,
      );
    await this.run((next) => next.time <= target);
    this.current = target;
  }

  async advanceBy(ms: number): Promise<void> {
    await this.advanceTo(new Date(this.current + ms));
  }

  /** Runs callbacks until none is left, moving the clock to each; stands at the last one's time. */
  async runUntilIdle(): Promise<void> {
    await this.run(() => true);
  }

  private async run(due: (next: Due) => boolean): Promise<void> {
    let ran = 0;
    for (;;) {
      await settle();
      const next = this.queue[0];
      if (!next || !due(next)) return;
      this.queue.shift();
      this.current = next.time;
      if (++ran > this.maxCallbacks)
        throw new Error(
          `simulated clock: more than ${this.maxCallbacks} callbacks; is something rescheduling itself at ` +
            `the same time?`,
        );
      await next.callback();
    }
  }
}

/** Lets promise chains started by a callback (resource-manager calls, their events) finish before time moves on. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
