import type { ServiceTermStatus } from '../../domain/agreement.js';
import type { Charge } from '../../domain/compensation.js';
import type { ServiceTermState, ServiceTermSubState } from '../../domain/agreement.js';
import type { GuaranteeEvaluation } from '../../domain/guarantee-evaluation.js';
import type { AuditDetails, JsonValue } from '../ports.js';
import type { ExecutionEvent } from './ports.js';

/**
 * How run-time events appear on an agreement: the audit action and details of each, and
 * the service term states they imply. Phases that do not change a service term state
 * (pre-runtime, stage-out, post-runtime) are not recorded on their own: the execution
 * record in the post-runtime report has them.
 */

/** The audit action of an event, or undefined when only a change of service term state would be worth recording. */
export function eventAction(event: ExecutionEvent): { action: string; details: AuditDetails } | undefined {
  switch (event.type) {
    case 'phase':
      return undefined;
    case 'checkpoint':
      return { action: 'checkpoint-taken', details: { interval: event.interval, reference: event.reference } };
    case 'checkpointMissed':
      return { action: 'checkpoint-missed', details: { interval: event.interval, reason: event.reason } };
    case 'interrupted':
      return { action: 'execution-interrupted', details: { node: event.node } };
    case 'suspended':
      return { action: 'execution-suspended', details: { reason: event.reason } };
    case 'restarted':
      return {
        action: 'execution-restarted',
        details: { nodes: event.nodes, fromInterval: event.fromInterval, cause: event.cause },
      };
    case 'completed':
      return { action: 'execution-completed', details: {} };
    case 'failed':
      return { action: 'execution-failed', details: { cause: event.cause, reason: event.reason } };
    case 'overrun':
      return { action: 'execution-overrun', details: { bookedEnd: event.bookedEnd.toISOString() } };
    case 'violated':
      return { action: 'guarantee-violated', details: evaluationDetails(event.evaluation) };
    case 'fulfilled':
      return { action: 'guarantee-fulfilled', details: evaluationDetails(event.evaluation) };
    case 'closed':
      return undefined;
  }
}

/** A guarantee term's judgement in a few fields: the term, its state, what is owed or excused, the liability rule. */
export function evaluationDetails(evaluation: GuaranteeEvaluation): AuditDetails {
  return {
    term: evaluation.term,
    guaranteeState: evaluation.state,
    explanation: evaluation.explanation,
    ...(evaluation.penalty ? { penalty: chargeJson(evaluation.penalty) } : {}),
    ...(evaluation.excusedPenalty ? { excusedPenalty: chargeJson(evaluation.excusedPenalty) } : {}),
    ...(evaluation.reward ? { reward: chargeJson(evaluation.reward) } : {}),
    ...(evaluation.liability ? { liability: evaluation.liability } : {}),
  };
}

function chargeJson(charge: Charge): JsonValue {
  return { amount: charge.amount, currency: charge.currency };
}

/** Every service term of the agreement in the job's state (the job is the service the terms describe). */
export function serviceTermsIn(
  terms: readonly ServiceTermStatus[],
  state: { state: ServiceTermState; subState?: ServiceTermSubState },
): ServiceTermStatus[] {
  return terms.map((t) => ({
    termName: t.termName,
    state: state.state,
    ...(state.subState ? { subState: state.subState } : {}),
  }));
}

/** Whether the service terms already are in that state. */
export function serviceTermsAre(
  terms: readonly ServiceTermStatus[],
  state: { state: ServiceTermState; subState?: ServiceTermSubState },
): boolean {
  return terms.every((t) => t.state === state.state && t.subState === state.subState);
}
