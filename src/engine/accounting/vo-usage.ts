import type { Allocation } from '../../domain/allocation.js';
import type { Agreement } from '../../domain/agreement.js';
import type { Caller } from '../../domain/identity.js';
import type { ServiceRequest } from '../../domain/terms.js';
import { usedPeriod, type RunFacts } from '../../domain/usage.js';
import { epochAt, type SitePolicy } from '../../domain/vo-policy.js';
import { checkShares, standings, type Owner, type UsageItem } from '../../domain/vo-shares.js';

/**
 * VO usage SLAs at admission (docs/vo-policy.md). Usage in an epoch is what the
 * plan has booked (agreements and held offers, by their owners) plus what ended jobs used
 * (from their runs); a new booking is checked against the shares before it is kept
 * (CreateAgreement, a negotiated hold), and refused with ShareExceeded naming the VO,
 * group or user, its share, its usage and when room returns.
 */
export class VoUsage {
  /** Who each booking key is for. */
  private readonly owners = new Map<string, Owner>();
  /** What ended jobs used, in this epoch and the last. */
  private used: UsageItem[] = [];

  constructor(
    private readonly deps: {
      policy: SitePolicy;
      siteNodes: () => number;
      /** The plan's booking under a key (an agreement id or `hold:<offer id>`), if it has one. */
      allocationOf: (key: string) => Allocation | undefined;
    },
  ) {}

  static ownerOf(request: ServiceRequest, initiator: string): Owner {
    const charge = request.chargeAccount;
    return {
      user: initiator,
      ...(charge?.virtualOrganisation ? { vo: charge.virtualOrganisation } : {}),
      ...(charge?.group ? { group: charge.group } : {}),
    };
  }

  /** Throws ShareExceeded when booking `allocation` for `request` would pass a share. */
  check(key: string, request: ServiceRequest, allocation: Allocation | undefined, caller: Caller, now?: Date): void {
    if (!allocation) return;
    const owner = VoUsage.ownerOf(request, caller.identity);
    if (!owner.vo) return;
    const pieces = itemsOf(owner, allocation);
    checkShares(this.deps.policy, this.deps.siteNodes(), this.items(key), pieces, now?.getTime());
  }

  own(key: string, owner: Owner): void {
    this.owners.set(key, owner);
  }

  forget(key: string): void {
    this.owners.delete(key);
  }

  rename(from: string, to: string): void {
    const owner = this.owners.get(from);
    if (!owner) return;
    this.owners.delete(from);
    this.owners.set(to, owner);
  }

  /** An agreement ended: its booking goes from the plan, what its job used stays counted. */
  ended(agreement: Agreement, run: RunFacts | undefined, now: Date): void {
    this.owners.delete(agreement.id);
    const period = usedPeriod(agreement, run);
    if (period)
      this.used.push({
        owner: VoUsage.ownerOf(agreement.request, agreement.initiator),
        nodes: agreement.allocation?.nodes ?? agreement.request.nodeCount,
        start: period.start.getTime(),
        end: period.end.getTime(),
      });
    // Only this epoch and the last matter.
    const from = epochAt(this.deps.policy, epochAt(this.deps.policy, now.getTime()).start - 1).start;
    this.used = this.used.filter((i) => i.end > from);
  }

  /** Shares against usage in the epoch holding `at`. */
  standings(at: Date) {
    return standings(this.deps.policy, this.deps.siteNodes(), this.items(), at.getTime());
  }

  /**
   * Everything used or booked, but the booking `except`: the bookings with an owner, looked
   * up one by one (listing every booking of the plan cost a check time and memory in
   * proportion to all live agreements, VO or not).
   */
  private items(except?: string): UsageItem[] {
    const items = [...this.used];
    for (const [key, owner] of this.owners) {
      const allocation = key === except ? undefined : this.deps.allocationOf(key);
      if (allocation) items.push(...itemsOf(owner, allocation));
    }
    return items;
  }
}

/**
 * What a booking counts against its VO: its pieces, or, for a promise with a start time, the promise alone (its
 * preparation and release are the provider's).
 */
function itemsOf(owner: Owner, allocation: Allocation): UsageItem[] {
  const segments = allocation.segments ?? [];
  const from = allocation.promised?.start.getTime() ?? Number.NEGATIVE_INFINITY;
  const to = allocation.promised?.end.getTime() ?? Number.POSITIVE_INFINITY;
  if (segments.length === 0)
    return [
      {
        owner,
        nodes: allocation.nodes,
        start: Math.max(from, allocation.start.getTime()),
        end: Math.min(to, allocation.end.getTime()),
      },
    ];
  return segments
    .map((s) => ({
      owner,
      nodes: s.nodeIds.length,
      start: Math.max(from, s.start.getTime()),
      end: Math.min(to, s.end.getTime()),
    }))
    .filter((item) => item.end > item.start);
}
