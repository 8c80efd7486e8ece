import type { Money } from '../domain/negotiation.js';
import { isoTime } from '../domain/time.js';
import type { Peer } from '../engine/migration/index.js';
import type {
  CheckpointData,
  PeerProviders,
  PeerQuote,
  PeerQuoteAnswer,
  PeerRequest,
  RemoteAgreement,
  StandbyHold,
} from '../engine/migration/index.js';
import type { SimulatedPeerTerms } from './peers.js';

/**
 * Peer providers for the simulator: the PeerProviders port (src/engine/ports.ts) answered
 * from each peer's `simulation` terms, with no network and no clock. A peer has a number
 * of nodes for migrated jobs; it offers a job the earliest start from which its nodes are
 * free for the work asked (the work left, from when the checkpoint arrives) and which ends
 * by the deadline, or the reservation's window; it refuses when there is none. The price
 * is nodes x hours x its price per node-hour, plus its price per job. An offer holds the
 * nodes until it is accepted or declined, as a real peer's committing offer does.
 */
export interface PeerBooking {
  peer: string;
  offerId: string;
  agreementId?: string;
  /** The agreement's Name at the peer (where the job comes from). */
  name?: string;
  start: number;
  end: number;
  nodes: number;
  price: Money;
  state: 'held' | 'agreed';
}

export interface PeerActivity {
  peer: string;
  quotes: number;
  refusals: number;
  declined: number;
  agreements: number;
  terminated: number;
  price: number;
  nodeSeconds: number;
  checkpointBytes: number;
}

export class SimulatedPeers implements PeerProviders {
  private readonly bookings = new Map<string, PeerBooking[]>();
  private readonly byOffer = new Map<string, PeerBooking>();
  private readonly byAgreement = new Map<string, PeerBooking>();
  private readonly activity = new Map<string, PeerActivity>();
  private offers = 0;
  private agreements = 0;

  constructor(
    private readonly terms: ReadonlyMap<string, SimulatedPeerTerms>,
    private readonly currency: string,
  ) {
    for (const name of terms.keys()) {
      this.bookings.set(name, []);
      this.activity.set(name, {
        peer: name,
        quotes: 0,
        refusals: 0,
        declined: 0,
        agreements: 0,
        terminated: 0,
        price: 0,
        nodeSeconds: 0,
        checkpointBytes: 0,
      });
    }
  }

  async quote(peer: Peer, { request, name }: PeerRequest): Promise<PeerQuoteAnswer> {
    const terms = this.terms.get(peer.name);
    const activity = this.activity.get(peer.name);
    if (!terms || !activity) return { quoted: false, reason: `${peer.name} has no simulation terms` };
    activity.quotes++;
    const placed = this.place(peer.name, terms, request);
    if ('reason' in placed) {
      activity.refusals++;
      return { quoted: false, reason: `${peer.name}: ${placed.reason}` };
    }
    const hours = ((placed.end - placed.start) / 3_600_000) * request.nodeCount;
    const price: Money = {
      amount: round2(hours * terms.pricePerNodeHour + terms.pricePerJob),
      currency: terms.currency ?? this.currency,
    };
    const offerId = `${peer.name}/offer-${++this.offers}`;
    const booking: PeerBooking = {
      peer: peer.name,
      offerId,
      start: placed.start,
      end: placed.end,
      nodes: request.nodeCount,
      price,
      state: 'held',
      ...(name !== undefined ? { name } : {}),
    };
    this.bookings.get(peer.name)?.push(booking);
    this.byOffer.set(offerId, booking);
    return {
      quoted: true,
      quote: {
        peer: peer.name,
        negotiationId: offerId,
        negotiationAddress: `${peer.factoryUrl}#${offerId}`,
        offerId,
        price,
        offer: '',
      },
    };
  }

  async accept(peer: Peer, quote: PeerQuote): Promise<RemoteAgreement> {
    const booking = this.byOffer.get(quote.offerId);
    if (booking?.state !== 'held') throw new Error(`${peer.name} holds no offer ${quote.offerId}`);
    booking.state = 'agreed';
    booking.agreementId = `${peer.name}-${++this.agreements}`;
    this.byAgreement.set(booking.agreementId, booking);
    const activity = this.activity.get(peer.name) as PeerActivity;
    activity.agreements++;
    activity.price = round2(activity.price + booking.price.amount);
    activity.nodeSeconds += ((booking.end - booking.start) / 1000) * booking.nodes;
    return {
      peer: peer.name,
      agreementId: booking.agreementId,
      address: `${peer.factoryUrl}/agreements/${booking.agreementId}`,
    };
  }

  async decline(peer: Peer, quote: PeerQuote): Promise<void> {
    const booking = this.byOffer.get(quote.offerId);
    if (booking?.state !== 'held') return;
    this.drop(booking);
    (this.activity.get(peer.name) as PeerActivity).declined++;
  }

  async transferCheckpoint(peer: Peer, remoteAgreementId: string, checkpoint: CheckpointData): Promise<void> {
    if (!this.byAgreement.has(remoteAgreementId)) throw new Error(`${peer.name} has no agreement ${remoteAgreementId}`);
    (this.activity.get(peer.name) as PeerActivity).checkpointBytes += checkpoint.sizeBytes;
  }

  async terminate(peer: Peer, remote: RemoteAgreement, _reason: string): Promise<void> {
    const booking = this.byAgreement.get(remote.agreementId);
    if (!booking) return;
    this.drop(booking);
    this.byAgreement.delete(remote.agreementId);
    const activity = this.activity.get(peer.name) as PeerActivity;
    activity.terminated++;
    activity.agreements--;
    activity.price = round2(activity.price - booking.price.amount);
    activity.nodeSeconds -= ((booking.end - booking.start) / 1000) * booking.nodes;
  }

  /** Standby for Full service is the cluster's `peerStandbyNodes` in the simulator, not these peers. */
  async reserveStandby(peer: Peer): Promise<PeerQuoteAnswer> {
    return {
      quoted: false,
      reason:
        `${peer.name}: the simulator does not reserve standby capacity at peers (the cluster's ` +
        `peerStandbyNodes stands for it)`,
    };
  }

  async bindStandby(peer: Peer, hold: StandbyHold): Promise<RemoteAgreement> {
    throw new Error(`${peer.name}: the simulator holds no standby capacity (${hold.offerId})`);
  }

  /** The agreement a migrated job runs under at its peer. */
  agreement(agreementId: string): PeerBooking | undefined {
    return this.byAgreement.get(agreementId);
  }

  /** What each peer did, in the order of the peers file. */
  usage(): PeerActivity[] {
    return [...this.activity.values()].map((a) => ({ ...a }));
  }

  /**
   * The earliest start from which `nodes` are free at the peer for the work asked, ending
   * by the deadline; a reservation's window as it is. Starts tried: the earliest start
   * and every end of a booking after it (free capacity only grows there).
   */
  private place(
    peer: string,
    terms: SimulatedPeerTerms,
    request: PeerRequest['request'],
  ): { start: number; end: number } | { reason: string } {
    const nodes = request.nodeCount;
    if (nodes > terms.nodes) return { reason: `the job needs ${nodes} nodes, it has ${terms.nodes} for migrated jobs` };
    const booked = this.bookings.get(peer) ?? [];
    if (request.window) {
      const start = request.window.start.getTime();
      const end = request.window.end.getTime();
      return peak(booked, start, end) + nodes <= terms.nodes
        ? { start, end }
        : {
            reason:
              `${nodes} nodes are not free throughout the window ${isoTime(request.window.start)} to ` +
              `${isoTime(request.window.end)}`,
          };
    }
    const length = Math.ceil(request.runtimeSeconds ?? 0) * 1000;
    const earliest = request.earliestStart?.getTime() ?? 0;
    const latestEnd = request.deadline?.getTime() ?? Number.POSITIVE_INFINITY;
    if (earliest + length > latestEnd)
      return {
        reason:
          `${Math.ceil(length / 1000)} s of work from ${isoTime(new Date(earliest))} end after the ` +
          `deadline ${isoTime(new Date(latestEnd))}`,
      };
    const starts = [earliest, ...booked.map((b) => b.end).filter((t) => t > earliest)].sort((a, b) => a - b);
    for (const start of starts) {
      if (start + length > latestEnd) break;
      if (peak(booked, start, start + length) + nodes <= terms.nodes) return { start, end: start + length };
    }
    return {
      reason:
        `${nodes} nodes are not free for ${Math.ceil(length / 1000)} s between ` +
        `${isoTime(new Date(earliest))} and the deadline ${isoTime(new Date(latestEnd))}`,
    };
  }

  private drop(booking: PeerBooking): void {
    const list = this.bookings.get(booking.peer) ?? [];
    const i = list.indexOf(booking);
    if (i >= 0) list.splice(i, 1);
    this.byOffer.delete(booking.offerId);
  }
}

/** The most nodes the bookings use at once within [start, end). */
function peak(bookings: readonly PeerBooking[], start: number, end: number): number {
  const changes: Array<[number, number]> = [];
  for (const b of bookings) {
    if (b.end <= start || b.start >= end) continue;
    changes.push([Math.max(b.start, start), b.nodes], [b.end, -b.nodes]);
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let used = 0;
  let most = 0;
  for (const [, delta] of changes) {
    used += delta;
    most = Math.max(most, used);
  }
  return most;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
