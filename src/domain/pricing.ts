import type { Allocation } from './allocation.js';
import type { Money } from './negotiation.js';
import type { GuaranteeLevel, ServiceRequest } from './terms.js';

/**
 * Prices (TERMS.md "Prices", seed 002 section 3.1): binding requests pay nodes x hours x
 * the site's rate for the guarantee level; a preparatory hold costs a small fraction of
 * that, charged only if it is not confirmed in time; non-binding requests are free.
 */
export interface PriceList {
  currency: string;
  /** Price of one node for one hour at guarantee level Legacy. */
  nodeHour: number;
  /** Preparatory fee as a fraction of the regular price (0.05 = 5 %). */
  preparatoryFeeRate: number;
}

/** Stronger guarantees cost more: the provider keeps spare or remote capacity for them. */
export const levelFactor: Record<GuaranteeLevel, number> = {
  Background: 0.5,
  Legacy: 1,
  Standard: 1.25,
  Enhanced: 1.5,
  Full: 2,
};

export function regularPrice(request: ServiceRequest, allocation: Allocation | undefined, prices: PriceList): Money {
  const seconds = allocation ? (allocation.end.getTime() - allocation.start.getTime()) / 1000 : (request.runtimeSeconds ?? 0);
  return usagePrice(request, allocation?.nodes ?? request.nodeCount, seconds, prices);
}

/** What `nodes` nodes for `seconds` cost at the request's guarantee level (what an agreement is charged for its actual usage). */
export function usagePrice(request: Pick<ServiceRequest, 'guaranteeLevel'>, nodes: number, seconds: number, prices: PriceList): Money {
  return money((nodes * Math.max(0, seconds) / 3600) * prices.nodeHour * levelFactor[request.guaranteeLevel], prices.currency);
}

export function preparatoryFee(price: Money, prices: PriceList): Money {
  return money(price.amount * prices.preparatoryFeeRate, price.currency);
}

/**
 * The fee charged when a hold ends unconfirmed: all of it at expiry; pro rata for the time
 * it was held when the initiator releases it early, so releasing early always pays.
 */
export function feeCharged(fee: Money, heldFrom: Date, expiresAt: Date, endedAt: Date): Money {
  const lifetime = expiresAt.getTime() - heldFrom.getTime();
  const share = lifetime <= 0 ? 1 : Math.min(1, Math.max(0, (endedAt.getTime() - heldFrom.getTime()) / lifetime));
  return money(fee.amount * share, fee.currency);
}

/** Rounded to cents. */
function money(amount: number, currency: string): Money {
  return { amount: Math.round(amount * 100) / 100, currency };
}
