import type { Allocation } from '../domain/allocation.js';
import type { ServiceRequest } from '../domain/terms.js';

/**
 * What JSON.parse gives back for a value JSON.stringify wrote: every Date became its ISO
 * string. Decoders take a Json<T> and must return a T, so the compiler rejects a decoder
 * that forgets a Date field, including one added to the domain types later.
 */
export type Json<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Json<U>[]
    : T extends object
      ? { [K in keyof T]: Json<T[K]> }
      : T;

export function reviveRequest(json: Json<ServiceRequest>): ServiceRequest {
  const { earliestStart, deadline, window, ...rest } = json;
  const request: ServiceRequest = rest;
  // Assigned only when present: an absent field must stay absent, not become `undefined`.
  if (earliestStart !== undefined) request.earliestStart = new Date(earliestStart);
  if (deadline !== undefined) request.deadline = new Date(deadline);
  if (window !== undefined) request.window = { start: new Date(window.start), end: new Date(window.end) };
  return request;
}

export function reviveAllocation(json: Json<Allocation>): Allocation {
  const { start, end, segments, arrival, promised, ...rest } = json;
  const allocation: Allocation = { ...rest, start: new Date(start), end: new Date(end) };
  if (promised !== undefined) allocation.promised = { start: new Date(promised.start), end: new Date(promised.end) };
  if (segments !== undefined) {
    allocation.segments = segments.map((s) => ({ ...s, start: new Date(s.start), end: new Date(s.end) }));
  }
  if (arrival !== undefined) allocation.arrival = new Date(arrival);
  return allocation;
}
