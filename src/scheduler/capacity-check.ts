import type { Allocation } from '../domain/allocation.js';
import type { ServiceRequest } from '../domain/terms.js';
import { isoTime as iso } from '../domain/time.js';

/**
 * The foundation's admission rule: a cluster of N identical nodes, each agreement books
 * `nodes` nodes over an interval, and a request fits where the booked count plus its own
 * stays at most N. The planning scheduler (SCHEDULER.md) replaces this; the engine only
 * sees `decide`.
 */
export type CapacityDecision =
  | { accepted: true; allocation?: Allocation }
  | { accepted: false; reason: string };

export function decide(
  request: ServiceRequest,
  booked: readonly Allocation[],
  clusterNodes: number,
  now: Date,
): CapacityDecision {
  if (request.nodeCount > clusterNodes) {
    return reject(`${request.nodeCount} nodes requested but the cluster has ${clusterNodes}`);
  }
  if (request.window) {
    const { start, end } = request.window;
    if (end <= start) return reject(`reservation window ends (${iso(end)}) before it starts (${iso(start)})`);
    if (start < now) return reject(`reservation window starts in the past (${iso(start)}, now ${iso(now)})`);
    const peak = peakUsage(booked, start, end);
    if (peak + request.nodeCount > clusterNodes) {
      return reject(
        `${request.nodeCount} nodes are not free from ${iso(start)} to ${iso(end)}: ` +
          `${clusterNodes - peak} of ${clusterNodes} are free throughout that window`,
      );
    }
    return { accepted: true, allocation: { start, end, nodes: request.nodeCount } };
  }
  if (request.runtimeSeconds === undefined) {
    return reject('a runtime estimate (sla:RuntimeEstimate) or a reservation window is required to plan the job');
  }
  // Background jobs run in gaps with no time promise: nothing is booked for them.
  if (request.guaranteeLevel === 'Background') return { accepted: true };

  const durationMs = request.runtimeSeconds * 1000;
  const earliest = request.earliestStart && request.earliestStart > now ? request.earliestStart : now;
  const start = earliestFit(booked, earliest, durationMs, request.nodeCount, clusterNodes);
  const end = new Date(start.getTime() + durationMs);
  if (request.deadline && end > request.deadline) {
    return reject(
      `deadline ${iso(request.deadline)} cannot be met: earliest completion on ${request.nodeCount} nodes ` +
        `is ${iso(end)} (runtime ${request.runtimeSeconds} s, earliest free start ${iso(start)})`,
    );
  }
  return { accepted: true, allocation: { start, end, nodes: request.nodeCount } };
}

/**
 * Up to `count` start slots for a non-binding request (seed 002 section 3.1): where the
 * requested nodes are free for the requested duration, earliest first, at or after the
 * requested start. Deadlines are not checked: a slot past the deadline is an alternative
 * with a later deadline. Background jobs get no slot (they run in gaps with no promise).
 */
export function startSlots(
  request: ServiceRequest,
  booked: readonly Allocation[],
  clusterNodes: number,
  now: Date,
  count: number,
): Allocation[] {
  if (request.nodeCount > clusterNodes || request.guaranteeLevel === 'Background') return [];
  let from: number;
  let durationMs: number;
  if (request.window) {
    from = Math.max(request.window.start.getTime(), now.getTime());
    durationMs = request.window.end.getTime() - request.window.start.getTime();
  } else if (request.runtimeSeconds !== undefined) {
    from = Math.max(request.earliestStart?.getTime() ?? 0, now.getTime());
    durationMs = request.runtimeSeconds * 1000;
  } else {
    return [];
  }
  if (durationMs <= 0) return [];
  // A slot can only begin at `from`, where a booking ends, or right after an earlier slot.
  const candidates = [...new Set([from, ...booked.map((a) => a.end.getTime()).filter((t) => t > from)])].sort((a, b) => a - b);
  const slots: Allocation[] = [];
  for (let i = 0; i < candidates.length && slots.length < count; i++) {
    const t = candidates[i] as number;
    const start = new Date(t);
    const end = new Date(t + durationMs);
    if (peakUsage(booked, start, end) + request.nodeCount > clusterNodes) continue;
    slots.push({ start, end, nodes: request.nodeCount });
    const next = t + durationMs;
    if (!candidates.includes(next)) candidates.splice(sortedIndex(candidates, next, i + 1), 0, next);
  }
  return slots;
}

function sortedIndex(sorted: number[], value: number, from: number): number {
  let i = from;
  while (i < sorted.length && (sorted[i] as number) < value) i++;
  return i;
}

/** Most nodes booked at any instant of [start, end). */
export function peakUsage(booked: readonly Allocation[], start: Date, end: Date): number {
  const events: Array<[number, number]> = [];
  for (const a of booked) {
    if (a.end <= start || a.start >= end) continue;
    events.push([Math.max(a.start.getTime(), start.getTime()), a.nodes]);
    events.push([Math.min(a.end.getTime(), end.getTime()), -a.nodes]);
  }
  // Releases before acquisitions at the same instant: intervals are half-open.
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let current = 0;
  let peak = 0;
  for (const [, delta] of events) {
    current += delta;
    peak = Math.max(peak, current);
  }
  return peak;
}

/** The earliest start at or after `earliest` where `nodes` nodes stay free for `durationMs`. */
function earliestFit(booked: readonly Allocation[], earliest: Date, durationMs: number, nodes: number, clusterNodes: number): Date {
  // A fit can only begin at `earliest` or where a booking ends.
  const candidates = [earliest.getTime(), ...booked.map((a) => a.end.getTime()).filter((t) => t > earliest.getTime())];
  candidates.sort((a, b) => a - b);
  for (const t of candidates) {
    const start = new Date(t);
    if (peakUsage(booked, start, new Date(t + durationMs)) + nodes <= clusterNodes) return start;
  }
  // After the last booking ends the whole cluster is free; candidates include that instant.
  throw new Error('unreachable: the last booking end always fits');
}

function reject(reason: string): CapacityDecision {
  return { accepted: false, reason };
}

