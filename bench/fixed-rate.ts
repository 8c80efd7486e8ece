/**
 * Load at a fixed rate (`npm run bench:concurrent -- --rate N`): requests are due at evenly
 * spaced times whatever the server answers, at most `connections` in flight on keep-alive
 * connections, and each latency runs from when the request was due, so a request that waits
 * for a free connection counts its wait (no coordinated omission). The client is undici's
 * pool, lighter than node:http's on the cores the server shares. autocannon's own rate
 * option sends each second's quota at the start of the second and times from the send, so
 * it measures neither an even load nor the wait.
 */
import { Pool } from 'undici';
import { quantiles } from './report.js';

export interface FixedRateLoad {
  /** Requests due in the run (rate × seconds). */
  due: number;
  ok: number;
  errors: number;
  /** Answers per second, the run's length measured to the last answer. */
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** Requests that found every connection busy when due and waited for one. */
  waited: number;
}

export interface FixedRateRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export async function loadAtRate(
  request: FixedRateRequest,
  options: { rate: number; connections: number; seconds: number },
): Promise<FixedRateLoad> {
  const url = new URL(request.url);
  // undici's pool queues a request until one of its connections is free.
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1 });
  const due = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  let errors = 0;
  let inFlight = 0;
  let waited = 0;
  let lastAnswer = 0;
  const start = performance.now();
  const send = async (dueAt: number) => {
    if (inFlight >= options.connections) waited++;
    inFlight++;
    let ok = false;
    try {
      const answer = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: request.headers,
        body: request.body,
      });
      await answer.body.dump();
      ok = answer.statusCode === 200;
    } catch {
      // counted below
    }
    inFlight--;
    lastAnswer = performance.now();
    if (ok) latencies.push(lastAnswer - dueAt);
    else errors++;
  };
  const answers: Promise<void>[] = [];
  let next = 0;
  // Sends whatever is due, then sleeps until the next one is; a late timer sends the backlog at once, still timed from when each was due.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < due && start + (next * 1000) / options.rate <= now)
        answers.push(send(start + (next++ * 1000) / options.rate));
      if (next >= due) resolve();
      else setTimeout(tick, Math.max(0, start + (next * 1000) / options.rate - performance.now()));
    };
    tick();
  });
  await Promise.all(answers);
  await pool.close();
  const { median, p99 } = latencies.length > 0 ? quantiles(latencies) : { median: NaN, p99: NaN };
  return {
    due,
    ok: latencies.length,
    errors,
    perSecond: latencies.length / ((lastAnswer - start) / 1000),
    p50: median,
    p99,
    max: latencies.reduce((most, l) => Math.max(most, l), 0),
    waited,
  };
}
