import { offerIdOfHoldKey } from '../../domain/negotiation.js';
import type { AgreementService } from '../agreements/agreement-service.js';
import type { NegotiationService } from '../negotiation/negotiation-service.js';
import type { PlanningService } from './planning-service.js';

/**
 * Bookings the scheduler moves are stored again by their owners: an agreement's allocation
 * under the agreement's lock, a hold's in its negotiation under the negotiation's lock.
 * `onError` hears about a booking whose new allocation could not be stored.
 */
export function persistPlanChanges(
  plan: PlanningService,
  agreements: AgreementService,
  negotiations: NegotiationService,
  onError?: (key: string, error: unknown) => void,
): void {
  plan.persistWith((key) => {
    const offerId = offerIdOfHoldKey(key);
    return offerId !== undefined ? negotiations.recordHoldAllocation(offerId) : agreements.recordAllocation(key);
  }, onError);
}
