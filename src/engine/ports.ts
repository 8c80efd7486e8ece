import type { Agreement } from '../domain/agreement.js';
import type { Allocation } from '../domain/allocation.js';
import type { AlternativeChoice, Money, Negotiation, OfferCreator, OfferState } from '../domain/negotiation.js';
import type { AgreementTemplate } from '../domain/template.js';
import type { GuaranteeTerm, ServiceRequest } from '../domain/terms.js';

/**
 * The ports the engine needs; adapters implement them (src/store, src/xml, src/main.ts).
 * Contracts are documented here and proven by shared test suites in test/.
 */

/**
 * Durable agreement storage. Contract: `insert` and `update` resolve only once the change
 * is durable (it survives a crash of the process); `insert` of an existing id rejects;
 * `get` of an unknown id resolves to undefined; `list` orders by creation time, then id;
 * callers always get copies, never objects the store keeps. The engine serialises updates
 * of one agreement.
 */
export interface AgreementRepository {
  insert(agreement: Agreement): Promise<void>;
  /** Replaces the stored agreement with the same id; rejects when there is none. */
  update(agreement: Agreement): Promise<void>;
  get(id: string): Promise<Agreement | undefined>;
  list(filter?: { initiator?: string }): Promise<Agreement[]>;
  close(): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export interface IdSource {
  /** A new unique, URL-safe identifier. */
  next(): string;
}

/** An offer as received: parsed, schema-valid, mapped to domain terms. Opaque XML stays in the adapter. */
export interface ReceivedOffer {
  name?: string;
  templateId?: string;
  templateName?: string;
  request: ServiceRequest;
  guaranteeTerms: GuaranteeTerm[];
  serviceTermNames: string[];
  /**
   * The offer's alternatives (ExactlyOne / OneOrMore compositors in its Terms), each as an
   * offer without choices, in document order (the initiator's preference); `[this]` when
   * the offer has no choices. Each carries `alternative` saying which it is.
   */
  alternatives(): ReceivedOffer[];
  alternative?: AlternativeChoice;
  /** GFD.193 NegotiationExtension / RenegotiationExtension in the Context: the Acceptable offer this offer accepts. */
  accepts?: { offerId: string; negotiationId?: string };
}

/** A wsag-neg:NegotiationOffer as received in Negotiate or Advertise. */
export interface ReceivedNegotiationOffer {
  /** The initiator's OfferId, if it gave one. */
  offerId?: string;
  counterOfferTo: string;
  creator: OfferCreator;
  state: OfferState;
  expirationTime?: Date;
  /** The offer's Name, Context and Terms, read as an agreement offer. */
  offer: ReceivedOffer;
  /** The element as received (canonical XML). */
  document: string;
}

/** InitiateNegotiation's NegotiationContext. */
export interface NegotiationRequest {
  type: 'Negotiation' | 'Renegotiation';
  /** Renegotiation: the agreement named by ResponderAgreementEPR. */
  agreementId?: string;
  /** The initiator's wish for the negotiation's lifetime. */
  expirationTime?: Date;
  /** Who will be the agreement responder; this server only acts as NegotiationResponder. */
  agreementResponder: OfferCreator;
  /** The wsag-neg:NegotiationContext element as received. */
  document: string;
}

/**
 * Durable negotiation storage, with the same contract as AgreementRepository: writes
 * resolve once durable, reads return copies, `list` orders by creation time then id.
 */
export interface NegotiationRepository {
  insert(negotiation: Negotiation): Promise<void>;
  update(negotiation: Negotiation): Promise<void>;
  get(id: string): Promise<Negotiation | undefined>;
  /** `withLiveHolds`: only negotiations with at least one hold in state Held. */
  list(filter?: { initiator?: string; withLiveHolds?: boolean }): Promise<Negotiation[]>;
  close(): Promise<void>;
}

export interface CounterOfferDetails {
  offerId: string;
  counterOfferTo: string;
  state: OfferState;
  expirationTime?: Date;
  initiator: string;
  responder: string;
  templateId: string;
  templateName: string;
  price?: Money;
  /** The preparatory fee of a committing (Acceptable) offer. */
  fee?: Money;
  /** The capacity offered: an Advisory start slot, or what an Acceptable offer holds. */
  slot?: Allocation;
  alternative?: AlternativeChoice;
  /** Why an offer is Rejected, or what an Advisory slot is. */
  note?: string;
}

/** Terms a counter-offer changes (see NegotiationDocumentWriter.withTerms). */
export interface TermChanges {
  window?: { start: Date; end: Date };
  earliestStart?: Date;
  /** A new deadline; guarantee objectives that promised the old one (sla:CompletedBy) move with it. */
  deadline?: Date;
  /** A new node count; objectives that promised the old one (sla:NodesAvailable) change with it. */
  nodeCount?: number;
  runtimeSeconds?: number;
}

/** Writes the negotiation documents (src/xml). */
export interface NegotiationDocumentWriter {
  /**
   * The offer with its time terms moved to `slot`: the reservation window, or the earliest
   * start, and a deadline earlier than `completion` (default: the slot's end) moved to it.
   */
  withSlot(offer: ReceivedOffer, slot: Allocation, completion?: Date): ReceivedOffer;
  /** The offer with the given terms changed (counter-offers: a later window or deadline, fewer nodes). */
  withTerms(offer: ReceivedOffer, changes: TermChanges): ReceivedOffer;
  /** A wsag-neg:NegotiationCounterOffer element. */
  counterOffer(offer: ReceivedOffer, details: CounterOfferDetails): string;
  /** The stored NegotiationContext: the received one with NegotiationResponder and ExpirationTime filled in. */
  completeContext(request: NegotiationRequest, details: { initiator: string; responder: string; expiresAt: Date }): string;
}

/** Tells an initiator's AgreementAcceptance endpoint that a pending agreement was accepted or rejected. */
export interface AcceptanceNotifier {
  notify(acceptanceEpr: string, decision: 'Accept' | 'Reject', agreementId: string): Promise<void>;
}

/** Templates and their creation constraints (implemented over XML by src/xml). */
export interface TemplateCatalog {
  list(): AgreementTemplate[];
  find(ref: { id?: string; name?: string }): AgreementTemplate | undefined;
  /** Throws CreationConstraintViolation naming the Item (or Constraint) and the facet that failed. */
  checkCreationConstraints(template: AgreementTemplate, offer: ReceivedOffer): void;
}

export interface AgreementDetails {
  agreementId: string;
  responder: string;
  initiator: string;
  templateId: string;
  templateName: string;
}

/** Writes the agreement document the provider commits to. */
export interface AgreementDocumentWriter {
  write(offer: ReceivedOffer, details: AgreementDetails): string;
}
