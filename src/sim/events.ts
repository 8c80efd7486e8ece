import type { Instant } from '../scheduler/model.js';
import { compareEvents, Heap } from './heap.js';
import type { SimulatedPeersConfig } from './peers.js';
import type { Workload, WorkloadJob } from './workload.js';

export interface SimOptions {
  /** Stop at this many seconds from the start (jobs still planned are reported open). */
  untilSeconds?: number;
  /** Called every `progressEvery` events and once at the end. */
  onProgress?: (progress: SimProgress) => void;
  progressEvery?: number;
  /** Include every job's outcome in the report. */
  jobs?: boolean;
  /** Migrate to these simulated peers (only with `runSimulation`). */
  peers?: SimulatedPeersConfig;
  /**
   * What the user of a refused SLA request does: leaves with it (the default), or submits the same job to the site's
   * queue as best-effort work, as a user of a batch queue without SLAs would.
   */
  refused?: RefusedRequests;
}

export type RefusedRequests = 'leave' | 'queue';
export const refusedRequests: readonly RefusedRequests[] = ['leave', 'queue'];

export interface SimProgress {
  /** Jobs with a final outcome (rejected, completed, dropped). */
  settled: number;
  total: number;
  simulatedSeconds: number;
  events: number;
  done: boolean;
}

/** Events the simulator generates itself; ranks order them against the workload's events at one instant. */
export type Dynamic =
  | { t: Instant; rank: 0; key: string; type: 'completion'; id: string; version: number }
  | { t: Instant; rank: 1; key: string; type: 'renewal'; node: string; since: Instant }
  | { t: Instant; rank: 2; key: string; type: 'deadline'; id: string };

export type External =
  | { t: Instant; rank: 3; index: number; type: 'repair'; node: string }
  | { t: Instant; rank: 4; index: number; type: 'failure'; node: string }
  | { t: Instant; rank: 5; index: number; type: 'arrival'; job: WorkloadJob };

/** The workload's arrivals, failures and repairs in the order they run (time, then rank, then workload order). */
export function externalEvents(workload: Workload, ms: (seconds: number) => Instant): External[] {
  const external: External[] = [];
  workload.jobs.forEach((job, index) => external.push({ t: ms(job.arrival), rank: 5, index, type: 'arrival', job }));
  workload.failures.forEach((f, index) => {
    external.push({ t: ms(f.at), rank: 4, index, type: 'failure', node: f.node });
    if (f.repairAt !== undefined) external.push({ t: ms(f.repairAt), rank: 3, index, type: 'repair', node: f.node });
  });
  return external.sort((a, b) => a.t - b.t || a.rank - b.rank || a.index - b.index);
}

/** The events the simulator generates itself, in time order; a renewal or deadline tick is queued once. */
export class DynamicEvents {
  private readonly heap = new Heap<Dynamic>(compareEvents);
  private readonly pending = new Set<string>();

  push(event: Dynamic): void {
    if (event.type !== 'completion') {
      const key = tickKey(event);
      if (this.pending.has(key)) return;
      this.pending.add(key);
    }
    this.heap.push(event);
  }

  /** The next event; completions `stale` says no longer hold are dropped. */
  peek(stale: (completion: Extract<Dynamic, { type: 'completion' }>) => boolean): Dynamic | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (!top) return undefined;
      if (top.type === 'completion' && stale(top)) {
        this.heap.pop();
        continue;
      }
      return top;
    }
  }

  pop(): void {
    this.heap.pop();
  }

  /** A renewal or deadline tick ran: the same tick may be queued again. */
  done(event: Exclude<Dynamic, { type: 'completion' }>): void {
    this.pending.delete(tickKey(event));
  }
}

function tickKey(event: Exclude<Dynamic, { type: 'completion' }>): string {
  return `${event.type}:${event.type === 'renewal' ? event.node : event.id}:${event.t}`;
}
