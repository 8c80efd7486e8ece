import type { Agreement, AgreementState } from '../domain/agreement.js';
import type { Allocation } from '../domain/allocation.js';
import type {
  AlternativeChoice,
  Money,
  Negotiation,
  NegotiationState,
  OfferCreator,
  OfferState,
} from '../domain/negotiation.js';
import type { AgreementTemplate } from '../domain/template.js';
import type { GuaranteeTerm, ServiceRequest } from '../domain/terms.js';

/**
 * The ports every use case shares; adapters implement them (src/store, src/xml, src/crypto,
 * src/client). A use case's own ports are beside it: execution/ports.ts (the executor,
 * reports, subscriptions), migration/ports.ts (peer providers), accounting/ports.ts (the
 * books, usage records). Contracts are documented with each port and proven by shared test
 * suites in test/.
 */

/**
 * Durable agreement storage. Contract: `insert` and `update` resolve only once the change
 * is durable (it survives a crash of the process); `insert` of an existing id rejects;
 * `get` of an unknown id resolves to undefined; `list` orders by creation time, then id;
 * callers always get copies, never objects the store keeps. The engine serialises updates
 * of one agreement. `audit` notes are appended to the store's AuditLog, about this
 * agreement, in the same transaction as the change: both are stored, or neither.
 */
/**
 * One page of a listing (no request builds every row): the items after `after`
 * in list order (creation time, then id), at most `limit`. Without a limit, every item.
 */
export interface ListPage {
  after?: { createdAt: Date; id: string };
  limit?: number;
}

export interface AgreementFilter extends ListPage {
  initiator?: string;
  /** One state, or any of several. */
  state?: AgreementState | readonly AgreementState[];
  /**
   * Leave each agreement's document out (`document` is ''): for reading many agreements
   * when their terms are all that is needed, as the start-up does to rebuild the plan.
   */
  withoutDocument?: boolean;
}

export interface NegotiationFilter extends ListPage {
  initiator?: string;
  state?: NegotiationState;
  /** Only negotiations with at least one hold in state Held. */
  withLiveHolds?: boolean;
  /** Only negotiations with a hold in state Held that expires at or before this time (what the expiry timer asks). */
  holdExpiringBy?: Date;
}

export interface AgreementRepository {
  /**
   * Stores a new agreement; resolves once it is durable. `committed`, as `update`'s, runs
   * before that, as soon as reads see it, and never when the insert fails: a caller that
   * makes another write of the same store durable next may go on from there, since the
   * log is made durable in order (accepting a negotiated offer: one sync for the agreement
   * and the negotiation).
   */
  insert(agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void): Promise<void>;
  /**
   * Replaces the stored agreement with the same id; rejects when there is none. Resolves once
   * the change is durable; `committed` runs before that, as soon as reads see the change (a
   * store may make commits durable in groups), and never when the update fails. What it
   * allows (capacity freed) can only be used by later writes, which are durable only with it.
   */
  update(agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void): Promise<void>;
  get(id: string): Promise<Agreement | undefined>;
  list(filter?: AgreementFilter): Promise<Agreement[]>;
  /** How many agreements are in each state (states with none are left out): what /metrics reports. */
  countByState(): Promise<Partial<Record<AgreementState, number>>>;
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
  /** srv:EligibleParty in the Context: other identities that may read and use the agreement. */
  eligibleParties?: string[];
  /** wsag:ExpirationTime in the Context: when the agreement ends at the latest. */
  expiresAt?: Date;
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
 * resolve once durable, reads return copies, `list` orders by creation time then id, and
 * `audit` notes are appended about this negotiation in the same transaction as the change.
 */
export interface NegotiationRepository {
  insert(negotiation: Negotiation, audit?: readonly AuditNote[]): Promise<void>;
  update(negotiation: Negotiation, audit?: readonly AuditNote[]): Promise<void>;
  get(id: string): Promise<Negotiation | undefined>;
  list(filter?: NegotiationFilter): Promise<Negotiation[]>;
  close(): Promise<void>;
}

/** A JSON value, as audit details hold them (times as ISO strings, not Dates). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type AuditDetails = { [key: string]: JsonValue };

/** What an audit entry is about. */
export interface AuditSubject {
  kind: 'agreement' | 'negotiation';
  id: string;
}

/** A change as the engine records it; the log gives it its place in the chain. */
export interface AuditRecord {
  at: Date;
  /** The caller's identity, or 'system' for timers, the scheduler and start-up. */
  actor: string;
  subject: AuditSubject;
  /** What happened: created, terminated, renegotiated, reservation-used, hold-expired, plan-moved, ... */
  action: string;
  /** Small: states, offer ids, and for agreements the sha256 of the document after the change. */
  details: AuditDetails;
}

/** An audit record about the object a repository writes with it: the repository fills in the subject. */
export type AuditNote = Omit<AuditRecord, 'subject'>;

export interface AuditEntry extends AuditRecord {
  /** 1, 2, 3, ... in append order, without gaps. */
  seq: number;
  /** The previous entry's hash; 64 zeros for the first entry. */
  prevHash: string;
  /** sha256 hex over the entry's fields and prevHash (auditEntryHash in audit-chain.ts). */
  hash: string;
}

/**
 * The audit trail: an append-only, hash-chained log of every state change of agreements
 * and negotiations (docs/security.md). Contract: entries get seq 1, 2, 3, ... in append
 * order; each entry's prevHash is the hash of the entry before it (64 zeros for the first)
 * and its hash is auditEntryHash of its fields, so a stored entry changed, removed or moved
 * breaks the chain (AuditService.verifyChain finds where). There is no update or delete.
 * Appends resolve once durable, together with the change they describe when a repository
 * writes them (see AgreementRepository); details come back as JSON gives them; reads
 * return copies.
 */
export interface AuditLog {
  /** Appends one entry on its own, in its own transaction. */
  append(record: AuditRecord): Promise<AuditEntry>;
  /** Entries in seq order: one subject's or all, those after seq `after`, at most `limit`. */
  entries(filter?: { subject?: AuditSubject; after?: number; limit?: number }): Promise<AuditEntry[]>;
  /** The subject's newest entry. */
  latest(subject: AuditSubject): Promise<AuditEntry | undefined>;
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
  /**
   * Guarantee objectives lowered to what the plan keeps: sla:NodesAvailable at most, sla:CompletedBy and sla:StartBy at
   * the earliest.
   */
  objectives?: { nodesAvailable?: number; completedBy?: Date; startBy?: Date };
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
  completeContext(
    request: NegotiationRequest,
    details: { initiator: string; responder: string; expiresAt: Date },
  ): string;
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

/** Signs agreement documents as the provider (XML-DSig, src/crypto). */
export interface AgreementSigner {
  /** The document with the provider's signature added (possibly signed on another thread). */
  sign(document: string): Promise<string>;
}

/** A verified signature on an agreement: who signed (the chain's identity) and its ds:SignatureValue. */
export interface VerifiedSignature {
  identity: string;
  signatureValue: string;
}

/** Checks agreement signatures against the trusted CAs (src/crypto). */
export interface AgreementSignatureVerifier {
  /**
   * The provider's signature and the initiator's countersignature, if any; throws SignatureInvalid naming what is
   * wrong.
   */
  verify(document: string, at: Date): { provider: VerifiedSignature; initiator?: VerifiedSignature };
}

/** Writes the agreement document the provider commits to. */
export interface AgreementDocumentWriter {
  write(offer: ReceivedOffer, details: AgreementDetails): string;
}

/**
 * A JSON request made safe to retry by its Idempotency-Key (docs/api.md): what the party
 * asked under the key, the agreement it makes (its id chosen before it is made, so a retry
 * after a crash finds it), and the answer once given.
 */
export interface IdempotencyRecord {
  party: string;
  key: string;
  /** A digest of what was asked (method, route, body): the key may not ask for something else. */
  fingerprint: string;
  agreementId?: string;
  answer?: { status: number; body: string };
  createdAt: Date;
}

/** Idempotency-Key records, durable when each call resolves. */
export interface IdempotencyRecords {
  /**
   * Keeps `record` unless the party already has one under the key made at `since` or later (an older one is
   * forgotten); returns the one kept.
   */
  claim(record: IdempotencyRecord, since: Date): Promise<IdempotencyRecord>;
  /** The answer given to the party's request under `key`. */
  answered(party: string, key: string, answer: { status: number; body: string }): Promise<void>;
}

/**
 * Signed messages already received (docs/security.md, "Replayed messages"): a WS-Security
 * signature counts once. Kept, durably, until the message would be refused as expired anyway.
 */
export interface SeenSignatures {
  /**
   * True the first time `digest` is offered; false (and nothing changes) for a digest seen and not yet expired. Durable
   * when it resolves.
   */
  firstSeen(digest: string, until: Date, now: Date): Promise<boolean>;
}
