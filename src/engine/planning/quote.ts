import type { Allocation } from '../../domain/allocation.js';
import type { Money } from '../../domain/negotiation.js';
import type { Caller } from '../../domain/identity.js';
import { demandFactor, levelFactor, regularPrice, type PriceList } from '../../domain/pricing.js';
import type { ServiceRequest } from '../../domain/terms.js';
import { jobKindOf } from '../../scheduler/job-spec.js';
import type { PlanningService } from './planning-service.js';

/**
 * The price the server quotes for `request` on `slot` (docs/pricing.md): the list price
 * times the price curve's factor at the plan's load over the slot's period, the slot's own
 * booking and those under `excluding` left out (a hold being priced, the agreement a
 * renegotiation replaces). Best-effort and background work takes no time promise and is
 * not priced by the load: it pays its bid (sla:Bid) per node-hour, or the list price.
 */
export function quote(
  plan: Pick<PlanningService, 'load'>,
  prices: PriceList,
  request: ServiceRequest,
  slot: Allocation | undefined,
  excluding: readonly string[] = [],
): Quote {
  const kind = jobKindOf(request);
  const listRate = prices.nodeHour * levelFactor[request.guaranteeLevel];
  const factor =
    kind === 'BestEffort' || kind === 'Background'
      ? request.bid !== undefined && listRate > 0
        ? request.bid / listRate
        : 1
      : !slot || !prices.curve
        ? 1
        : demandFactor(prices.curve, plan.load((slot.promised ?? slot).start, (slot.promised ?? slot).end, excluding));
  return { price: regularPrice(request, slot, prices, factor), factor };
}

/** Who bids for spare capacity (docs/pricing.md): the charge account the request names, else the caller. */
export function bidderOf(request: ServiceRequest, caller: Caller): string {
  return request.chargeAccount ? `account ${request.chargeAccount.account}` : `party ${caller.identity}`;
}

export interface Quote {
  price: Money;
  /** The price curve's factor in the price (1: the list price). */
  factor: number;
}
