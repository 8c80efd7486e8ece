import type { Agreement } from '../../domain/agreement.js';
import type { Allocation } from '../../domain/allocation.js';
import { FairUseExceeded } from '../../domain/errors.js';
import {
  checkFairUse,
  nodeHoursAhead,
  peakNodes,
  type FairUseLimit,
  type FairUseLimits,
  type HeldBooking,
} from '../../domain/fair-use.js';
import type { Caller } from '../../domain/identity.js';
import type { ServiceRequest } from '../../domain/terms.js';
import type { NegotiationRepository } from '../ports.js';

/** What a booking key is: an agreement (Observed, or Pending the provider's decision) or a held counter-offer. */
export type BookingKind = 'agreement' | 'pending' | 'hold';

interface Owned {
  party: string;
  kind: BookingKind;
}

/**
 * Fair use at admission (docs/security.md, "Fair use"): which party each booking of the plan
 * is for, so a new agreement, pending agreement or held counter-offer is refused with
 * FairUseExceeded when it would take its party past a limit. Background work is not
 * counted (it yields to SLA work, so it takes nothing from other parties), operators are
 * exempt. Bookings the plan no longer has (ended, released) drop out as they are met.
 */
export class FairUse {
  private readonly owned = new Map<string, Owned>();
  private readonly keysOf = new Map<string, Set<string>>();
  /** Checkpoints received and kept, by agreement: whose, and how many bytes. */
  private readonly checkpoints = new Map<string, { party: string; bytes: number }>();

  constructor(
    private readonly deps: {
      limits: FairUseLimits;
      /** The site's nodes for SLA work (not buffer nodes). */
      slaNodes: () => number;
      /** The plan's booking under a key (an agreement id or `hold:<offer id>`), if it has one. */
      allocationOf: (key: string) => Allocation | undefined;
      /** Told each refusal, by limit (for /metrics). */
      onRefusal?: (limit: FairUseLimit) => void;
    },
  ) {}

  get limits(): FairUseLimits {
    return this.deps.limits;
  }

  /** Throws FairUseExceeded when booking `allocation` under `key` would take the caller past a limit. */
  check(
    key: string,
    kind: BookingKind,
    request: ServiceRequest,
    allocation: Allocation | undefined,
    caller: Caller,
    now: Date,
  ): void {
    // A job using a reservation runs on the reservation's booking, which was counted when it was made.
    if (
      caller.isAdmin ||
      !allocation ||
      request.guaranteeLevel === 'Background' ||
      request.useReservation !== undefined
    )
      return;
    const held = this.holdings(caller.identity, key);
    try {
      checkFairUse(this.deps.limits, caller.identity, held, bookingOf(allocation), {
        now: now.getTime(),
        slaNodes: this.deps.slaNodes(),
        agreement: kind !== 'hold',
        pending: kind === 'pending',
      });
    } catch (error) {
      throw error instanceof FairUseExceeded ? this.refused(error) : error;
    }
  }

  /**
   * Throws FairUseExceeded when `caller` already has as many open negotiations as one party
   * may. Each expires within `maxSeconds` of its start, so only those started since count.
   */
  async checkNegotiations(
    caller: Caller,
    now: Date,
    maxSeconds: number,
    negotiations: Pick<NegotiationRepository, 'list'>,
  ): Promise<void> {
    const most = this.deps.limits.negotiations;
    if (most === undefined || caller.isAdmin) return;
    const open = await openNegotiations(caller.identity, now, maxSeconds, negotiations);
    if (open >= most) {
      throw this.refused(
        new FairUseExceeded(
          `${caller.identity} already has ${open} open negotiations, the most one party may have at once ` +
            `(negotiations=${most} in WSAG_FAIR_USE): terminate one, or let one expire`,
          'negotiations',
        ),
      );
    }
  }

  private refused(error: FairUseExceeded): FairUseExceeded {
    if (error.limit) this.deps.onRefusal?.(error.limit as FairUseLimit);
    return error;
  }

  own(
    key: string,
    party: string,
    kind: BookingKind,
    request: Pick<ServiceRequest, 'guaranteeLevel' | 'useReservation'>,
  ): void {
    if (request.guaranteeLevel !== 'Background' && request.useReservation === undefined) this.add(key, party, kind);
  }

  private add(key: string, party: string, kind: BookingKind): void {
    this.forget(key);
    this.owned.set(key, { party, kind });
    let keys = this.keysOf.get(party);
    if (!keys) this.keysOf.set(party, (keys = new Set()));
    keys.add(key);
  }

  forget(key: string): void {
    const owned = this.owned.get(key);
    if (!owned) return;
    this.owned.delete(key);
    const keys = this.keysOf.get(owned.party);
    keys?.delete(key);
    if (keys?.size === 0) this.keysOf.delete(owned.party);
  }

  /** A held counter-offer became an agreement (or an undo turns it back). */
  rename(from: string, to: string, kind: BookingKind): void {
    const owned = this.owned.get(from);
    if (!owned) return;
    this.forget(from);
    this.add(to, owned.party, kind);
  }

  /**
   * Throws FairUseExceeded when `caller` may not keep `bytes` more of checkpoints for
   * `agreementId` (the agreement's earlier checkpoint, which this one replaces, left out).
   */
  checkCheckpoint(caller: Caller, agreementId: string, bytes: number): void {
    const most = this.deps.limits.checkpointBytes;
    if (most === undefined || caller.isAdmin) return;
    let kept = 0;
    for (const [id, checkpoint] of this.checkpoints)
      if (id !== agreementId && checkpoint.party === caller.identity) kept += checkpoint.bytes;
    if (kept + bytes > most) {
      throw this.refused(
        new FairUseExceeded(
          `${caller.identity} keeps ${kept} bytes of checkpoints here; this one of ${bytes} bytes would pass ` +
            `the ${most} one party may keep (checkpointBytes=${most} in WSAG_FAIR_USE)`,
          'checkpointBytes',
        ),
      );
    }
  }

  /** A checkpoint of `bytes` is kept for `agreementId` on behalf of `party` (received, or found at start-up). */
  checkpointKept(agreementId: string, party: string, bytes: number): void {
    this.checkpoints.set(agreementId, { party, bytes });
  }

  /** Follows a stored agreement: accepted, it is no longer pending; ended, it and its checkpoint no longer count. */
  changed(agreement: Agreement): void {
    if (agreement.state !== 'Observed' && agreement.state !== 'Pending') this.checkpoints.delete(agreement.id);
    const owned = this.owned.get(agreement.id);
    if (!owned) return;
    if (agreement.state === 'Observed') owned.kind = 'agreement';
    else if (agreement.state !== 'Pending') this.forget(agreement.id);
  }

  /** What `party` holds against each limit (`wsag limits`, GET /api/fair-use). */
  standing(party: string, now: Date, openNegotiationCount: number): FairUseStanding {
    const { bookings, agreements, pending } = this.holdings(party);
    const until = Math.max(now.getTime(), ...bookings.map((b) => b.end));
    let checkpointBytes = 0;
    for (const checkpoint of this.checkpoints.values())
      if (checkpoint.party === party) checkpointBytes += checkpoint.bytes;
    return {
      party,
      limits: { ...this.deps.limits },
      slaNodes: this.deps.slaNodes(),
      holds: {
        share: peakNodes(bookings, { start: now.getTime(), end: until, nodes: 0 }).nodes,
        nodeHours: Math.round(bookings.reduce((sum, b) => sum + nodeHoursAhead(b, now.getTime()), 0) * 10) / 10,
        agreements,
        pending,
        negotiations: openNegotiationCount,
        checkpointBytes,
      },
    };
  }

  /** What `party` holds now, the booking `except` left out (a renegotiation's own). */
  holdings(party: string, except?: string): { bookings: HeldBooking[]; agreements: number; pending: number } {
    const bookings: HeldBooking[] = [];
    let agreements = 0;
    let pending = 0;
    for (const key of [...(this.keysOf.get(party) ?? [])]) {
      const allocation = this.deps.allocationOf(key);
      if (!allocation) {
        this.forget(key);
        continue;
      }
      if (key === except) continue;
      const kind = this.owned.get(key)?.kind;
      if (kind !== 'hold') agreements++;
      if (kind === 'pending') pending++;
      bookings.push(bookingOf(allocation));
    }
    return { bookings, agreements, pending };
  }
}

/** A party's standing against the limits: for `share`, the most nodes it holds at one time from now on. */
export interface FairUseStanding {
  party: string;
  limits: FairUseLimits;
  slaNodes: number;
  holds: Record<FairUseLimit, number>;
}

/** A party's open negotiations: each expires within `maxSeconds` of its start, so only those started since are read. */
export async function openNegotiations(
  party: string,
  now: Date,
  maxSeconds: number,
  negotiations: Pick<NegotiationRepository, 'list'>,
): Promise<number> {
  const since = new Date(now.getTime() - maxSeconds * 1000);
  const recent = await negotiations.list({ initiator: party, state: 'Open', after: { createdAt: since, id: '' } });
  return recent.filter((n) => n.expiresAt.getTime() > now.getTime()).length;
}

/**
 * The whole booking counts, its nodes' preparation and release included: they are taken from others as much as the
 * promise is.
 */
function bookingOf(allocation: Allocation): HeldBooking {
  return { start: allocation.start.getTime(), end: allocation.end.getTime(), nodes: allocation.nodes };
}
