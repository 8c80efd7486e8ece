import { describe, expect, it } from 'vitest';
import type { AgreementState } from '../../src/domain/agreement.js';
import {
  holdsCapacity,
  isFinal,
  nextAgreementState,
  type AgreementEvent,
} from '../../src/domain/agreement-state-machine.js';
import { InvalidStateTransition } from '../../src/domain/errors.js';

const states: AgreementState[] = [
  'Pending',
  'Observed',
  'PendingAndTerminating',
  'ObservedAndTerminating',
  'Rejected',
  'Complete',
  'Terminated',
];
const events: AgreementEvent[] = [
  'accept',
  'reject',
  'terminateRequested',
  'terminate',
  'terminationRefused',
  'complete',
];

/** Every (state, event) pair: the allowed ones lead where WS-Agreement section 7.1 says; all others are refused. */
const allowed: Record<string, AgreementState> = {
  'Pending accept': 'Observed',
  'Pending reject': 'Rejected',
  'Pending terminateRequested': 'PendingAndTerminating',
  'Pending terminate': 'Terminated',
  'PendingAndTerminating terminate': 'Terminated',
  'PendingAndTerminating terminationRefused': 'Pending',
  'Observed terminateRequested': 'ObservedAndTerminating',
  'Observed terminate': 'Terminated',
  'Observed complete': 'Complete',
  'ObservedAndTerminating terminate': 'Terminated',
  'ObservedAndTerminating terminationRefused': 'Observed',
};

describe('agreement state machine', () => {
  for (const state of states) {
    for (const event of events) {
      const to = allowed[`${state} ${event}`];
      it(`${state} --${event}--> ${to ?? 'refused'}`, () => {
        if (to) expect(nextAgreementState(state, event)).toBe(to);
        else {
          expect(() => nextAgreementState(state, event)).toThrow(InvalidStateTransition);
          expect(() => nextAgreementState(state, event)).toThrow(new RegExp(`agreement in state ${state} cannot`));
        }
      });
    }
  }

  it('final states are exactly Rejected, Complete and Terminated, and hold no capacity', () => {
    expect(states.filter(isFinal)).toEqual(['Rejected', 'Complete', 'Terminated']);
    expect(states.filter(holdsCapacity)).toEqual([
      'Pending',
      'Observed',
      'PendingAndTerminating',
      'ObservedAndTerminating',
    ]);
  });
});
