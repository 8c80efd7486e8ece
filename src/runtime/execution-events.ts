import type { ExecutionFact } from '../domain/execution.js';
import type { ExecutionEvent } from '../engine/execution/index.js';

/** What the run time tells the engine about a fact it recorded in a job's execution record. */
export function eventOf(jobId: string, fact: ExecutionFact): ExecutionEvent {
  switch (fact.kind) {
    case 'phase':
      return { type: 'phase', jobId, at: fact.at, phase: fact.phase, nodes: [...fact.nodes] };
    case 'checkpoint':
      return { type: 'checkpoint', jobId, at: fact.at, interval: fact.interval, reference: fact.reference };
    case 'checkpointMissed':
      return { type: 'checkpointMissed', jobId, at: fact.at, interval: fact.interval, reason: fact.reason };
    case 'outage':
      return { type: 'interrupted', jobId, at: fact.at, node: fact.node };
    case 'suspended':
      return { type: 'suspended', jobId, at: fact.at, reason: fact.reason };
    case 'restart':
      return {
        type: 'restarted',
        jobId,
        at: fact.at,
        nodes: [...fact.nodes],
        fromInterval: fact.fromInterval,
        cause: fact.cause,
      };
    case 'completed':
      return { type: 'completed', jobId, at: fact.at };
    case 'failed':
      return { type: 'failed', jobId, at: fact.at, cause: fact.cause, reason: fact.reason };
    case 'closed':
      return { type: 'closed', jobId, at: fact.at };
  }
}
