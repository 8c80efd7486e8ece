import { describe, expect, it } from 'vitest';
import { WsagError } from '../../src/domain/errors.js';
import type { NegotiationState } from '../../src/domain/negotiation.js';
import {
  counteredOffers,
  negotiationMessages,
  negotiationStep,
  type CounteredOffer,
  type NegotiationMessage,
} from '../../src/domain/negotiation-state-machine.js';

/**
 * The whole protocol table, written out: for each negotiation state, a row per message
 * and a column per situation of the offer the message refers to. A cell is the effect
 * (with the next state after `>` when it changes), or the fault code of a refusal.
 */
const columns: CounteredOffer[] = [
  'None',
  'Template',
  'ResponderAdvisory',
  'ResponderAcceptable',
  'ResponderAcceptableExpired',
  'ResponderAcceptableWithdrawn',
  'ResponderRejected',
  'InitiatorOffer',
];

const IST = 'InvalidStateTransition';
const OE = 'OfferExpired';
const NC = 'NegotiationClosed';

const table: Record<NegotiationState, Record<NegotiationMessage, string[]>> = {
  Open: {
    //                 None  Template           ResponderAdvisory   ResponderAcceptable  Expired Withdrawn Rejected Initiator
    AdvisoryOffer: [IST, 'AnswerWithSlots', 'AnswerWithSlots', 'AnswerWithSlots', OE, IST, IST, IST],
    SolicitedOffer: [IST, 'DecideAndHold', 'DecideAndHold', 'DecideAndHold', OE, IST, IST, IST],
    CommittingOffer: [IST, IST, IST, IST, OE, IST, IST, IST],
    RejectOffer: [IST, IST, 'RecordRejection', 'ReleaseHold', OE, IST, IST, IST],
    AcceptOffer: [IST, IST, IST, 'ConfirmHold>Concluded', OE, IST, IST, IST],
    Advertise: [IST, 'RecordAdvertisement', 'RecordAdvertisement', 'RecordAdvertisement', OE, IST, IST, IST],
    Terminate: ['ReleaseAllHolds>Terminated', IST, IST, IST, OE, IST, IST, IST],
  },
  Closed: {
    AdvisoryOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    SolicitedOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    CommittingOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    RejectOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    AcceptOffer: [IST, IST, IST, 'ConfirmHold>Concluded', OE, IST, IST, IST],
    Advertise: [NC, NC, NC, NC, OE, NC, NC, NC],
    Terminate: ['ReleaseAllHolds>Terminated', IST, IST, IST, OE, IST, IST, IST],
  },
  Concluded: {
    AdvisoryOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    SolicitedOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    CommittingOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    RejectOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    AcceptOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    Advertise: [NC, NC, NC, NC, OE, NC, NC, NC],
    Terminate: [NC, NC, NC, NC, OE, NC, NC, NC],
  },
  Terminated: {
    AdvisoryOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    SolicitedOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    CommittingOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    RejectOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    AcceptOffer: [NC, NC, NC, NC, OE, NC, NC, NC],
    Advertise: [NC, NC, NC, NC, OE, NC, NC, NC],
    Terminate: [NC, NC, NC, NC, OE, NC, NC, NC],
  },
};

function outcome(state: NegotiationState, message: NegotiationMessage, countered: CounteredOffer): string {
  try {
    const step = negotiationStep(state, message, countered, {
      offerId: 'n1-2',
      closedBecause: 'it used the maximum of 3 rounds',
    });
    return step.next === state ? step.effect : `${step.effect}>${step.next}`;
  } catch (error) {
    expect(error).toBeInstanceOf(WsagError);
    return (error as WsagError).code;
  }
}

describe('negotiation state machine', () => {
  it('covers every message and every offer situation', () => {
    expect(columns).toEqual([...counteredOffers]);
    for (const rows of Object.values(table)) expect(Object.keys(rows)).toEqual([...negotiationMessages]);
  });

  for (const [state, rows] of Object.entries(table) as Array<
    [NegotiationState, Record<NegotiationMessage, string[]>]
  >) {
    for (const [message, cells] of Object.entries(rows) as Array<[NegotiationMessage, string[]]>) {
      it(`${state}: ${message}`, () => {
        expect(columns.map((c) => outcome(state, message, c))).toEqual(cells);
      });
    }
  }

  it('says why a refused pair is refused', () => {
    expect(() => negotiationStep('Open', 'SolicitedOffer', 'ResponderRejected', { offerId: 'n1-2' })).toThrow(
      /offer "n1-2" is Rejected: counter-offers to a Rejected offer are refused/,
    );
    expect(() =>
      negotiationStep('Closed', 'SolicitedOffer', 'Template', { closedBecause: 'it used the maximum of 3 rounds' }),
    ).toThrow(/closed: it used the maximum of 3 rounds/);
    expect(() => negotiationStep('Open', 'AcceptOffer', 'ResponderAdvisory', { offerId: 'n1-2' })).toThrow(
      /only an Acceptable counter-offer can be accepted; offer "n1-2" is an Advisory counter-offer/,
    );
    expect(() => negotiationStep('Open', 'CommittingOffer', 'Template')).toThrow(/send a Solicited offer/);
  });
});
