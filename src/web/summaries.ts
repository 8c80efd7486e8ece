import { isFinal } from '../domain/agreement-state-machine.js';
import type { Agreement } from '../domain/agreement.js';
import type { Negotiation, NegotiationOfferRecord } from '../domain/negotiation.js';
import { offerIdOfHoldKey } from '../domain/negotiation.js';
import type { NodeView, PlanningService, ReplanSummary } from '../engine/planning/index.js';

/** JSON views of domain objects for /api (not part of WS-Agreement; the CLI and operators read them). */
export function agreementSummary(a: Agreement) {
  return {
    id: a.id,
    name: a.name,
    state: a.state,
    template: a.templateName,
    initiator: a.initiator,
    guarantee: guaranteeOf(a),
    nodes: a.allocation?.nodes ?? a.request.nodeCount,
    start: a.allocation?.start,
    end: endOf(a),
    price: a.price,
    origin: a.origin,
    alternative: a.alternative,
    usedBy: a.usedBy,
    usesReservation: a.request.useReservation,
    migratedTo: a.migratedTo,
    createdAt: a.createdAt,
    // Where to read it again, and its signed document to audit.
    links: { self: agreementPath(a.id), document: `${agreementPath(a.id)}/document` },
  };
}

const agreementPath = (id: string) => `/api/agreements/${encodeURIComponent(id)}`;

/**
 * When the booking ends: as planned, or, for an agreement that ended sooner (a job done early, a termination), when it
 * ended.
 */
function endOf(a: Agreement): Date | undefined {
  const planned = a.allocation?.end;
  if (!planned || !isFinal(a.state)) return planned;
  return a.updatedAt < planned ? a.updatedAt : planned;
}

/**
 * The agreement's guarantee terms in one word: Violated if any is, else Fulfilled when all are, else NotDetermined;
 * none without terms.
 */
function guaranteeOf(a: Agreement): 'Violated' | 'Fulfilled' | 'NotDetermined' | 'none' {
  const states = a.guaranteeTerms.map((t) => t.state);
  if (states.length === 0) return 'none';
  if (states.includes('Violated')) return 'Violated';
  return states.every((s) => s === 'Fulfilled') ? 'Fulfilled' : 'NotDetermined';
}

/** A negotiation offer as the JSON face shows it: its states, price and the hold it keeps. */
export function offerSummary(o: NegotiationOfferRecord) {
  return {
    offerId: o.offerId,
    counterOfferTo: o.counterOfferTo,
    creator: o.creator,
    state: o.state,
    expirationTime: o.expirationTime,
    price: o.price,
    note: o.note,
    alternative: o.alternative,
    hold: o.hold && {
      ...o.hold.allocation,
      expiresAt: o.hold.expiresAt,
      state: o.hold.state,
      fee: o.hold.fee,
      charged: o.hold.charged,
      endedAt: o.hold.endedAt,
    },
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
    offers: n.offers.map(offerSummary),
    createdAt: n.createdAt,
  };
}

/**
 * Every booking in the plan: agreements under their id, preparatory holds as `hold:<offer id>`.
 * `nodes` is the node count (as on the wire); `nodeIds` the concrete working nodes of every
 * piece still booked, `spareNodeIds` the spares kept for restarts (Enhanced, Full); each piece's
 * `readyAt` and `releaseFrom` bound its work, before and after which its nodes are prepared and
 * released; `promised` is a reservation's or session's window inside the booking. With
 * `window`, only the bookings overlapping it (the dashboard's view).
 */
export function planEntries(plan: PlanningService, window?: { from: Date; to: Date }) {
  return [...plan.booked(window)].map(([key, a]) => {
    const offerId = offerIdOfHoldKey(key);
    const segments = a.segments ?? [];
    const spec = plan.job(key)?.spec;
    const phases = plan.phasesOf(key);
    return {
      kind: offerId !== undefined ? 'hold' : 'agreement',
      id: offerId ?? key,
      level: spec?.level,
      jobKind: spec?.kind,
      nodes: a.nodes,
      start: a.start,
      end: a.end,
      // A promise with a start time: the window inside the booking (the rest is the nodes' preparation and release).
      promised: a.promised,
      nodeIds: [...new Set(segments.flatMap((s) => s.nodeIds))],
      spareNodeIds: [...new Set(segments.flatMap((s) => s.spareNodeIds))],
      segments: segments.map((s, i) => ({
        start: s.start,
        end: s.end,
        readyAt: phases[i]?.readyAt,
        releaseFrom: phases[i]?.releaseFrom,
        nodeIds: s.nodeIds,
        spareNodeIds: s.spareNodeIds,
        restart: s.restart,
      })),
      checkpoints: a.checkpoints?.count ?? 0,
      checkpointIntervalSeconds:
        a.checkpoints && a.checkpoints.count > 0 ? Math.round(a.checkpoints.intervalSeconds) : undefined,
      outagesLeft: a.outagesLeft,
      problem: a.problem,
    };
  });
}

/**
 * A party's view of the plan: its own bookings in full, everyone else's as anonymous busy
 * time (nodes and times only), so a user sees when and where the site is free without
 * learning who booked what (docs/operations.md, "Dashboard").
 */
export function partyView(entries: ReturnType<typeof planEntries>, own: ReadonlySet<string>) {
  return entries.map((entry) =>
    own.has(entry.id)
      ? entry
      : {
          kind: 'busy' as const,
          id: '',
          nodes: entry.nodes,
          start: entry.start,
          end: entry.end,
          nodeIds: entry.nodeIds,
          spareNodeIds: entry.spareNodeIds,
          segments: entry.segments.map((s) => ({
            start: s.start,
            end: s.end,
            nodeIds: s.nodeIds,
            spareNodeIds: s.spareNodeIds,
            restart: false,
          })),
          checkpoints: 0,
        },
  );
}

export function nodeSummary(node: NodeView) {
  return { ...node, buffer: node.buffer ?? false };
}

/** What a node failure or repair changed: bookings by key (an agreement id, or `hold:<offer id>`). */
export function replanSummary(report: ReplanSummary, failed: boolean) {
  return {
    node: report.node,
    failed,
    moved: report.moved,
    suspended: report.suspended,
    solved: report.solved,
    problematic: report.problematic,
  };
}
