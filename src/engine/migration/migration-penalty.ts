import { assessPenalty } from '../../domain/compensation.js';
import type { Money } from '../../domain/negotiation.js';
import type { GuaranteeTerm } from '../../domain/terms.js';
import type { MigrationJob } from './migration-jobs.js';

/**
 * The penalty a job in P would cost if it stays (Hovestadt 2006, section 3.6.7: a migration pays
 * when the cheapest offer costs less than "the penalty fee that the provider would have to
 * pay in case of SLA-violation"). Each guarantee term whose objective the lost time breaks
 * (completion by a deadline, a start by a time, nodes through a reservation window) is
 * assessed with the business value list (src/domain/compensation.ts), for the violation the
 * problem leads to:
 *  - CompletedBy / StartBy: late by the estimated time the job would finish (start) locally:
 *    after the usual repair time of a node (the problem horizon), plus what is left of it;
 *  - NodesAvailable: the reservation's whole window is lost.
 * Objectives a move does not change (checkpoint intervals, custom KPIs) are not counted.
 * The guarantee level's liability rules excuse Standard and Enhanced only if their agreed
 * mechanisms were applied (TERMS.md), and trying the Grid is one of them, so the penalty
 * counts at every level but Background, which promises no time.
 */
export function penaltyAtStake(job: MigrationJob, now: Date, problemHorizonSeconds: number, currency: string): Money {
  const zero = { amount: 0, currency };
  if (job.request.guaranteeLevel === 'Background') return zero;
  const localResume = now.getTime() + problemHorizonSeconds * 1000;
  let total = 0;
  let unit: string | undefined;
  for (const term of job.guaranteeTerms) {
    const lateMs = lateness(term, job, localResume);
    if (lateMs === undefined) continue;
    const charge = assessPenalty(term.penalties, { durationMs: lateMs, count: 1 });
    if (!charge) continue;
    const termUnit = charge.currency || currency;
    unit ??= termUnit;
    if (termUnit === unit) total += charge.amount;
  }
  return { amount: Math.round(total * 100) / 100, currency: unit ?? currency };
}

/** How far the objective would be missed, ms; undefined for objectives a move does not affect. */
function lateness(term: GuaranteeTerm, job: MigrationJob, localResume: number): number | undefined {
  const target = term.target;
  switch (target.kind) {
    case 'CompletedBy':
      return Math.max(0, localResume + job.resumeSeconds * 1000 - target.at.getTime());
    case 'StartBy':
      return Math.max(0, localResume - target.at.getTime());
    case 'NodesAvailable': {
      const window = job.request.window;
      return window ? window.end.getTime() - window.start.getTime() : 0;
    }
    default:
      return undefined;
  }
}

/**
 * Whether `price` is below `penalty`: a price in another currency never is (it cannot be weighed); a penalty without a
 * unit takes the price's.
 */
export function cheaperThan(price: Money, penalty: Money): boolean {
  if (penalty.currency && price.currency && penalty.currency !== price.currency) return false;
  return price.amount < penalty.amount;
}
