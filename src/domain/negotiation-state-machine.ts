import { InvalidStateTransition, NegotiationClosed, OfferExpired } from './errors.js';
import type { NegotiationState } from './negotiation.js';

/**
 * The negotiation protocol as a table: which message the initiator may send about which
 * offer, and what the server then does (PROTOCOL.md, Hovestadt 2006, section 2.3.3). The engine
 * classifies the offer a message refers to, asks `negotiationStep`, and carries out the
 * effect; every pair not in the table is refused with a fault saying why.
 */

/** What the initiator sends. */
export type NegotiationMessage =
  | 'AdvisoryOffer' // NegotiationOffer, State=Advisory: a non-binding request
  | 'SolicitedOffer' // NegotiationOffer, State=Solicited: asks for a committing counter-offer
  | 'CommittingOffer' // NegotiationOffer, State=Acceptable from the initiator
  | 'RejectOffer' // NegotiationOffer, State=Rejected: rejects the offer it counters
  | 'AcceptOffer' // CreateAgreement referring to an offer
  | 'Advertise' // Advertise: offers for information, no answer
  | 'Terminate'; // Negotiation.Terminate

export const negotiationMessages: readonly NegotiationMessage[] = [
  'AdvisoryOffer',
  'SolicitedOffer',
  'CommittingOffer',
  'RejectOffer',
  'AcceptOffer',
  'Advertise',
  'Terminate',
];

/** The offer a message refers to (its CounterOfferTo), as the engine finds it. */
export type CounteredOffer =
  | 'None' // Terminate refers to no offer
  | 'Template' // a negotiable template, or the agreement under renegotiation: a first offer
  | 'ResponderAdvisory'
  | 'ResponderAcceptable' // committing, hold in place, not expired
  | 'ResponderAcceptableExpired' // committing, but its ExpirationTime has passed
  | 'ResponderAcceptableWithdrawn' // committing, but the initiator rejected it (hold released)
  | 'ResponderRejected'
  | 'InitiatorOffer'; // one of the initiator's own offers

export const counteredOffers: readonly CounteredOffer[] = [
  'None',
  'Template',
  'ResponderAdvisory',
  'ResponderAcceptable',
  'ResponderAcceptableExpired',
  'ResponderAcceptableWithdrawn',
  'ResponderRejected',
  'InitiatorOffer',
];

/** What the server does. */
export type NegotiationEffect =
  | 'AnswerWithSlots' // Advisory counter-offers with start slots and prices; nothing held
  | 'DecideAndHold' // an Acceptable counter-offer holding capacity, or a Rejected one saying why
  | 'RecordRejection' // the rejected offer held nothing: record it, continue
  | 'ReleaseHold' // release the rejected offer's hold, continue
  | 'ConfirmHold' // the hold becomes the agreement
  | 'RecordAdvertisement'
  | 'ReleaseAllHolds';

export interface NegotiationStep {
  effect: NegotiationEffect;
  next: NegotiationState;
}

const whileOpen: Record<NegotiationMessage, Partial<Record<CounteredOffer, NegotiationEffect>>> = {
  AdvisoryOffer: {
    Template: 'AnswerWithSlots',
    ResponderAdvisory: 'AnswerWithSlots',
    ResponderAcceptable: 'AnswerWithSlots',
  },
  SolicitedOffer: {
    Template: 'DecideAndHold',
    ResponderAdvisory: 'DecideAndHold',
    ResponderAcceptable: 'DecideAndHold',
  },
  CommittingOffer: {},
  RejectOffer: { ResponderAdvisory: 'RecordRejection', ResponderAcceptable: 'ReleaseHold' },
  AcceptOffer: { ResponderAcceptable: 'ConfirmHold' },
  Advertise: {
    Template: 'RecordAdvertisement',
    ResponderAdvisory: 'RecordAdvertisement',
    ResponderAcceptable: 'RecordAdvertisement',
  },
  Terminate: { None: 'ReleaseAllHolds' },
};

/** A negotiation a site limit closed still honours the commitments it made, and may be terminated. */
const whileClosed: Partial<Record<NegotiationMessage, Partial<Record<CounteredOffer, NegotiationEffect>>>> = {
  AcceptOffer: { ResponderAcceptable: 'ConfirmHold' },
  Terminate: { None: 'ReleaseAllHolds' },
};

/**
 * The effect of `message` about an offer in situation `countered`, in a negotiation in
 * `state`, or the fault for a refused pair. `offerId` and `why` only make messages precise.
 */
export function negotiationStep(
  state: NegotiationState,
  message: NegotiationMessage,
  countered: CounteredOffer,
  about: { offerId?: string; closedBecause?: string } = {},
): NegotiationStep {
  const table = state === 'Open' ? whileOpen : state === 'Closed' ? whileClosed : {};
  const effect = table[message]?.[countered];
  if (effect) return { effect, next: nextState(state, effect) };
  throw refusal(state, message, countered, about);
}

function nextState(state: NegotiationState, effect: NegotiationEffect): NegotiationState {
  if (effect === 'ConfirmHold') return 'Concluded';
  if (effect === 'ReleaseAllHolds') return 'Terminated';
  return state;
}

function refusal(
  state: NegotiationState,
  message: NegotiationMessage,
  countered: CounteredOffer,
  about: { offerId?: string; closedBecause?: string },
): Error {
  const offer = about.offerId ? `offer "${about.offerId}"` : 'the offer';
  // The offer's own situation explains a refusal better than the negotiation's, when it applies.
  if (countered === 'ResponderAcceptableExpired') {
    return new OfferExpired(`${offer} has expired: its hold was released; make a new offer`);
  }
  if (state !== 'Open' && !(state === 'Closed' && (message === 'AcceptOffer' || message === 'Terminate'))) {
    const why =
      state === 'Closed' ? `closed: ${about.closedBecause ?? 'a site limit was reached'}` : state.toLowerCase();
    return new NegotiationClosed(`the negotiation is ${why}; ${describe(message)} is no longer possible`);
  }
  switch (countered) {
    case 'ResponderRejected':
      return new InvalidStateTransition(
        `${offer} is Rejected: counter-offers to a Rejected offer are refused; counter the template or another offer`,
      );
    case 'ResponderAcceptableWithdrawn':
      return new InvalidStateTransition(
        `${offer} was rejected by the initiator and its hold released; counter the template or another offer`,
      );
    case 'InitiatorOffer':
      return new InvalidStateTransition(
        `${offer} is the initiator's own offer: counter an offer of the responder or a template`,
      );
    default:
      break;
  }
  switch (message) {
    case 'CommittingOffer':
      return new InvalidStateTransition(
        'the server does not take committing offers from the initiator: send a Solicited offer, then accept ' +
          'the Acceptable counter-offer with CreateAgreement',
      );
    case 'AcceptOffer':
      return new InvalidStateTransition(
        `only an Acceptable counter-offer can be accepted; ${offer} is ${situation(countered)}`,
      );
    case 'RejectOffer':
      return new InvalidStateTransition(`${offer} is ${situation(countered)} and cannot be rejected`);
    case 'Terminate':
      return new InvalidStateTransition('Terminate refers to the negotiation, not to an offer');
    default:
      return new InvalidStateTransition(`${describe(message)} cannot answer ${situation(countered)}`);
  }
}

function situation(countered: CounteredOffer): string {
  switch (countered) {
    case 'None':
      return 'no offer';
    case 'Template':
      return 'a template (or the agreement under renegotiation)';
    case 'ResponderAdvisory':
      return 'an Advisory counter-offer';
    case 'ResponderAcceptable':
      return 'an Acceptable counter-offer';
    case 'ResponderAcceptableExpired':
      return 'an expired Acceptable counter-offer';
    case 'ResponderAcceptableWithdrawn':
      return 'a rejected Acceptable counter-offer';
    case 'ResponderRejected':
      return 'a Rejected counter-offer';
    case 'InitiatorOffer':
      return "the initiator's own offer";
  }
}

function describe(message: NegotiationMessage): string {
  switch (message) {
    case 'AdvisoryOffer':
      return 'an Advisory offer';
    case 'SolicitedOffer':
      return 'a Solicited offer';
    case 'CommittingOffer':
      return 'an Acceptable offer from the initiator';
    case 'RejectOffer':
      return 'rejecting an offer';
    case 'AcceptOffer':
      return 'accepting an offer';
    case 'Advertise':
      return 'Advertise';
    case 'Terminate':
      return 'Terminate';
  }
}
