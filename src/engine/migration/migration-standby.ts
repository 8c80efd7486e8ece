import { formatCharge } from '../../domain/compensation.js';
import type { ServiceRequest } from '../../domain/terms.js';
import { compatibilityProfile, profileMismatch } from './migration-compatibility.js';
import type { DroppedTarget, OfferSeen } from './migration-controller.js';
import { customerScope, customerTargetRefusal, providerTargetRefusal } from './migration-policy.js';
import { receivesCheckpoints, type Peer, type PeersConfig } from './peers.js';
import type { PeerProviders, RemoteAgreement, StandbyHold } from './ports.js';

/**
 * Full service reserves remote capacity up front and is "accepted only if [it] can be
 * reserved" (TERMS.md "Guarantee levels", Hovestadt 2006, section 3.2.2). At acceptance time the
 * standby is held at a peer by a preparatory reservation (the peer's committing offer);
 * once the local agreement is made it is bound (an agreement with the peer), or released
 * if the local agreement is not made. The peer must be one the job could move to: the
 * provider's and the customer's policies and the compatibility profile of a job restarting
 * from a checkpoint decide, as in the Migration Controller's steps 1 to 4. The peer is
 * asked for the job's terms at level Standard: the capacity over the job's time with the
 * peer's own checkpointing, not a remote standby of the peer's own.
 */
export type StandbyReservation =
  | { held: true; peer: Peer; hold: StandbyHold; offers: OfferSeen[]; dropped: DroppedTarget[] }
  | { held: false; reason: string; offers: OfferSeen[]; dropped: DroppedTarget[] };

export class RemoteStandby {
  constructor(private readonly deps: { peers: PeersConfig; providers: PeerProviders; providerName?: string }) {}

  /**
   * Holds standby capacity for `request` at the cheapest suitable peer; the other offers are
   * declined. `checkpointMB` is the job's checkpoint size, for the provider's limit on
   * checkpoints sent to the Grid.
   */
  async reserve(
    request: ServiceRequest,
    options: { agreementId?: string; checkpointMB?: number } = {},
  ): Promise<StandbyReservation> {
    const { peers, providers } = this.deps;
    const dropped: DroppedTarget[] = [];
    const offers: OfferSeen[] = [];
    const refuse = (reason: string): StandbyReservation => ({ held: false, reason, offers, dropped });
    if (peers.policy.scope === 'None')
      return refuse("Full service needs standby capacity at a peer, and the provider's policy turns migration off");
    const allowed = customerScope(request.migrationPolicy, peers.policy.scope);
    if ('refusal' in allowed) return refuse(`Full service needs standby capacity at a peer, but ${allowed.refusal}`);
    const profile = compatibilityProfile(request, peers.local, true);
    const targets = peers.peers.filter((peer) => {
      const reason =
        providerTargetRefusal({ checkpointMB: options.checkpointMB ?? 0 }, peer, peers.policy, peers.local) ??
        customerTargetRefusal(request.migrationPolicy, allowed.scope, peer, peers.local) ??
        (receivesCheckpoints(peer)
          ? undefined
          : 'it cannot receive checkpoints (a ws-agreement peer without checkpointUrl)') ??
        profileMismatch(profile, peer.profile);
      if (reason) dropped.push({ peer: peer.name, step: 'standby', reason });
      return reason === undefined;
    });
    if (targets.length === 0)
      return refuse(
        `no peer can hold standby capacity for it ` +
          `(${dropped.map((d) => `${d.peer}: ${d.reason}`).join('; ') || 'no peers configured'})`,
      );
    const name =
      `standby${options.agreementId ? ` for agreement ${options.agreementId}` : ''}` +
      `${this.deps.providerName ? ` of ${this.deps.providerName}` : ''}`;
    // The peer holds the capacity at Standard: its own checkpoints, but no remote standby of its own (that would chain
    // reservations).
    const standby: ServiceRequest = { ...request, requestKind: 'Binding', guaranteeLevel: 'Standard' };
    const answers = await Promise.all(
      targets.map(async (peer) => ({ peer, answer: await providers.reserveStandby(peer, { request: standby, name }) })),
    );
    const held: Array<{ peer: Peer; hold: StandbyHold }> = [];
    for (const { peer, answer } of answers) {
      if (answer.quoted) {
        offers.push({ peer: peer.name, price: answer.quote.price });
        held.push({ peer, hold: answer.quote });
      } else offers.push({ peer: peer.name, refused: answer.reason });
    }
    held.sort((a, b) => a.hold.price.amount - b.hold.price.amount);
    const [cheapest, ...others] = held;
    for (const other of others) await providers.decline(other.peer, other.hold).catch(() => undefined);
    if (!cheapest) return refuse(`no peer holds standby capacity for it (${offers.map((o) => o.refused).join('; ')})`);
    return { held: true, peer: cheapest.peer, hold: cheapest.hold, offers, dropped };
  }

  /** The held standby becomes an agreement with the peer (bind before the hold expires). */
  bind(peer: Peer, hold: StandbyHold): Promise<RemoteAgreement> {
    return this.deps.providers.bindStandby(peer, hold);
  }

  /** The local agreement was not made: the peer releases the hold. */
  release(peer: Peer, hold: StandbyHold): Promise<void> {
    return this.deps.providers.decline(peer, hold);
  }
}

/** One line for logs and faults: where the standby is held and at what price. */
export function describeStandby(reservation: StandbyReservation): string {
  return reservation.held
    ? `standby held at ${reservation.peer.name} for ${formatCharge(reservation.hold.price)}` +
        `${reservation.hold.expiresAt ? ` until ${reservation.hold.expiresAt.toISOString()}` : ''}`
    : `no standby: ${reservation.reason}`;
}
