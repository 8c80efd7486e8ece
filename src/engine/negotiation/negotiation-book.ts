import { mayActOn, type Caller } from '../../domain/identity.js';
import { NegotiationClosed, NotAuthorized, TooManyRounds, UnknownResource } from '../../domain/errors.js';
import {
  findOffer,
  holdKey,
  liveHolds,
  negotiationIdOf,
  snapshotOf,
  type Negotiation,
} from '../../domain/negotiation.js';
import { feeCharged } from '../../domain/pricing.js';
import type { Charging } from '../accounting/charging.js';
import type { VoUsage } from '../accounting/vo-usage.js';
import { isoTime } from '../../domain/time.js';
import { actorOf, negotiationNotes, systemActor } from '../audit/audit-notes.js';
import type { FairUse } from '../fair-use/fair-use.js';
import { KeyedLock } from '../keyed-lock.js';
import type { PlanningService } from '../planning/planning-service.js';
import { ResponderOffers } from './responder-offers.js';
import type {
  AgreementRepository,
  Clock,
  IdSource,
  NegotiationDocumentWriter,
  NegotiationRepository,
  TemplateCatalog,
} from '../ports.js';
import type { NegotiationSettings } from './responder-offers.js';

export interface NegotiationServiceDeps {
  negotiations: NegotiationRepository;
  agreements: AgreementRepository;
  templates: TemplateCatalog;
  documents: NegotiationDocumentWriter;
  plan: PlanningService;
  clock: Clock;
  ids: IdSource;
  settings: NegotiationSettings;
  /** Holds of funds on the sla:ChargeAccount of offers that hold capacity; absent: nothing is charged. */
  charging?: Pick<Charging, 'hold' | 'budget'>;
  /** VO usage SLAs: a hold is capacity booked for its VO. */
  shares?: Pick<VoUsage, 'check' | 'own' | 'forget'>;
  /** Fair use: open negotiations and held capacity per party. */
  fairUse?: Pick<FairUse, 'check' | 'own' | 'forget' | 'checkNegotiations'>;
}

/**
 * What the negotiation service keeps: negotiations loaded, saved and restored, their holds recorded, expired and ended,
 * and the limits on them (NegotiationService answers the operations).
 */
export abstract class NegotiationBook {
  protected readonly lock = new KeyedLock();

  protected readonly answers: ResponderOffers;

  constructor(protected readonly deps: NegotiationServiceDeps) {
    this.answers = new ResponderOffers(deps);
  }

  /**
   * Start-up: every hold still Held is either confirmed (an agreement records it as its
   * origin: the crash came between the two writes), expired (fee charged), or booked again.
   */
  async restore(): Promise<{ held: number; expired: number; confirmed: number; lost?: number }> {
    const now = this.deps.clock.now();
    const withHolds = await this.deps.negotiations.list({ withLiveHolds: true });
    // Only an agreement made after a negotiation began can have confirmed one of its holds: read those, not every
    // agreement ever made.
    const origins = new Map<string, string>();
    const earliest = withHolds[0]?.createdAt;
    if (earliest) {
      for (const agreement of await this.deps.agreements.list({
        after: { createdAt: new Date(earliest.getTime() - 1), id: '' },
      })) {
        if (agreement.origin) origins.set(agreement.origin.offerId, agreement.id);
      }
    }
    const counts = { held: 0, expired: 0, confirmed: 0, lost: 0 };
    for (const negotiation of withHolds) {
      const before = snapshotOf(negotiation);
      let changed = false;
      for (const offer of liveHolds(negotiation)) {
        const hold = offer.hold as NonNullable<typeof offer.hold>;
        const agreementId = origins.get(offer.offerId);
        if (agreementId) {
          offer.hold = { ...hold, state: 'Confirmed', endedAt: now };
          negotiation.state = 'Concluded';
          negotiation.agreementCreated = agreementId;
          counts.confirmed++;
          changed = true;
        } else if (hold.expiresAt <= now) {
          this.endHold(negotiation, offer.offerId, 'Expired', now);
          counts.expired++;
          changed = true;
        } else {
          const outcome = this.deps.plan.restore(
            holdKey(offer.offerId),
            offer.request,
            hold.allocation,
            offer.createdAt,
            now,
            negotiation.agreementId,
          );
          if (outcome.restored === 'lost') {
            // Its capacity is gone (the cluster changed): released, and charged nothing.
            offer.hold = {
              ...hold,
              state: 'Released',
              charged: { amount: 0, currency: hold.fee.currency },
              endedAt: now,
            };
            counts.lost++;
            changed = true;
          } else {
            counts.held++;
          }
        }
      }
      if (changed) {
        negotiation.updatedAt = now;
        await this.save(before, negotiation, systemActor);
      }
    }
    const { lost, ...rest } = counts;
    return lost > 0 ? counts : rest;
  }

  /**
   * Stores the plan's current allocation of a hold the scheduler moved (the persister of
   * PlanningService.settle); a hold that is no longer Held is left as it is.
   */
  async recordHoldAllocation(offerId: string): Promise<void> {
    const id = negotiationIdOf(offerId);
    await this.lock.run(id, async () => {
      const negotiation = await this.deps.negotiations.get(id);
      const offer = negotiation && findOffer(negotiation, offerId);
      const hold = offer?.hold;
      if (!negotiation || !offer || !hold || hold.state !== 'Held') return;
      const allocation = this.deps.plan.allocationOf(holdKey(offerId), hold.allocation);
      if (!allocation || JSON.stringify(allocation) === JSON.stringify(hold.allocation)) return;
      const before = snapshotOf(negotiation);
      offer.hold = { ...hold, allocation };
      negotiation.updatedAt = this.deps.clock.now();
      await this.save(before, negotiation, systemActor);
    });
  }

  protected endHold(negotiation: Negotiation, offerId: string, state: 'Released' | 'Expired', now: Date): void {
    const offer = findOffer(negotiation, offerId);
    const hold = offer?.hold;
    if (!offer || !hold || hold.state !== 'Held') return;
    const charged = state === 'Expired' ? hold.fee : feeCharged(hold.fee, offer.createdAt, hold.expiresAt, now);
    offer.hold = { ...hold, state, charged, endedAt: now };
    this.deps.plan.release(holdKey(offerId));
  }

  /** Releases holds whose time is up; returns how many. */
  protected expireHolds(negotiation: Negotiation, now: Date): number {
    let expired = 0;
    for (const offer of liveHolds(negotiation)) {
      if ((offer.hold as NonNullable<typeof offer.hold>).expiresAt <= now) {
        this.endHold(negotiation, offer.offerId, 'Expired', now);
        expired++;
      }
    }
    return expired;
  }

  protected async expireAndSave(negotiation: Negotiation, now: Date): Promise<number> {
    const before = snapshotOf(negotiation);
    const expired = this.expireHolds(negotiation, now);
    if (expired > 0) {
      negotiation.updatedAt = now;
      await this.save(before, negotiation, systemActor);
    }
    return expired;
  }

  /** Stores the negotiation with the audit notes of what changed since `before` (as stored). */
  protected save(before: Negotiation, negotiation: Negotiation, by: Caller | typeof systemActor): Promise<void> {
    const actor = by === systemActor ? systemActor : actorOf(by);
    return this.deps.negotiations.update(negotiation, negotiationNotes(before, negotiation, actor));
  }

  /**
   * Site limits (Hovestadt 2006, section 2.3): past the duration or the rounds, the negotiation closes with a fault.
   */
  protected async enforceLimits(
    negotiation: Negotiation,
    before: Negotiation,
    now: Date,
    caller: Caller,
  ): Promise<void> {
    if (negotiation.state !== 'Open') return;
    const { maxRounds } = this.deps.settings;
    let fault: Error | undefined;
    if (now >= negotiation.expiresAt) {
      negotiation.closedBecause = `it reached its end time ${isoTime(negotiation.expiresAt)}`;
      fault = new NegotiationClosed(
        `the negotiation is closed: ${negotiation.closedBecause}; Acceptable offers can still be accepted ` +
          `until they expire`,
      );
    } else if (negotiation.rounds >= maxRounds) {
      negotiation.closedBecause = `it used the site's maximum of ${maxRounds} rounds`;
      fault = new TooManyRounds(
        `the negotiation is closed: ${negotiation.closedBecause}; Acceptable offers can still be accepted ` +
          `until they expire`,
      );
    }
    if (!fault) return;
    negotiation.state = 'Closed';
    negotiation.updatedAt = now;
    await this.save(before, negotiation, caller);
    throw fault;
  }

  protected async load(id: string, caller: Caller, missing = `no negotiation with id "${id}"`): Promise<Negotiation> {
    const negotiation = await this.deps.negotiations.get(id);
    if (!negotiation) throw new UnknownResource(missing);
    if (!mayActOn(caller, negotiation)) throw new NotAuthorized(`negotiation "${id}" belongs to another party`);
    return negotiation;
  }
}
