/**
 * Starts the requests that wait here a few per turn of the event loop, in arrival order.
 *
 * Why: Node accepts one new connection per turn of the event loop (seen with a bare
 * node:http server too, docs/benchmarks.md). Without this, one turn ran every request whose
 * bytes had arrived. Under 64 connections a turn took hundreds of milliseconds, and a
 * broker's new connection waited seconds for its first answer. A few requests per turn keep
 * turns short: new connections are accepted between them, and requests start in the order
 * they came. A few rather than one: what a request does before it first waits (the raw
 * guard, the parse, handing the offer over) is a fraction of a millisecond now, and one a
 * turn spent more of the loop's time turning than starting requests (measured; a new
 * connection's first answer came no later: git history of docs/benchmarks.md).
 */
export class FairStart {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** `perTurn`: how many waiting requests start at each turn. */
  constructor(private readonly perTurn = 4) {}

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
    // The requests run on in this turn's microtasks; the rest wait for the next turn.
    for (const start of this.waiting.splice(0, this.perTurn)) start();
    if (this.waiting.length > 0) setImmediate(() => this.next());
    else this.scheduled = false;
  }
}

/** One per process: the event loop is. */
export const fairStart = new FairStart();
