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

export type ServiceTermState = 'NotReady' | 'Ready' | 'Completed';
/** Sub-state of Ready. */
export type ServiceTermSubState = 'Processing' | 'Idle';
export type GuaranteeTermState = 'NotDetermined' | 'Fulfilled' | 'Violated';

export interface ServiceTermStatus {
  termName: string;
  state: ServiceTermState;
  subState?: ServiceTermSubState;
}

export interface GuaranteeTermStatus {
  termName: string;
  state: GuaranteeTermState;
}

/** An agreement as the server keeps it. `document` is the agreement XML, the source of truth for Name, Context and Terms. */
export interface Agreement {
  id: string;
  name?: string;
  templateId: string;
  templateName: string;
  /** Identity of the initiator (certificate subject once security is on; `anonymous` otherwise). */
  initiator: string;
  state: AgreementState;
  serviceTerms: ServiceTermStatus[];
  guaranteeTerms: GuaranteeTermStatus[];
  request: ServiceRequest;
  allocation?: Allocation;
  /** The agreement document (a wsag:AgreementOffer element carrying wsag:AgreementId), as emitted. */
  document: string;
  /** Regular price of the agreed terms. */
  price?: Money;
  /** The Acceptable negotiation offer this agreement was accepted from (or renegotiated with, last). */
  origin?: { negotiationId: string; offerId: string };
  /** Which alternative of an offer with ExactlyOne / OneOrMore compositors was agreed. */
  alternative?: AlternativeChoice;
  /** A reservation is used once (seed 002 section 2.3): the agreement that used it. */
  usedBy?: string;
  /** CreatePendingAgreement's AgreementAcceptanceEPR (XML): where the provider reports its decision. */
  acceptanceEpr?: string;
  createdAt: Date;
  updatedAt: Date;
}
