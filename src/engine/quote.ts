import type { Allocation } from '../domain/allocation.js';
import type { Money } from '../domain/negotiation.js';
import { demandFactor, regularPrice, type PriceList } from '../domain/pricing.js';
import type { ServiceRequest } from '../domain/terms.js';
import { jobKindOf } from '../scheduler/job-spec.js';
import type { PlanningService } from './planning-service.js';

/**
 * The price the server quotes for `request` on `slot` (docs/pricing.md): the list price
 * times the price curve's factor at the plan's load over the slot's period, the slot's own
 * booking and those under `excluding` left out (a hold being priced, the agreement a
 * renegotiation replaces). Best-effort and background work takes no time promise and is
 * not priced by the load.
 */
export function quote(plan: Pick<PlanningService, 'load'>, prices: PriceList, request: ServiceRequest, slot: Allocation | undefined, excluding: readonly string[] = []): Quote {
  const kind = jobKindOf(request);
  const factor = !slot || !prices.curve || kind === 'BestEffort' || kind === 'Background' ? 1 : demandFactor(prices.curve, plan.load(slot.start, slot.end, excluding));
  return { price: regularPrice(request, slot, prices, factor), factor };
}

export interface Quote {
  price: Money;
  /** The price curve's factor in the price (1: the list price). */
  factor: number;
}
