import type { AgreementState, GuaranteeTermState } from '../../domain/agreement.js';
import type { Money } from '../../domain/negotiation.js';
import type { ServiceRequest } from '../../domain/terms.js';
import type { Peer } from '../migration/peers.js';

/** The ports of this use case; the ports every use case shares are in ../ports.ts. */

// peer providers (cross-border migration, Hovestadt 2006, sections 3.6 and 4.2.4)

/**
 * What is asked of a peer provider: terms it is to serve (src/client/peer-providers.ts writes them into an offer from
 * the peer's template).
 */
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
