import { durationMs } from './duration.js';
import type { Money } from './negotiation.js';
import type { Compensation } from './terms.js';

/**
 * Penalties and rewards from a guarantee term's business value list (Hovestadt 2006, section
 * 2.3.2.3, figure 2.7; TERMS.md "Guarantee terms"): an amount per assessment interval, the
 * interval being a time interval ("for every 30 minutes that the job is delayed") or a
 * count of violations, and an optional cap on the total.
 */

/** How far an objective was missed (penalty) or beaten (reward), in the two units an assessment interval can count. */
export interface Measure {
  /**
   * Time late, unavailable or beyond the objective (penalty); time to spare (reward); 0 when the KPI has no such time.
   */
  durationMs: number;
  /** Violations counted (penalty); 1 for a fulfilled term (reward). */
  count: number;
  /** The KPI measures no time (a reward with a time interval is then paid once). */
  timeless?: boolean;
}

export interface ChargeLine {
  /** The assessment interval as agreed: `PT30M`, or `3 violations`. */
  per: string;
  /** Assessment intervals charged. */
  units: number;
  /** Amount per interval (sla:Amount). */
  rate: number;
  /** units x rate, at most the cap. */
  amount: number;
  capped: boolean;
  /** wsag:ValueUnit, e.g. EUR ('' when none was given). */
  currency: string;
}

/**
 * What is due: the total in the first line's currency, and every line. Lines in another currency are listed but not
 * added in.
 */
export interface Charge extends Money {
  lines: ChargeLine[];
}

/**
 * A penalty: every started assessment interval is charged, at least one for a violation
 * ("per started hour late": 61 minutes late with PT1H is 2 intervals), or every started group
 * of `count` violations; capped per penalty.
 */
export function assessPenalty(penalties: readonly Compensation[], measure: Measure): Charge | undefined {
  return charge(
    penalties.map((p) =>
      line(p, (every) =>
        'ms' in every
          ? Math.max(1, Math.ceil(measure.durationMs / every.ms))
          : Math.ceil(Math.max(1, measure.count) / every.count),
      ),
    ),
  );
}

/**
 * A reward for a fulfilled term: once per fulfilment with a count interval; with a time
 * interval, for every whole interval the objective was beaten by (completing 65 minutes
 * before the deadline with PT30M earns 2), or once when the KPI measures no time.
 */
export function assessReward(rewards: readonly Compensation[], measure: Measure): Charge | undefined {
  return charge(
    rewards.map((r) =>
      line(r, (every) =>
        'ms' in every
          ? measure.timeless
            ? 1
            : Math.floor(Math.max(0, measure.durationMs) / every.ms)
          : Math.ceil(Math.max(1, measure.count) / every.count),
      ),
    ),
  );
}

type Every = { ms: number } | { count: number };

function line(c: Compensation, unitsFor: (every: Every) => number): ChargeLine {
  let every: Every;
  let per: string;
  if ('timeInterval' in c.assessmentInterval) {
    const ms = durationMs(c.assessmentInterval.timeInterval);
    if (ms <= 0)
      throw new RangeError(`assessment interval ${c.assessmentInterval.timeInterval} must be longer than zero`);
    every = { ms };
    per = c.assessmentInterval.timeInterval;
  } else {
    const count = Math.max(1, Math.floor(c.assessmentInterval.count));
    every = { count };
    per = count === 1 ? '1 violation' : `${count} violations`;
  }
  const units = unitsFor(every);
  const rate = c.amount ?? 0;
  const uncapped = round(units * rate);
  const capped = c.cap !== undefined && uncapped > c.cap;
  return { per, units, rate, amount: capped ? (c.cap as number) : uncapped, capped, currency: c.valueUnit ?? '' };
}

function charge(lines: ChargeLine[]): Charge | undefined {
  const first = lines[0];
  if (!first) return undefined;
  const amount = round(lines.filter((l) => l.currency === first.currency).reduce((sum, l) => sum + l.amount, 0));
  return { amount, currency: first.currency, lines };
}

function round(amount: number): number {
  return Math.round(amount * 100) / 100;
}

/** `100.00 EUR` (`100.00` without a unit). */
export function formatCharge(charge: Money): string {
  return `${charge.amount.toFixed(2)}${charge.currency ? ` ${charge.currency}` : ''}`;
}
