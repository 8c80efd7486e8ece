import type { Agreement } from '../../domain/agreement.js';
import { mayActOn, type Caller } from '../../domain/identity.js';
import {
  InvalidStateTransition,
  InvalidTerms,
  NotAuthorized,
  OfferExpired,
  UnknownResource,
} from '../../domain/errors.js';
import {
  findOffer,
  firstHoldExpiry,
  holdKey,
  liveHolds,
  negotiationIdOf,
  nextOfferId,
  snapshotOf,
  type Negotiation,
  type NegotiationOfferRecord,
  type OfferState,
} from '../../domain/negotiation.js';
import {
  negotiationStep,
  type CounteredOffer,
  type NegotiationMessage,
} from '../../domain/negotiation-state-machine.js';
import { offerHoldId } from '../accounting/charging.js';
import { VoUsage } from '../accounting/vo-usage.js';
import { addSeconds, isoTime } from '../../domain/time.js';
import { actorOf, negotiationNotes } from '../audit/audit-notes.js';
import type { NegotiationFilter, NegotiationRequest, ReceivedNegotiationOffer, ReceivedOffer } from '../ports.js';

export type { NegotiationSettings } from './responder-offers.js';
import { NegotiationBook } from './negotiation-book.js';
export type { NegotiationServiceDeps } from './negotiation-book.js';

/** An Acceptable offer being accepted, handed to the agreement factory while the negotiation is locked. */
export interface CommittedOffer {
  negotiation: Negotiation;
  offer: NegotiationOfferRecord;
}

const messageFor: Record<OfferState, NegotiationMessage> = {
  Advisory: 'AdvisoryOffer',
  Solicited: 'SolicitedOffer',
  Acceptable: 'CommittingOffer',
  Rejected: 'RejectOffer',
};

/**
 * WS-Agreement Negotiation (PROTOCOL.md): advisory offers get start slots, solicited
 * offers an Acceptable counter-offer that holds capacity (a preparatory reservation) or a
 * Rejected one saying why; holds end when confirmed, rejected, terminated or expired.
 * Every change is durable before the answer; one request per negotiation at a time.
 */
export class NegotiationService extends NegotiationBook {
  async initiate(request: NegotiationRequest, caller: Caller): Promise<Negotiation> {
    const now = this.deps.clock.now();
    if (request.agreementResponder !== 'NegotiationResponder') {
      throw new InvalidTerms(
        'wsag-neg:AgreementResponder must be NegotiationResponder: this server is the agreement responder of ' +
          'what it negotiates',
      );
    }
    if (request.type === 'Renegotiation') {
      const agreement = await this.deps.agreements.get(request.agreementId ?? '');
      if (!agreement)
        throw new UnknownResource(`Renegotiation names agreement "${request.agreementId}", which does not exist`);
      if (!mayActOn(caller, agreement)) throw new NotAuthorized(`agreement "${agreement.id}" belongs to another party`);
      if (agreement.state !== 'Observed') {
        throw new InvalidStateTransition(
          `only an Observed agreement can be renegotiated; agreement "${agreement.id}" is ${agreement.state}`,
        );
      }
    }
    if (request.expirationTime && request.expirationTime <= now) {
      throw new InvalidTerms(`wsag-neg:ExpirationTime ${isoTime(request.expirationTime)} is not in the future`);
    }
    if (this.deps.fairUse)
      await this.deps.fairUse.checkNegotiations(caller, now, this.deps.settings.maxSeconds, this.deps.negotiations);
    const limit = addSeconds(now, this.deps.settings.maxSeconds);
    const expiresAt = request.expirationTime && request.expirationTime < limit ? request.expirationTime : limit;
    const negotiation: Negotiation = {
      id: this.deps.ids.next(),
      initiator: caller.identity,
      type: request.type,
      ...(request.agreementId !== undefined && request.type === 'Renegotiation'
        ? { agreementId: request.agreementId }
        : {}),
      state: 'Open',
      rounds: 0,
      context: this.deps.documents.completeContext(request, {
        initiator: caller.identity,
        responder: this.deps.settings.providerName,
        expiresAt,
      }),
      offers: [],
      createdAt: now,
      updatedAt: now,
      expiresAt,
    };
    await this.deps.negotiations.insert(negotiation, negotiationNotes(undefined, negotiation, actorOf(caller)));
    return negotiation;
  }

  /** The negotiation, with holds that have expired released first. */
  async get(id: string, caller: Caller): Promise<Negotiation> {
    return this.lock.run(id, async () => {
      const negotiation = await this.load(id, caller);
      await this.expireAndSave(negotiation, this.deps.clock.now());
      return negotiation;
    });
  }

  /** The caller's negotiations (an operator's: everyone's), a page of them when `page` says so. */
  async list(
    caller: Caller,
    page: Omit<NegotiationFilter, 'initiator' | 'withLiveHolds'> = {},
  ): Promise<Negotiation[]> {
    return this.deps.negotiations.list(caller.isAdmin ? page : { ...page, initiator: caller.identity });
  }

  /** One round: answers each offer in order; returns the counter-offers. */
  async negotiate(id: string, offers: ReceivedNegotiationOffer[], caller: Caller): Promise<NegotiationOfferRecord[]> {
    try {
      return await this.round(id, offers, caller);
    } finally {
      // Holds and agreements the admissions moved get their new allocations stored (outside the lock).
      await this.deps.plan.settle();
    }
  }

  private async round(
    id: string,
    offers: ReceivedNegotiationOffer[],
    caller: Caller,
  ): Promise<NegotiationOfferRecord[]> {
    return this.lock.run(id, async () => {
      const { negotiation, before, now } = await this.openForOffers(id, caller);
      negotiation.rounds++;
      const answers: NegotiationOfferRecord[] = [];
      const booked: string[] = [];
      const funds: Array<() => Promise<void>> = [];
      try {
        for (const incoming of offers) {
          const { step, record } = this.receive(negotiation, incoming, 'negotiate', now);
          switch (step) {
            case 'AnswerWithSlots':
              answers.push(...this.answers.advise(negotiation, incoming, record, now));
              break;
            case 'DecideAndHold': {
              // What the offer's charge account can still cover: beyond it the answer is a counter-offer the budget
              // buys.
              const budget = await this.deps.charging?.budget(incoming.offer.request, caller);
              const answered = this.answers.decide(negotiation, incoming, record, now, {
                caller,
                ...(budget ? { budget } : {}),
              });
              for (const answer of answered) if (answer.hold) booked.push(holdKey(answer.offerId));
              // Capacity held is paid for: its quoted price is held on the charge account (refused when it cannot cover
              // it).
              for (const answer of answered) {
                if (!answer.hold) continue;
                this.deps.shares?.own(holdKey(answer.offerId), VoUsage.ownerOf(answer.request, negotiation.initiator));
                this.deps.fairUse?.own(holdKey(answer.offerId), caller.identity, 'hold', answer.request);
              }
              for (const answer of answered) {
                if (!answer.hold || !this.deps.charging || !answer.price) continue;
                const release = await this.deps.charging.hold(
                  offerHoldId(negotiation.id, answer.offerId),
                  answer.request,
                  answer.price,
                  caller,
                  `offer ${answer.offerId} of negotiation ${negotiation.id}`,
                );
                if (release) funds.push(release);
              }
              answers.push(...answered);
              break;
            }
            case 'ReleaseHold':
              this.endHold(negotiation, incoming.counterOfferTo, 'Released', now);
              break;
            default:
              break;
          }
        }
        negotiation.updatedAt = now;
        await this.save(before, negotiation, caller);
      } catch (error) {
        for (const key of booked) {
          this.deps.plan.release(key);
          this.deps.shares?.forget(key);
          this.deps.fairUse?.forget(key);
        }
        for (const release of funds) await release();
        throw error;
      }
      return answers;
    });
  }

  /**
   * Inside the negotiation's lock, before its offers: loaded (with a copy to save against), expired holds ended, its
   * limits checked.
   */
  private async openForOffers(
    id: string,
    caller: Caller,
  ): Promise<{ negotiation: Negotiation; before: Negotiation; now: Date }> {
    const negotiation = await this.load(id, caller);
    const before = snapshotOf(negotiation);
    const now = this.deps.clock.now();
    this.expireHolds(negotiation, now);
    await this.enforceLimits(negotiation, before, now, caller);
    return { negotiation, before, now };
  }

  /** Advertise: the initiator's offers are recorded for information; nothing is answered or held. */
  async advertise(id: string, offers: ReceivedNegotiationOffer[], caller: Caller): Promise<void> {
    await this.lock.run(id, async () => {
      const { negotiation, before, now } = await this.openForOffers(id, caller);
      for (const incoming of offers) this.receive(negotiation, incoming, 'advertise', now);
      negotiation.updatedAt = now;
      await this.save(before, negotiation, caller);
    });
  }

  /** Ends the negotiation and releases every hold it has. */
  async terminate(id: string, caller: Caller): Promise<Negotiation> {
    return this.lock.run(id, async () => {
      const negotiation = await this.load(id, caller);
      const before = snapshotOf(negotiation);
      const now = this.deps.clock.now();
      this.expireHolds(negotiation, now);
      const { next } = negotiationStep(negotiation.state, 'Terminate', 'None', {
        closedBecause: negotiation.closedBecause,
      });
      for (const offer of liveHolds(negotiation)) this.endHold(negotiation, offer.offerId, 'Released', now);
      negotiation.state = next;
      negotiation.updatedAt = now;
      await this.save(before, negotiation, caller);
      return negotiation;
    });
  }

  /**
   * Accepting an Acceptable offer (CreateAgreement referring to it): checks the offer still
   * stands and that the accepting offer carries its terms, then lets `create` turn the hold
   * into the agreement while the negotiation stays locked, and concludes the negotiation.
   */
  async confirm(
    ref: { offerId: string; negotiationId?: string },
    accepting: ReceivedOffer,
    caller: Caller,
    create: (committed: CommittedOffer) => Promise<{ agreement: Agreement; durable: Promise<void> }>,
  ): Promise<Agreement> {
    const id = ref.negotiationId ?? negotiationIdOf(ref.offerId);
    return this.lock.run(id, async () => {
      const negotiation = await this.load(
        id,
        caller,
        `the accepted offer "${ref.offerId}" belongs to no negotiation "${id}"`,
      );
      const now = this.deps.clock.now();
      await this.expireAndSave(negotiation, now);
      const before = snapshotOf(negotiation);
      const offer = findOffer(negotiation, ref.offerId);
      if (!offer) throw new UnknownResource(`negotiation "${id}" has no offer "${ref.offerId}"`);
      const countered = this.classify(negotiation, offer.offerId, now);
      if (countered === 'ResponderAcceptableExpired') throw expiredOffer(offer);
      negotiationStep(negotiation.state, 'AcceptOffer', countered, {
        offerId: offer.offerId,
        closedBecause: negotiation.closedBecause,
      });
      assertSameTerms(offer, accepting);
      const { agreement, durable } = await create({ negotiation, offer });
      if (offer.hold) offer.hold = { ...offer.hold, state: 'Confirmed', endedAt: now };
      // The negotiation ends with this agreement: the other committing offers it holds are released.
      for (const other of liveHolds(negotiation)) this.endHold(negotiation, other.offerId, 'Released', now);
      negotiation.state = 'Concluded';
      negotiation.agreementCreated = agreement.id;
      negotiation.updatedAt = now;
      await this.save(before, negotiation, caller);
      // Synced with the negotiation above (the log is synced in order): no wait of its own.
      await durable;
      return agreement;
    });
  }

  /** Releases every hold whose time is up (the expiry timer calls this); returns how many. */
  async expireDue(): Promise<number> {
    const now = this.deps.clock.now();
    let expired = 0;
    // Only the negotiations with a hold due are read: not every one holding capacity, each second.
    for (const candidate of await this.deps.negotiations.list({ holdExpiringBy: now })) {
      // A row written before hold_expires_at existed is listed as due whether or not it is.
      if ((firstHoldExpiry(candidate)?.getTime() ?? Infinity) > now.getTime()) continue;
      expired += await this.lock.run(candidate.id, async () => {
        const negotiation = await this.deps.negotiations.get(candidate.id);
        return negotiation ? this.expireAndSave(negotiation, now) : 0;
      });
    }
    return expired;
  }

  // --- steps of a round -------------------------------------------------------------

  /** Checks one incoming offer against the protocol table and records it. */
  private receive(
    negotiation: Negotiation,
    incoming: ReceivedNegotiationOffer,
    via: 'negotiate' | 'advertise',
    now: Date,
  ) {
    if (incoming.creator !== 'NegotiationInitiator') {
      throw new InvalidTerms(
        `wsag-neg:Creator of offer "${incoming.offerId ?? '(no OfferId)'}" must be NegotiationInitiator: the ` +
          `server writes its own counter-offers`,
      );
    }
    if (incoming.offerId !== undefined && findOffer(negotiation, incoming.offerId)) {
      throw new InvalidTerms(
        `OfferId "${incoming.offerId}" is already used in this negotiation; every offer needs a new OfferId`,
      );
    }
    const countered = this.classify(negotiation, incoming.counterOfferTo, now);
    const message = via === 'advertise' ? 'Advertise' : messageFor[incoming.state];
    if (countered === 'ResponderAcceptableExpired') {
      throw expiredOffer(findOffer(negotiation, incoming.counterOfferTo) as NegotiationOfferRecord);
    }
    const { effect } = negotiationStep(negotiation.state, message, countered, {
      offerId: incoming.counterOfferTo,
      closedBecause: negotiation.closedBecause,
    });
    const record: NegotiationOfferRecord = {
      offerId: incoming.offerId ?? nextOfferId(negotiation),
      counterOfferTo: incoming.counterOfferTo,
      creator: 'NegotiationInitiator',
      state: incoming.state,
      ...(incoming.expirationTime ? { expirationTime: incoming.expirationTime } : {}),
      createdAt: now,
      document: incoming.document,
      request: incoming.offer.request,
      ...(incoming.offer.templateId !== undefined ? { templateId: incoming.offer.templateId } : {}),
    };
    negotiation.offers.push(record);
    return { step: effect, record };
  }

  private classify(negotiation: Negotiation, counterOfferTo: string, now: Date): CounteredOffer {
    const offer = findOffer(negotiation, counterOfferTo);
    if (offer) {
      if (offer.creator === 'NegotiationInitiator') return 'InitiatorOffer';
      if (offer.state === 'Rejected') return 'ResponderRejected';
      if (offer.state !== 'Acceptable') return 'ResponderAdvisory';
      if (offer.hold?.state === 'Released') return 'ResponderAcceptableWithdrawn';
      if (offer.hold?.state === 'Expired' || (offer.expirationTime && offer.expirationTime <= now))
        return 'ResponderAcceptableExpired';
      return 'ResponderAcceptable';
    }
    if (negotiation.type === 'Renegotiation' && counterOfferTo === negotiation.agreementId) return 'Template';
    if (this.deps.templates.find({ id: counterOfferTo })) return 'Template';
    throw new UnknownResource(
      `CounterOfferTo "${counterOfferTo}" names no offer of negotiation "${negotiation.id}" and no template: ` +
        `a first offer counters a TemplateId` +
        (negotiation.type === 'Renegotiation' ? " or the renegotiated agreement's id" : ''),
    );
  }

  // --- holds and limits ---------------------------------------------------------------
}

function expiredOffer(offer: NegotiationOfferRecord): OfferExpired {
  const hold = offer.hold;
  const at = offer.expirationTime ? ` at ${isoTime(offer.expirationTime)}` : '';
  const fee = hold?.charged
    ? ` and the preparatory fee of ${hold.charged.amount.toFixed(2)} ${hold.charged.currency} was charged`
    : '';
  return new OfferExpired(`offer "${offer.offerId}" expired${at}: its hold was released${fee}; negotiate a new offer`);
}

/** The accepting offer must carry the committed terms; the kind of request (preparatory, binding) may differ. */
function assertSameTerms(committed: NegotiationOfferRecord, accepting: ReceivedOffer): void {
  const alternatives = accepting.alternatives();
  if (alternatives.length !== 1) {
    throw new InvalidTerms(
      `an accepting offer carries the terms of offer "${committed.offerId}" without alternatives; it has ` +
        `${alternatives.length}`,
    );
  }
  const theirs = comparable(alternatives[0]?.request ?? accepting.request);
  const ours = comparable(committed.request);
  const differing = [...new Set([...Object.keys(ours), ...Object.keys(theirs)])].filter(
    (key) => JSON.stringify(ours[key]) !== JSON.stringify(theirs[key]),
  );
  if (differing.length > 0) {
    const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v));
    const detail = differing.map((key) => `${key}: offered ${show(ours[key])}, sent ${show(theirs[key])}`).join('; ');
    throw new InvalidTerms(
      `the terms differ from the Acceptable offer "${committed.offerId}" (${detail}): accept it with its ` +
        `terms unchanged`,
    );
  }
}

function comparable(request: ReceivedOffer['request']): Record<string, unknown> {
  const { requestKind: _kind, ...rest } = request;
  return JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
}
