import type { Allocation } from './allocation.js';
import type { Money } from './negotiation.js';
import type { GuaranteeLevel, ServiceRequest } from './terms.js';

/**
 * Prices (TERMS.md "Prices", Hovestadt 2006, section 3.1): binding requests pay nodes x hours x
 * the site's rate for the guarantee level; a preparatory hold costs a small fraction of
 * that, charged only if it is not confirmed in time; non-binding requests are free.
 */
export interface PriceList {
  currency: string;
  /** Price of one node for one hour at guarantee level Legacy. */
  nodeHour: number;
  /** Preparatory fee as a fraction of the regular price (0.05 = 5 %). */
  preparatoryFeeRate: number;
  /**
   * Demand pricing (Tycoon, Sandholm 2007): the price factor by the plan's load in the slot's period; absent, prices
   * ignore the load.
   */
  curve?: PriceCurve;
}

/**
 * A price curve: points (load, factor) with loads rising from 0 to 1; between two points
 * the factor is interpolated linearly. Load is the share of the SLA capacity (nodes that
 * are not buffer nodes) the plan has booked over the slot's period, before the slot itself.
 */
export type PriceCurve = ReadonlyArray<{ load: number; factor: number }>;

/**
 * The published default: list price up to half the capacity booked, then dearer up to twice the list price when full.
 */
export const defaultPriceCurve: PriceCurve = [
  { load: 0, factor: 1 },
  { load: 0.5, factor: 1 },
  { load: 0.8, factor: 1.5 },
  { load: 1, factor: 2 },
];

/** The curve's factor at `load` (clamped to [0, 1]). */
export function demandFactor(curve: PriceCurve | undefined, load: number): number {
  if (!curve || curve.length === 0) return 1;
  const x = Math.min(1, Math.max(0, load));
  let previous = curve[0] as { load: number; factor: number };
  if (x <= previous.load) return previous.factor;
  for (const point of curve.slice(1)) {
    if (x <= point.load)
      return previous.factor + ((point.factor - previous.factor) * (x - previous.load)) / (point.load - previous.load);
    previous = point;
  }
  return previous.factor;
}

/** A curve as written in WSAG_PRICE_CURVE (`LOAD:FACTOR,...`), or the reason it is not one. */
export function parsePriceCurve(text: string): PriceCurve | { error: string } {
  const points = text
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [load, factor, extra] = pair.split(':').map((v) => v.trim());
      return {
        pair,
        load: Number(load),
        factor: Number(factor),
        bad: extra !== undefined || load === '' || factor === '' || factor === undefined,
      };
    });
  if (points.length < 2) return { error: 'give at least two points LOAD:FACTOR, such as 0:1,0.5:1,1:2' };
  for (const [i, p] of points.entries()) {
    if (p.bad || !Number.isFinite(p.load) || !Number.isFinite(p.factor))
      return { error: `"${p.pair}" is not LOAD:FACTOR with two numbers` };
    if (p.load < 0 || p.load > 1) return { error: `load ${p.load} in "${p.pair}" is outside 0 to 1` };
    if (p.factor <= 0 || p.factor > 1000)
      return { error: `factor ${p.factor} in "${p.pair}" must be above 0 and at most 1000` };
    if (i > 0 && p.load <= (points[i - 1] as { load: number }).load)
      return { error: `loads must rise: ${p.load} in "${p.pair}" follows ${(points[i - 1] as { load: number }).load}` };
  }
  if ((points[0] as { load: number }).load !== 0 || (points.at(-1) as { load: number }).load !== 1)
    return { error: 'the curve must start at load 0 and end at load 1' };
  return points.map(({ load, factor }) => ({ load, factor }));
}

/** Stronger guarantees cost more: the provider keeps spare or remote capacity for them. */
export const levelFactor: Record<GuaranteeLevel, number> = {
  Background: 0.5,
  Legacy: 1,
  Standard: 1.25,
  Enhanced: 1.5,
  Full: 2,
};

/**
 * The price of the request on its allocation; `factor` is the demand factor of the slot's period (1: the list price).
 */
export function regularPrice(
  request: ServiceRequest,
  allocation: Allocation | undefined,
  prices: PriceList,
  factor = 1,
): Money {
  const span = allocation?.promised ?? allocation;
  const seconds = span ? (span.end.getTime() - span.start.getTime()) / 1000 : (request.runtimeSeconds ?? 0);
  return usagePrice(request, allocation?.nodes ?? request.nodeCount, seconds, prices, factor);
}

/**
 * What `nodes` nodes for `seconds` cost at the request's guarantee level and demand factor (what an agreement is
 * charged for its actual usage).
 */
export function usagePrice(
  request: Pick<ServiceRequest, 'guaranteeLevel'>,
  nodes: number,
  seconds: number,
  prices: PriceList,
  factor = 1,
): Money {
  return money(
    ((nodes * Math.max(0, seconds)) / 3600) * prices.nodeHour * levelFactor[request.guaranteeLevel] * factor,
    prices.currency,
  );
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
