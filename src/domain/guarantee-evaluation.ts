import type { GuaranteeTermState } from './agreement.js';
import { assessPenalty, assessReward, type Charge, type Measure } from './compensation.js';
import { describeMs, durationMs } from './duration.js';
import { hasEnded, type ExecutionRecord, type RunPhase } from './execution.js';
import { liabilityFor } from './liability.js';
import type { GuaranteeLevel, GuaranteeTerm, KpiTarget, ReservationWindow } from './terms.js';
import { isoTime } from './time.js';

/**
 * Judging a guarantee term from the execution record (Hovestadt 2006, sections 2.3.2.3 and
 * 3.3.4): NotDetermined until the facts decide it, Fulfilled once it can no longer be
 * violated, Violated once the evidence is final: the span the term promises is over, or the
 * job has ended (a deadline missed is judged when the job completes, a shortfall of nodes when
 * the window ends), so a violation and its penalty are assessed once, on the whole measure.
 * A violation is assessed against the penalty list and the guarantee level's liability
 * rules; a fulfilment earns the rewards. Pure: the time of judgement is passed in.
 */
export interface GuaranteeContext {
  now: Date;
  level: GuaranteeLevel;
  /** n_romax the plan covers. */
  coveredOutages: number;
  /** The reservation window, when the service has one: NodesAvailable is judged over it. */
  window?: ReservationWindow;
}

export interface GuaranteeEvaluation {
  term: string;
  kpi: KpiTarget['kind'];
  state: GuaranteeTermState;
  /** Owed by the provider (Violated, and the level makes it liable). */
  penalty?: Charge;
  /** Assessed but not owed: the level's liability rules excuse the provider. */
  excusedPenalty?: Charge;
  /** Owed by the customer (Fulfilled). */
  reward?: Charge;
  /** The liability rule applied to a violation. */
  liability?: string;
  explanation: string;
}

interface Judgement {
  state: GuaranteeTermState;
  explanation: string;
  /** How far the objective was missed (Violated) or beaten (Fulfilled). */
  measure?: Measure;
  /** The objective is a fault-tolerance mechanism (liability). */
  mechanism?: boolean;
}

export function evaluateGuarantee(
  term: GuaranteeTerm,
  record: ExecutionRecord,
  context: GuaranteeContext,
): GuaranteeEvaluation {
  const judged = judge(term.target, record, context);
  const evaluation: GuaranteeEvaluation = {
    term: term.name,
    kpi: term.target.kind,
    state: judged.state,
    explanation: judged.explanation,
  };
  try {
    if (judged.state === 'Violated' && judged.measure) {
      const liability = liabilityFor({
        level: context.level,
        record,
        coveredOutages: context.coveredOutages,
        mechanism: judged.mechanism ?? false,
      });
      evaluation.liability = liability.rule;
      const assessed = assessPenalty(term.penalties, judged.measure);
      if (assessed) {
        if (liability.liable) evaluation.penalty = assessed;
        else evaluation.excusedPenalty = assessed;
      }
    }
    if (judged.state === 'Fulfilled' && judged.measure) {
      const reward = assessReward(term.rewards, judged.measure);
      if (reward) evaluation.reward = reward;
    }
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    evaluation.explanation += `; business value not assessed: ${error.message}`;
  }
  return evaluation;
}

/**
 * When judging again could change the state without a new fact: the end of the window a
 * NodesAvailable term promises. Every other verdict follows a fact (the job starts,
 * completes, fails, checkpoints); undefined when only a new fact can decide, or it is decided.
 */
export function nextCheck(term: GuaranteeTerm, record: ExecutionRecord, context: GuaranteeContext): Date | undefined {
  if (judge(term.target, record, context).state !== 'NotDetermined' || term.target.kind !== 'NodesAvailable')
    return undefined;
  const now = context.now.getTime();
  const span = requiredSpan(record, context);
  return span?.end !== undefined && now < span.end ? new Date(span.end + 1) : undefined;
}

/** The record is closed or the job failed: no later fact changes what it delivered. */
function ended(record: ExecutionRecord): boolean {
  return record.failure !== undefined || record.closedAt !== undefined;
}

function judge(target: KpiTarget, record: ExecutionRecord, context: GuaranteeContext): Judgement {
  switch (target.kind) {
    case 'CompletedBy':
      return byTime('completed', 'deadline', record.completedAt, target.at, record, context);
    case 'StartBy':
      return byTime('started', 'latest start', record.startedAt, target.at, record, context);
    case 'NodesAvailable':
      return nodesAvailable(target.nodes, record, context);
    case 'MaxCheckpointInterval':
      return checkpointInterval(target.interval, record, context);
    case 'Custom':
      return {
        state: 'NotDetermined',
        explanation: `KPI ${target.kpiName || '(unnamed)'} is not one the server measures`,
      };
  }
}

/**
 * An event (completion, start) by a point in time. Late is measured to the event, or, if
 * it never happened, to when the job ended or, while it may still happen, to now.
 */
function byTime(
  event: string,
  what: string,
  happened: Date | undefined,
  by: Date,
  record: ExecutionRecord,
  { now }: GuaranteeContext,
): Judgement {
  const deadline = by.getTime();
  if (happened) {
    const diff = happened.getTime() - deadline;
    if (diff <= 0) {
      return {
        state: 'Fulfilled',
        explanation: `${event} at ${isoTime(happened)}, ${describeMs(-diff)} before the ${what} ${isoTime(by)}`,
        measure: { durationMs: -diff, count: 1 },
      };
    }
    return {
      state: 'Violated',
      explanation: `${event} at ${isoTime(happened)}, ${describeMs(diff)} after the ${what} ${isoTime(by)}`,
      measure: { durationMs: diff, count: 1 },
    };
  }
  if (record.failure) {
    const late = Math.max(0, record.failure.at.getTime() - deadline);
    return {
      state: 'Violated',
      explanation:
        `never ${event}: the job ended at ${isoTime(record.failure.at)} (` +
        `${record.failure.reason}); ${what} ${isoTime(by)}`,
      measure: { durationMs: late, count: 1 },
    };
  }
  if (now.getTime() > deadline) {
    // Late, but by how much is known only when it happens: the verdict and its penalty wait for it.
    const late = now.getTime() - deadline;
    return {
      state: 'NotDetermined',
      explanation:
        `not ${event} by the ${what} ${isoTime(by)}: ${describeMs(late)} late at ${isoTime(now)}, ` +
        `judged when it has ${event}`,
    };
  }
  return {
    state: 'NotDetermined',
    explanation: `not ${event} yet; ${what} ${isoTime(by)} is ${describeMs(deadline - now.getTime())} away`,
  };
}

const holdingPhases: ReadonlyArray<RunPhase> = ['PreRuntime', 'Running', 'StageOut'];
/**
 * In a window the nodes are the holder's once handed over: their preparation is planned before the window, so it does
 * not count in it.
 */
const handedOverPhases: ReadonlyArray<RunPhase> = ['Running', 'StageOut'];

function holds(phase: RunPhase | undefined, inWindow: boolean): boolean {
  return phase !== undefined && (inWindow ? handedOverPhases : holdingPhases).includes(phase);
}

/**
 * When the nodes must be available: the reservation window (until the job completes in
 * it), or, without a window, from the job's first phase until it completes or ends.
 * `end` undefined: open-ended, up to now.
 */
function requiredSpan(
  record: ExecutionRecord,
  { window }: GuaranteeContext,
): { start: number; end: number | undefined } | undefined {
  const finished = record.completedAt?.getTime();
  if (window)
    return { start: window.start.getTime(), end: Math.min(window.end.getTime(), finished ?? Number.POSITIVE_INFINITY) };
  const first = record.phases[0];
  if (!first) return undefined;
  return { start: first.start.getTime(), end: finished ?? record.failure?.at.getTime() };
}

/**
 * The objective "this number of nodes is available to the job throughout the reservation
 * window" (sla:NodesAvailable), measured to the millisecond over exactly that span: every
 * stretch with fewer nodes handed over counts. The verdict waits for the span's end (or the
 * job's): a shortfall so far is reported, not yet assessed.
 */
function nodesAvailable(nodes: number, record: ExecutionRecord, context: GuaranteeContext): Judgement {
  const span = requiredSpan(record, context);
  if (!span)
    return { state: 'NotDetermined', explanation: `${nodes} node(s) promised while the job runs; it has not started` };
  const now = context.now.getTime();
  const final = ended(record) || (span.end !== undefined && now >= span.end);
  // A job that ended inside its window leaves the rest of it unserved (unless it completed: the holder ended it).
  const until = final && span.end !== undefined ? span.end : Math.min(span.end ?? now, now);
  const inWindow = context.window !== undefined;
  const gaps: Array<{ from: number; to: number }> = [];
  let covered = span.start;
  for (const p of record.phases) {
    if (!holds(p.phase, inWindow) || p.nodes.length < nodes) continue;
    const from = p.start.getTime();
    const to = p.end?.getTime() ?? now;
    if (to <= covered) continue;
    if (from > covered && covered < until) gaps.push({ from: covered, to: Math.min(from, until) });
    covered = Math.max(covered, to);
  }
  if (covered < until) gaps.push({ from: covered, to: until });
  const missing = gaps.reduce((sum, g) => sum + (g.to - g.from), 0);
  const where = context.window
    ? `the window ${isoTime(context.window.start)} to ${isoTime(context.window.end)}`
    : 'the run';
  if (missing > 0) {
    const first = gaps[0] as { from: number; to: number };
    if (!final) {
      return {
        state: 'NotDetermined',
        explanation:
          `fewer than ${nodes} node(s) for ${describeMs(missing)} of ${where} so far (first from ` +
          `${isoTime(new Date(first.from))}); judged when it ends`,
      };
    }
    return {
      state: 'Violated',
      explanation:
        `fewer than ${nodes} node(s) for ${describeMs(missing)} of ${where} (${gaps.length} ` +
        `time(s), first from ${isoTime(new Date(first.from))})`,
      measure: { durationMs: missing, count: gaps.length },
    };
  }
  if (final) {
    return {
      state: 'Fulfilled',
      explanation: `${nodes} node(s) available throughout ${where}`,
      measure: { durationMs: 0, count: 1, timeless: true },
    };
  }
  return { state: 'NotDetermined', explanation: `${nodes} node(s) available so far in ${where}` };
}

/**
 * The objective "the time between two consecutive checkpoints is at most this duration"
 * (sla:MaxCheckpointInterval), counted in computing time: from each start or restart (the
 * job resumes from a saved state) to its checkpoints, and from the last one to the end of
 * the computation or its interruption.
 */
function checkpointInterval(interval: string, record: ExecutionRecord, context: GuaranteeContext): Judgement {
  const limit = safeDuration(interval);
  if (limit === undefined)
    return { state: 'NotDetermined', explanation: `cannot judge the checkpoint interval: ${durationError(interval)}` };
  const now = context.now.getTime();
  const gaps = computeGaps(record, now);
  const over = gaps.filter((g) => g > limit);
  const longest = gaps.reduce((most, g) => Math.max(most, g), 0);
  if (over.length > 0 && !hasEnded(record)) {
    return {
      state: 'NotDetermined',
      explanation:
        `${over.length} stretch(es) of computation longer than ${interval} without a checkpoint so ` +
        `far, the longest ${describeMs(longest)}; judged when the job ends`,
    };
  }
  if (over.length > 0) {
    return {
      state: 'Violated',
      explanation:
        `${over.length} stretch(es) of computation longer than ${interval} without a checkpoint; ` +
        `the longest ${describeMs(longest)}`,
      measure: { durationMs: over.reduce((sum, g) => sum + (g - limit), 0), count: over.length },
      mechanism: true,
    };
  }
  if (hasEnded(record)) {
    return {
      state: 'Fulfilled',
      explanation: `at most ${describeMs(longest)} of computation between checkpoints (objective ${interval})`,
      measure: { durationMs: limit - longest, count: 1 },
    };
  }
  return {
    state: 'NotDetermined',
    explanation: `at most ${describeMs(longest)} between checkpoints so far (objective ${interval})`,
  };
}

/** Computing time between save points: each Running span starts from one, checkpoints are others. */
function computeGaps(record: ExecutionRecord, now: number): number[] {
  const gaps: number[] = [];
  for (const p of record.phases) {
    if (p.phase !== 'Running') continue;
    const start = p.start.getTime();
    const end = p.end?.getTime() ?? now;
    let from = start;
    for (const c of record.checkpoints) {
      const t = c.at.getTime();
      if (t < start || t > end) continue;
      gaps.push(t - from);
      from = t;
    }
    if (end > from) gaps.push(end - from);
  }
  return gaps;
}

function safeDuration(value: string): number | undefined {
  try {
    return durationMs(value);
  } catch {
    return undefined;
  }
}

function durationError(value: string): string {
  try {
    durationMs(value);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}
