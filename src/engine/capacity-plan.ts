import type { Allocation } from '../domain/allocation.js';
import type { ServiceRequest } from '../domain/terms.js';
import { decide, startSlots, type CapacityDecision } from '../scheduler/capacity-check.js';

/**
 * The in-memory view of booked capacity, rebuilt from the repository at start-up.
 * Admission decides and books in one synchronous step, so two concurrent requests can
 * never both take the last free nodes; a booking is released if persisting fails.
 */
export class CapacityPlan {
  private readonly bookings = new Map<string, Allocation>();

  constructor(readonly clusterNodes: number) {}

  /**
   * Decides and, if accepted, books under `key`. `replacing` names a booking the new one
   * would replace (renegotiation): it is left out of the decision but stays booked.
   */
  admit(key: string, request: ServiceRequest, now: Date, replacing?: string): CapacityDecision {
    const decision = decide(request, this.others(replacing), this.clusterNodes, now);
    if (decision.accepted && decision.allocation) this.bookings.set(key, decision.allocation);
    return decision;
  }

  /** Free start slots for a request; books nothing. */
  slots(request: ServiceRequest, now: Date, count: number, replacing?: string): Allocation[] {
    return startSlots(request, this.others(replacing), this.clusterNodes, now, count);
  }

  /** Moves a booking to another key (a hold becoming an agreement); false if there is none. */
  rename(from: string, to: string): boolean {
    const allocation = this.bookings.get(from);
    if (!allocation) return false;
    this.bookings.delete(from);
    this.bookings.set(to, allocation);
    return true;
  }

  private others(excluded?: string): Allocation[] {
    return [...this.bookings].filter(([key]) => key !== excluded).map(([, allocation]) => allocation);
  }

  restore(agreementId: string, allocation: Allocation): void {
    this.bookings.set(agreementId, allocation);
  }

  release(agreementId: string): void {
    this.bookings.delete(agreementId);
  }

  booked(): ReadonlyMap<string, Allocation> {
    return this.bookings;
  }
}
