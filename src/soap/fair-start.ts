/**
 * Starts the requests that wait here one per turn of the event loop, in arrival order.
 *
 * Why: Node accepts one new connection per turn of the event loop (seen with a bare
 * node:http server too, docs/benchmarks.md). A create takes a few milliseconds of CPU, and
 * without this, one turn ran every request whose bytes had arrived. Under 64 connections a
 * turn took hundreds of milliseconds, and a broker's new connection waited seconds for its
 * first answer. One request per turn keeps turns short: new connections are accepted
 * between requests, and requests start in the order they came.
 */
export class FairStart {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** Resolves when this request may start: at a later turn, after those that came before it. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.next());
      }
    });
  }

  private next(): void {
    // The request runs on in this turn's microtasks; the next one waits for the next turn.
    this.waiting.shift()?.();
    if (this.waiting.length > 0) setImmediate(() => this.next());
    else this.scheduled = false;
  }
}

/** One per process: the event loop is. */
export const fairStart = new FairStart();
