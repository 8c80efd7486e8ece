import { appendFact, type ExecutionRecord } from '../domain/execution.js';
import type { GuaranteeContext } from '../domain/guarantee-evaluation.js';
import type { ExecutionTerms, HandOver } from '../engine/execution/index.js';
import type { JobShape } from '../scheduler/job-timing.js';
import type { Instant, PlannedJob } from '../scheduler/model.js';
import { sameNodes, type PlannedPiece } from './piece-timeline.js';

/**
 * What a promise's holder is owed and has had: the context its guarantee terms are judged
 * in, and, after a server restart, the nodes it was handed before it (docs/operations.md,
 * "After a restart").
 */

/**
 * What the guarantee terms are judged by at `now`: the promised window (the request's, else the plan's), the level and
 * the covered outages.
 */
export function judgingContext(
  run: { job: PlannedJob; shape: JobShape; terms: ExecutionTerms },
  now: Date,
): GuaranteeContext {
  const spec = run.job.spec;
  const window =
    run.terms.window ??
    (spec.window ? { start: new Date(spec.window.start), end: new Date(spec.window.end) } : undefined);
  return {
    now,
    level: run.terms.level ?? spec.level,
    coveredOutages: run.terms.coveredOutages ?? run.shape.timing.outages,
    ...(window ? { window } : {}),
  };
}

/**
 * The piece of a session under way at `now` on the nodes it was handed before a restart, if the plan still holds them.
 */
export function heldPiece(
  job: PlannedJob,
  pieces: readonly PlannedPiece[],
  handedOver: HandOver,
  now: Instant,
): PlannedPiece | undefined {
  if (!job.spec.window) return undefined;
  return pieces.find((p) => p.start <= now && now < p.end && sameNodes(p.nodes, handedOver.nodes));
}

/** A fresh record that holds `nodes` since `at`: prepared and handed over then, as before the restart. */
export function heldSince(record: ExecutionRecord, at: Date, nodes: readonly string[]): ExecutionRecord {
  const prepared = appendFact(record, { kind: 'phase', at, phase: 'PreRuntime', nodes: [...nodes] });
  return appendFact(prepared, { kind: 'phase', at, phase: 'Running', nodes: [...nodes] });
}
