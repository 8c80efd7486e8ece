import type { Agreement } from '../domain/agreement.js';
import type { Negotiation } from '../domain/negotiation.js';
import type { CapacityPlan } from '../engine/capacity-plan.js';

/** JSON views of domain objects for /api (not part of WS-Agreement; the CLI and operators read them). */
export function agreementSummary(a: Agreement) {
  return {
    id: a.id,
    name: a.name,
    state: a.state,
    template: a.templateName,
    initiator: a.initiator,
    nodes: a.allocation?.nodes ?? a.request.nodeCount,
    start: a.allocation?.start,
    end: a.allocation?.end,
    price: a.price,
    origin: a.origin,
    alternative: a.alternative,
    usedBy: a.usedBy,
    usesReservation: a.request.useReservation,
    createdAt: a.createdAt,
  };
}

export function negotiationSummary(n: Negotiation) {
  return {
    id: n.id,
    type: n.type,
    agreementId: n.agreementId,
    state: n.state,
    closedBecause: n.closedBecause,
    initiator: n.initiator,
    rounds: n.rounds,
    expiresAt: n.expiresAt,
    agreementCreated: n.agreementCreated,
    offers: n.offers.map((o) => ({
      offerId: o.offerId,
      counterOfferTo: o.counterOfferTo,
      creator: o.creator,
      state: o.state,
      expirationTime: o.expirationTime,
      price: o.price,
      note: o.note,
      alternative: o.alternative,
      hold: o.hold && { ...o.hold.allocation, expiresAt: o.hold.expiresAt, state: o.hold.state, fee: o.hold.fee, charged: o.hold.charged, endedAt: o.hold.endedAt },
    })),
    createdAt: n.createdAt,
  };
}

/** Every booking in the plan: agreements under their id, preparatory holds as `hold:<offer id>`. */
export function planEntries(plan: CapacityPlan) {
  return [...plan.booked()].map(([key, a]) => ({
    kind: key.startsWith('hold:') ? 'hold' : 'agreement',
    id: key.startsWith('hold:') ? key.slice('hold:'.length) : key,
    nodes: a.nodes,
    start: a.start,
    end: a.end,
  }));
}
