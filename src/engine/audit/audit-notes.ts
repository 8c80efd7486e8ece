import type { Agreement } from '../../domain/agreement.js';
import type { Allocation } from '../../domain/allocation.js';
import type { Caller } from '../../domain/identity.js';
import { findOffer, type Hold, type Negotiation, type NegotiationOfferRecord } from '../../domain/negotiation.js';
import { sha256Hex } from './audit-chain.js';
import type { AuditDetails, AuditNote, JsonValue } from '../ports.js';

/**
 * The audit notes the services hand to the repositories with each change (AuditLog in
 * ports.ts). Agreements: one note per change, named by the service. Negotiations: derived
 * from the stored record before and after the change, so every hold that ends, moves or
 * is placed is recorded wherever in the service that happens.
 */

/** The actor of changes no caller asked for: timers, the scheduler, start-up. */
export const systemActor = 'system';

export function actorOf(caller: Caller): string {
  return caller.identity;
}

/**
 * The note of a change to an agreement: `state` (and `previousState` when it changed) and
 * `documentSha256`, the sha256 of the agreement document as stored, so the chain also pins
 * the document's content.
 */
export function agreementNote(change: {
  actor: string;
  action: string;
  after: Agreement;
  before?: Agreement;
  details?: AuditDetails;
}): AuditNote {
  const { actor, action, after, before, details = {} } = change;
  return {
    at: after.updatedAt,
    actor,
    action,
    details: {
      ...details,
      state: after.state,
      ...(before && before.state !== after.state ? { previousState: before.state } : {}),
      documentSha256: agreementDigest(after),
    },
  };
}

/** The digest an agreement's audit entries record: sha256 hex of its document as stored. */
export function agreementDigest(agreement: Agreement): string {
  return sha256Hex(agreement.document);
}

/** An allocation in a few fields: its times, node count and, when planned, the nodes it runs on. */
export function allocationSummary(allocation: Allocation | undefined): JsonValue {
  if (!allocation) return null;
  const nodeIds = [...new Set(allocation.segments?.flatMap((s) => s.nodeIds) ?? [])].sort();
  return {
    start: allocation.start.toISOString(),
    end: allocation.end.toISOString(),
    nodes: allocation.nodes,
    ...(nodeIds.length > 0 ? { nodeIds } : {}),
  };
}

const negotiationStateActions: Partial<Record<Negotiation['state'], string>> = {
  Concluded: 'concluded',
  Closed: 'closed',
  Terminated: 'terminated',
};

/**
 * The notes of a change to a negotiation, `before` being what is stored (undefined: it is
 * new): offers received and answered, holds placed, ended (released, expired with the fee
 * charged, confirmed) or moved by the scheduler, and a change of state. Expiry and moves
 * are the system's doing; the rest is `actor`'s.
 */
export function negotiationNotes(before: Negotiation | undefined, after: Negotiation, actor: string): AuditNote[] {
  const at = after.updatedAt;
  const notes: AuditNote[] = [];
  const note = (action: string, details: AuditDetails, by = actor) => notes.push({ at, actor: by, action, details });
  if (!before) {
    note('created', {
      type: after.type,
      ...(after.agreementId !== undefined ? { agreementId: after.agreementId } : {}),
      expiresAt: after.expiresAt.toISOString(),
    });
  }
  const added = after.offers.filter((o) => !before || !findOffer(before, o.offerId));
  const received = added.filter((o) => o.creator === 'NegotiationInitiator');
  const answered = added.filter((o) => o.creator === 'NegotiationResponder');
  if (received.length > 0) note('offers-received', { round: after.rounds, offers: received.map(offerSummary) });
  if (answered.length > 0) note('offers-answered', { round: after.rounds, offers: answered.map(offerSummary) });
  for (const offer of answered) if (offer.hold?.state === 'Held') note('hold-placed', holdDetails(offer, offer.hold));

  for (const offer of after.offers) {
    const previous = before && findOffer(before, offer.offerId)?.hold;
    const hold = offer.hold;
    if (!previous || !hold || previous.state !== 'Held') continue;
    if (hold.state === 'Expired') note('hold-expired', holdDetails(offer, hold), systemActor);
    else if (hold.state === 'Released') note('hold-released', holdDetails(offer, hold));
    else if (hold.state === 'Confirmed')
      note('hold-confirmed', { ...holdDetails(offer, hold), agreementId: after.agreementCreated ?? null });
    else if (JSON.stringify(hold.allocation) !== JSON.stringify(previous.allocation)) {
      note(
        'plan-moved',
        {
          offerId: offer.offerId,
          from: allocationSummary(previous.allocation),
          to: allocationSummary(hold.allocation),
        },
        systemActor,
      );
    }
  }

  if (before && before.state !== after.state) {
    note(negotiationStateActions[after.state] ?? `state-changed ${before.state}->${after.state}`, {
      state: after.state,
      previousState: before.state,
      ...(after.agreementCreated !== undefined ? { agreementId: after.agreementCreated } : {}),
      ...(after.closedBecause !== undefined ? { closedBecause: after.closedBecause } : {}),
    });
  }
  return notes;
}

function offerSummary(offer: NegotiationOfferRecord): JsonValue {
  return { offerId: offer.offerId, state: offer.state, counterOfferTo: offer.counterOfferTo };
}

function holdDetails(offer: NegotiationOfferRecord, hold: Hold): AuditDetails {
  return {
    offerId: offer.offerId,
    holdState: hold.state,
    fee: { ...hold.fee },
    ...(hold.charged ? { charged: { ...hold.charged } } : {}),
    expiresAt: hold.expiresAt.toISOString(),
    allocation: allocationSummary(hold.allocation),
  };
}
