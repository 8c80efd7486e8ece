import type { Allocation } from '../domain/allocation.js';
import type { ServiceRequest } from '../domain/terms.js';
import { decide, type CapacityDecision } from '../scheduler/capacity-check.js';

/**
 * The in-memory view of booked capacity, rebuilt from the repository at start-up.
 * Admission decides and books in one synchronous step, so two concurrent requests can
 * never both take the last free nodes; a booking is released if persisting fails.
 */
export class CapacityPlan {
  private readonly bookings = new Map<string, Allocation>();

  constructor(readonly clusterNodes: number) {}

  admit(agreementId: string, request: ServiceRequest, now: Date): CapacityDecision {
    const decision = decide(request, [...this.bookings.values()], this.clusterNodes, now);
    if (decision.accepted && decision.allocation) this.bookings.set(agreementId, decision.allocation);
    return decision;
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
