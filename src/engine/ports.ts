import type { Agreement, AgreementState, GuaranteeTermState } from '../domain/agreement.js';
import type { Allocation } from '../domain/allocation.js';
import type { ExecutionRecord, FailureCause, RestartCause, RunPhase } from '../domain/execution.js';
import type { GuaranteeEvaluation } from '../domain/guarantee-evaluation.js';
import type { PostRuntimeReport } from '../domain/post-runtime-report.js';
import type { JobShape } from '../scheduler/job-timing.js';
import type { PlannedJob } from '../scheduler/model.js';
import type { AlternativeChoice, Money, Negotiation, NegotiationState, OfferCreator, OfferState } from '../domain/negotiation.js';
import type { AgreementTemplate } from '../domain/template.js';
import type { Account, FundsHold, LedgerChange, LedgerEntry } from '../domain/accounts.js';
import type { Application, GuaranteeLevel, GuaranteeTerm, ReservationWindow, ServiceRequest } from '../domain/terms.js';
import type { Peer } from './migration/peers.js';

/**
 * The ports the engine needs; adapters implement them (src/store, src/xml, src/main.ts).
 * Contracts are documented here and proven by shared test suites in test/.
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
 * One page of a listing (issue 23: no request builds every row): the items after `after`
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
}

export interface NegotiationFilter extends ListPage {
  initiator?: string;
  state?: NegotiationState;
  /** Only negotiations with at least one hold in state Held. */
  withLiveHolds?: boolean;
}

export interface AgreementRepository {
  insert(agreement: Agreement, audit?: readonly AuditNote[]): Promise<void>;
  /** Replaces the stored agreement with the same id; rejects when there is none. */
  update(agreement: Agreement, audit?: readonly AuditNote[]): Promise<void>;
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
  /** Guarantee objectives lowered to what the plan keeps: sla:NodesAvailable at most, sla:CompletedBy and sla:StartBy at the earliest. */
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

/** Signs agreement documents as the provider (XML-DSig, src/crypto). */
export interface AgreementSigner {
  /** The document with the provider's signature added. */
  sign(document: string): string;
}

/** A verified signature on an agreement: who signed (the chain's identity) and its ds:SignatureValue. */
export interface VerifiedSignature {
  identity: string;
  signatureValue: string;
}

/** Checks agreement signatures against the trusted CAs (src/crypto). */
export interface AgreementSignatureVerifier {
  /** The provider's signature and the initiator's countersignature, if any; throws SignatureInvalid naming what is wrong. */
  verify(document: string, at: Date): { provider: VerifiedSignature; initiator?: VerifiedSignature };
}

/** Writes the agreement document the provider commits to. */
export interface AgreementDocumentWriter {
  write(offer: ReceivedOffer, details: AgreementDetails): string;
}

// --- peer providers (cross-border migration, seed 002 sections 3.6 and 4.2.4) -----------

/** What is asked of a peer provider: terms it is to serve (src/client/peer-providers.ts writes them into an offer from the peer's template). */
export interface PeerRequest {
  /**
   * For a migrated job: the work left after its last checkpoint, starting no earlier than
   * the checkpoint can arrive, by the original deadline (or in the original window). For
   * standby capacity (Full): the job's own terms.
   */
  request: ServiceRequest;
  /** The agreement's Name at the peer, e.g. where the job comes from. */
  name?: string;
}

/** A peer's committing offer (an Acceptable counter-offer): its price, capacity held until `expiresAt`. */
export interface PeerQuote {
  peer: string;
  negotiationId: string;
  /** The address of the negotiation's EPR at the peer. */
  negotiationAddress: string;
  offerId: string;
  price: Money;
  /** The preparatory fee the peer charges if the offer is not accepted in time. */
  fee?: Money;
  expiresAt?: Date;
  /** The counter-offer as received (XML): accepting sends its terms back. */
  offer: string;
}

/** A preparatory reservation of standby capacity at a peer (Full): a quote to bind before it expires. */
export type StandbyHold = PeerQuote;

export type PeerQuoteAnswer = { quoted: true; quote: PeerQuote } | { quoted: false; reason: string };

/** An agreement this provider made with a peer (as its initiator). */
export interface RemoteAgreement {
  peer: string;
  agreementId: string;
  /** The agreement's EPR address at the peer. */
  address: string;
}

/** A checkpoint to send to a peer: a file, or bytes in memory. */
export interface CheckpointData {
  file?: string;
  bytes?: Uint8Array;
  sizeBytes: number;
}

/**
 * Other providers, spoken to as a WS-Agreement client (src/client/peer-providers.ts).
 * Contract: `quote` and `reserveStandby` negotiate (InitiateNegotiation, a Solicited offer)
 * and answer the peer's committing offer with its srv:Quote price, or why there is none (a
 * Rejected answer, a fault, an unreachable peer): they do not throw for the peer's sake. A
 * quote holds capacity at the peer until it is accepted (`accept`, `bindStandby`: a
 * CreateAgreement accepting the offer) or declined (`decline`: the negotiation is
 * terminated and the hold released); callers decline every quote they do not accept.
 * `accept`, `bindStandby`, `transferCheckpoint` and `terminate` throw when they fail.
 */
export interface PeerProviders {
  quote(peer: Peer, request: PeerRequest): Promise<PeerQuoteAnswer>;
  accept(peer: Peer, quote: PeerQuote): Promise<RemoteAgreement>;
  decline(peer: Peer, quote: PeerQuote): Promise<void>;
  /** Sends the checkpoint for the peer's agreement `remoteAgreementId`; the job resumes from it there. */
  transferCheckpoint(peer: Peer, remoteAgreementId: string, checkpoint: CheckpointData): Promise<void>;
  /** Ends an agreement with a peer (a migration that could not be completed). */
  terminate(peer: Peer, remote: RemoteAgreement, reason: string): Promise<void>;
  /** Full service, preparatory step: standby capacity held at the peer. */
  reserveStandby(peer: Peer, request: PeerRequest): Promise<PeerQuoteAnswer>;
  /** Full service, binding step: the held standby capacity becomes an agreement. */
  bindStandby(peer: Peer, hold: StandbyHold): Promise<RemoteAgreement>;
  /** The states of an agreement made with the peer (its AgreementState port): how a migrated job fares there. */
  agreementState?(peer: Peer, remote: RemoteAgreement): Promise<RemoteAgreementState>;
}

/** What a peer says of an agreement made with it. */
export interface RemoteAgreementState {
  state: AgreementState;
  guaranteeTerms: Array<{ termName: string; state: GuaranteeTermState }>;
}

// --- run time (seed 002 section 3.3; docs/operations.md "Run time") ---------------------

/** What the guarantee terms of a job are judged by while it runs. */
export interface ExecutionTerms {
  guaranteeTerms: readonly GuaranteeTerm[];
  /** Default: the planned job's level. */
  level?: GuaranteeLevel;
  /** n_romax; default: the plan's covered outages. */
  coveredOutages?: number;
  /** A reservation's window (NodesAvailable is judged over it); default: the planned job's window. */
  window?: ReservationWindow;
  /** What the job runs (jsdl:Application); absent: the executor's default job. */
  application?: Application;
}

/** What the executor reports while it executes a job (src/runtime/plan-executor.ts emits them). */
export type ExecutionEvent =
  | { type: 'phase'; jobId: string; at: Date; phase: RunPhase; nodes: string[] }
  | { type: 'checkpoint'; jobId: string; at: Date; interval: number; reference: string }
  | { type: 'checkpointMissed'; jobId: string; at: Date; interval: number; reason: string }
  | { type: 'interrupted'; jobId: string; at: Date; node: string }
  | { type: 'suspended'; jobId: string; at: Date; reason: string }
  | { type: 'restarted'; jobId: string; at: Date; nodes: string[]; fromInterval: number; cause: RestartCause }
  | { type: 'completed'; jobId: string; at: Date }
  | { type: 'failed'; jobId: string; at: Date; cause: FailureCause; reason: string }
  /** Post-runtime is over: the agreement may complete and its report be written. */
  | { type: 'closed'; jobId: string; at: Date }
  /** Still computing at the booked end of its last piece ("runtime exceeded", seed 002 section 3.5): the scheduler's event. */
  | { type: 'overrun'; jobId: string; at: Date; bookedEnd: Date }
  | { type: 'violated'; jobId: string; at: Date; evaluation: GuaranteeEvaluation }
  | { type: 'fulfilled'; jobId: string; at: Date; evaluation: GuaranteeEvaluation };

/**
 * A checkpoint a job resumes from when it first computes here: one transferred from
 * another provider (a migrated job, `interval` 0: its plan here is the work left), or its
 * own last one after this server restarted (`interval`: the intervals it secured).
 */
export interface ResumePoint {
  reference: string;
  interval: number;
}

/**
 * Executes the scheduler's plans (src/runtime: a PlanExecutor over a resource manager and a
 * clock). Contract: `execute` starts a job whose pieces then run at their planned times;
 * events reach the subscribers in the order things happened, `closed` last; `nodeFailed`
 * records the outage and stops the jobs computing on the node, and they wait for `replan`
 * (call it with the scheduler's new plan, a copy); `abandon` gives a job up (it fails,
 * cleans up and closes). A job stays known (record, evaluations) until `forget`.
 */
export interface JobExecutor {
  execute(job: PlannedJob, shape: JobShape, terms: ExecutionTerms, resumeFrom?: ResumePoint): void;
  /** The job is being executed (or has ended and is not forgotten yet). */
  has(jobId: string): boolean;
  record(jobId: string): ExecutionRecord | undefined;
  /** Every guarantee term of the job judged now. */
  evaluations(jobId: string): GuaranteeEvaluation[];
  nodeFailed(node: string): Promise<void>;
  replan(job: PlannedJob): Promise<void>;
  abandon(jobId: string, reason: string): Promise<void>;
  /** Before the job first computes: it will start from this checkpoint. False when it already computed. */
  resumeFrom(jobId: string, point: ResumePoint): boolean;
  forget(jobId: string): void;
  /** A checkpoint this executor took, as data to send elsewhere (a file, or bytes); undefined when it is gone. */
  checkpointData(reference: string): Promise<CheckpointData | undefined>;
  subscribe(listener: (event: ExecutionEvent) => void): void;
  /** Stops listening and every timer; running jobs are stopped (no process is left behind). */
  close(): Promise<void>;
}

/** A post-runtime report as stored: the report, and what the server adds (where the job went, why terms were not judged). */
export interface StoredReport {
  report: PostRuntimeReport & { notes?: string[]; migratedTo?: JsonValue };
  text: string;
}

/** Where post-runtime reports are kept (src/store/report-files.ts: DATA_DIR/reports/<id>.json and .txt). */
export interface ReportStore {
  save(agreementId: string, stored: StoredReport): Promise<void>;
  read(agreementId: string): Promise<StoredReport | undefined>;
}

// --- notifications ------------------------------------------------------------------

/** An HTTP callback registered for one agreement: every change of its states is POSTed to `url`. */
export interface Subscription {
  id: string;
  agreementId: string;
  url: string;
  /** Who registered it. */
  subscriber: string;
  createdAt: Date;
}

/** Durable subscriptions (src/store/subscription-file.ts). Writes resolve once durable; reads return copies. */
export interface SubscriptionStore {
  list(agreementId: string): Promise<Subscription[]>;
  add(subscription: Subscription): Promise<void>;
  /** Removes the subscriptions with these ids; unknown ids are ignored. */
  remove(ids: readonly string[]): Promise<void>;
}

/**
 * The accounting books (issue 14): accounts, holds of funds and the ledger. Every change
 * goes through `apply`, which runs the domain's rule (src/domain/accounts.ts) on the
 * account as stored and writes its result in one transaction, once per key: an operation
 * whose key is already in the ledger changes nothing, so a retry after a crash never
 * charges twice. Durable when the promise resolves.
 */
export interface AccountStore {
  /** Stores a new account; fails when the id is taken. */
  createAccount(account: Account): Promise<void>;
  account(id: string): Promise<Account | undefined>;
  accounts(): Promise<Account[]>;
  hold(id: string): Promise<FundsHold | undefined>;
  /** Open holds, oldest first; of one account when given. */
  openHolds(accountId?: string): Promise<FundsHold[]>;
  /** The account's ledger, oldest first. */
  statement(accountId: string): Promise<LedgerEntry[]>;
  /** True when applied; false when `key` was applied before. The account must exist. */
  apply(accountId: string, key: string, operation: (account: Account, hold: (id: string) => FundsHold | undefined) => LedgerChange): Promise<boolean>;
  close(): Promise<void>;
}

/** One agreement's usage record as stored: the GFD.98 document, and its signed form when the server signs. */
export interface StoredUsageRecord {
  agreementId: string;
  initiator: string;
  createdAt: Date;
  /** The ur:JobUsageRecord document. */
  xml: string;
  /** The record with the provider's signature (src/crypto/usage-record-signature.ts), when agreements are signed. */
  signed?: string;
}

/** Usage records (issue 14), one per ended agreement, never changed once stored. */
export interface UsageRecordStore {
  /** Stores the record; false (and nothing changes) when the agreement has one already. */
  add(record: StoredUsageRecord): Promise<boolean>;
  get(agreementId: string): Promise<StoredUsageRecord | undefined>;
  /** In order of creation; of one initiator when given; after a cursor; at most `limit`. */
  list(filter?: { initiator?: string; after?: { createdAt: Date; id: string }; limit?: number }): Promise<StoredUsageRecord[]>;
}
