import type { AgreementState } from './agreement.js';
import { InvalidStateTransition } from './errors.js';

/** Events that move an agreement (WS-Agreement section 7.1, figure "agreement states"). */
export type AgreementEvent =
  | 'accept' // provider decides for a pending agreement
  | 'reject' // provider decides against a pending agreement
  | 'terminateRequested' // initiator asks to terminate; provider has not finished
  | 'terminate' // termination done
  | 'terminationRefused' // provider refuses or fails to terminate
  | 'complete'; // all service obligations met

const transitions: Record<AgreementState, Partial<Record<AgreementEvent, AgreementState>>> = {
  Pending: {
    accept: 'Observed',
    reject: 'Rejected',
    terminateRequested: 'PendingAndTerminating',
    terminate: 'Terminated',
  },
  PendingAndTerminating: { terminate: 'Terminated', terminationRefused: 'Pending' },
  Observed: {
    terminateRequested: 'ObservedAndTerminating',
    terminate: 'Terminated',
    complete: 'Complete',
  },
  ObservedAndTerminating: { terminate: 'Terminated', terminationRefused: 'Observed' },
  Rejected: {},
  Complete: {},
  Terminated: {},
};

export const finalStates: readonly AgreementState[] = ['Rejected', 'Complete', 'Terminated'];
/** The states that are not final: what a restart reads back (an ended agreement holds nothing and runs nothing). */
export const liveStates: readonly AgreementState[] = [
  'Pending',
  'Observed',
  'PendingAndTerminating',
  'ObservedAndTerminating',
];

/** The state `event` leads to from `from`, or an InvalidStateTransition naming both. */
export function nextAgreementState(from: AgreementState, event: AgreementEvent): AgreementState {
  const to = transitions[from][event];
  if (!to) {
    const allowed = Object.keys(transitions[from]);
    throw new InvalidStateTransition(
      `agreement in state ${from} cannot ${describe(event)}` +
        (allowed.length ? ` (allowed from ${from}: ${allowed.join(', ')})` : ` (${from} is final)`),
    );
  }
  return to;
}

export function isFinal(state: AgreementState): boolean {
  return finalStates.includes(state);
}

/** Capacity stays booked only while the agreement may still be served. */
export function holdsCapacity(state: AgreementState): boolean {
  return state === 'Pending' || state === 'Observed' || state.endsWith('AndTerminating');
}

function describe(event: AgreementEvent): string {
  switch (event) {
    case 'accept':
      return 'be accepted';
    case 'reject':
      return 'be rejected';
    case 'terminateRequested':
    case 'terminate':
      return 'be terminated';
    case 'terminationRefused':
      return 'refuse termination';
    case 'complete':
      return 'complete';
  }
}
