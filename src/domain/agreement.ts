import type { ServiceRequest } from './terms.js';
import type { Allocation } from './allocation.js';
import type { AlternativeChoice, Money } from './negotiation.js';

/** Agreement states (WS-Agreement section 7.1; PROTOCOL.md "States"). */
export type AgreementState =
  | 'Pending'
  | 'Observed'
  | 'PendingAndTerminating'
  | 'ObservedAndTerminating'
  | 'Rejected'
  | 'Complete'
  | 'Terminated';

export const agreementStates: readonly AgreementState[] = [
  'Pending',
  'Observed',
  'PendingAndTerminating',
  'ObservedAndTerminating',
  'Rejected',
  'Complete',
  'Terminated',
];

export type ServiceTermState = 'NotReady' | 'Ready' | 'Completed';
/** Sub-state of Ready. */
export type ServiceTermSubState = 'Processing' | 'Idle';
export type GuaranteeTermState = 'NotDetermined' | 'Fulfilled' | 'Violated';

export interface ServiceTermStatus {
  termName: string;
  state: ServiceTermState;
  subState?: ServiceTermSubState;
}

/**
 * Where a migrated job went (Hovestadt 2006, section 3.6.7): the peer, our agreement with it, when, and what it cost.
 */
export interface MigrationRecord {
  /** The peer's name in the peers configuration. */
  peer: string;
  remoteAgreementId: string;
  /** The remote agreement's EPR address. */
  remoteAddress: string;
  at: Date;
  price: Money;
  /** The penalty the migration saved (what the job would have paid for its violation). */
  penalty?: Money;
}

export interface GuaranteeTermStatus {
  termName: string;
  state: GuaranteeTermState;
}

/**
 * An agreement as the server keeps it. `document` is the agreement XML, the source of truth for Name, Context and
 * Terms.
 */
export interface Agreement {
  id: string;
  name?: string;
  templateId: string;
  templateName: string;
  /** Identity of the initiator (certificate subject once security is on; `anonymous` otherwise). */
  initiator: string;
  /**
   * Other identities the initiator named (srv:EligibleParty) that may read and use the agreement, e.g. run in its
   * reservation.
   */
  eligibleParties?: string[];
  state: AgreementState;
  serviceTerms: ServiceTermStatus[];
  guaranteeTerms: GuaranteeTermStatus[];
  request: ServiceRequest;
  allocation?: Allocation;
  /** The agreement document (a wsag:AgreementOffer element carrying wsag:AgreementId), as emitted. */
  document: string;
  /** Price of the agreed terms, as quoted (docs/pricing.md). */
  price?: Money;
  /** The price curve's factor the price was quoted at; usage is charged at it. Absent: 1 (the list price). */
  priceFactor?: number;
  /** The Acceptable negotiation offer this agreement was accepted from (or renegotiated with, last). */
  origin?: { negotiationId: string; offerId: string };
  /** Which alternative of an offer with ExactlyOne / OneOrMore compositors was agreed. */
  alternative?: AlternativeChoice;
  /** A reservation is used once (Hovestadt 2006, section 2.3): the agreement that used it. */
  usedBy?: string;
  /** CreatePendingAgreement's AgreementAcceptanceEPR (XML): where the provider reports its decision. */
  acceptanceEpr?: string;
  /**
   * Cross-border migration: the job was moved to a peer provider and resumes there under this agreement of ours with
   * the peer.
   */
  migratedTo?: MigrationRecord;
  /**
   * The offer's wsag:ExpirationTime: the agreement ends then (Complete, its capacity released) if it has not ended
   * before.
   */
  expiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}
