import type { Allocation } from './allocation.js';
import { describeMs, durationMs } from './duration.js';
import { InvalidTerms, UnsupportedTerm } from './errors.js';
import type { GuaranteeTerm, KpiTarget, ServiceRequest } from './terms.js';
import { isoTime } from './time.js';

/**
 * The admission rule (Hovestadt 2006, section 3.1: an SLA is accepted only if it can be
 * fulfilled): every guarantee term's objective must hold for the booking that would be
 * made. Two parts, both pure:
 *  - `requestServingObjectives`: the request the plan must serve so that the objectives can
 *    hold at all (an sla:CompletedBy objective is a deadline the scheduler plans for), or
 *    a refusal for objectives no booking of this request could keep;
 *  - `unmetObjective`: given the booking the scheduler found, the first objective it breaks
 *    and what the plan delivers instead.
 */

/** The KPIs this server measures (src/domain/guarantee-evaluation.ts judges each of them). */
export const measuredObjectives = [
  'sla:CompletedBy',
  'sla:StartBy',
  'sla:NodesAvailable',
  'sla:MaxCheckpointInterval',
] as const;

export function requestServingObjectives(request: ServiceRequest, terms: readonly GuaranteeTerm[]): ServiceRequest {
  let deadline = request.deadline;
  for (const term of terms) {
    const target = term.target;
    if (target.kind === 'Custom') {
      throw new UnsupportedTerm(
        `guarantee term "${term.name}": KPI "${target.kpiName || '(unnamed)'}" has no objective this ` +
          `server measures; ` +
          `its wsag:CustomServiceLevel must hold one of ${measuredObjectives.join(', ')}`,
      );
    }
    if (target.kind === 'MaxCheckpointInterval') checkDuration(term.name, 'sla:MaxCheckpointInterval', target.interval);
    if (term.submittedBefore !== undefined) checkDuration(term.name, 'sla:SubmittedBefore', term.submittedBefore);
    if (target.kind !== 'CompletedBy' && target.kind !== 'StartBy') continue;
    if (request.guaranteeLevel === 'Background') {
      throw new InvalidTerms(
        `guarantee term "${term.name}": sla:${target.kind} promises a time, and a Background job has no time ` +
          `promise (it runs in the gaps of the schedule)`,
      );
    }
    if (target.kind === 'CompletedBy' && !request.window) {
      if (request.runtimeSeconds === undefined) {
        throw new InvalidTerms(
          `guarantee term "${term.name}": sla:CompletedBy needs sla:RuntimeEstimate: completion cannot be ` +
            `promised for a job of unknown length`,
        );
      }
      // The scheduler plans for the earliest completion promised, whatever sla:Deadline says.
      if (!deadline || target.at.getTime() < deadline.getTime()) deadline = target.at;
    }
  }
  for (const term of terms) {
    if (term.target.kind === 'StartBy' && !request.window && !deadline) {
      throw new InvalidTerms(
        `guarantee term "${term.name}": sla:StartBy needs a job the plan holds to its times: a reservation ` +
          `window, or a deadline (sla:Deadline or an sla:CompletedBy objective); a best-effort job may move later`,
      );
    }
  }
  return deadline === request.deadline ? request : { ...request, deadline };
}

/**
 * The first objective `booking` breaks, saying what the plan delivers; undefined when every
 * one holds. A term whose qualifying condition does not hold for an offer made at
 * `submittedAt` would never be in force: it is refused too, rather than signed and void.
 */
export function unmetObjective(
  terms: readonly GuaranteeTerm[],
  request: ServiceRequest,
  booking: Allocation,
  submittedAt: Date,
): string | undefined {
  for (const term of terms) {
    const broken = unqualified(term, booking, submittedAt) ?? brokenBy(term.target, request, booking);
    if (broken) return `guarantee term "${term.name}" cannot be kept: ${broken}`;
  }
  return undefined;
}

/**
 * sla:SubmittedBefore: the offer must come at least that long before the job starts (a reservation's window, else the
 * booking).
 */
function unqualified(term: GuaranteeTerm, booking: Allocation, submittedAt: Date): string | undefined {
  if (term.submittedBefore === undefined) return undefined;
  const starts = promisedSpan(booking).start;
  const ahead = starts.getTime() - submittedAt.getTime();
  return ahead < durationMs(term.submittedBefore)
    ? `its wsag:QualifyingCondition sla:SubmittedBefore ${term.submittedBefore} does not hold: the job starts ` +
        `at ${isoTime(starts)}, ${describeMs(Math.max(0, ahead))} after this offer; submit earlier, or leave ` +
        `the guarantee term out`
    : undefined;
}

/**
 * When the booking's promise starts and ends: a window's own times (its booking adds the nodes' preparation and
 * release), else the booking's.
 */
function promisedSpan(booking: Allocation): { start: Date; end: Date } {
  return booking.promised ?? booking;
}

function brokenBy(target: KpiTarget, request: ServiceRequest, booking: Allocation): string | undefined {
  const span = promisedSpan(booking);
  switch (target.kind) {
    case 'CompletedBy':
      return span.end.getTime() > target.at.getTime()
        ? `sla:CompletedBy ${isoTime(target.at)}, but the plan completes the job at ${isoTime(span.end)} at ` +
            `the earliest`
        : undefined;
    case 'StartBy':
      return span.start.getTime() > target.at.getTime()
        ? `sla:StartBy ${isoTime(target.at)}, but the plan starts the job at ${isoTime(span.start)} at the earliest`
        : undefined;
    case 'NodesAvailable':
      return target.nodes > booking.nodes
        ? `sla:NodesAvailable ${target.nodes}, but ${booking.nodes} node(s) are booked (the offer asks for ` +
            `${request.nodeCount}); promise at most ${booking.nodes}`
        : undefined;
    case 'MaxCheckpointInterval': {
      const gap = computeBetweenSavePoints(request, booking);
      const limit = durationMs(target.interval);
      return gap !== undefined && gap > limit
        ? `sla:MaxCheckpointInterval ${target.interval}, but the plan computes ${describeMs(gap)} between ` +
            `checkpoints (${booking.checkpoints?.count ?? 0} checkpoint(s) planned); ask for ` +
            `sla:CheckpointFrequency or a guarantee level with checkpoints`
        : undefined;
    }
    case 'Custom':
      return `KPI "${target.kpiName}" is not measured`;
  }
}

/**
 * Computing time between save points in the booked plan: the checkpoint interval, or the whole run without checkpoints.
 */
function computeBetweenSavePoints(request: ServiceRequest, booking: Allocation): number | undefined {
  const plan = booking.checkpoints;
  if (plan && plan.count > 0) return plan.intervalSeconds * 1000;
  if (request.runtimeSeconds !== undefined) return request.runtimeSeconds * 1000;
  return request.window ? request.window.end.getTime() - request.window.start.getTime() : undefined;
}

function checkDuration(term: string, element: string, duration: string): void {
  try {
    if (durationMs(duration) <= 0) throw new RangeError(`duration "${duration}" is not longer than zero`);
  } catch (error) {
    throw new InvalidTerms(`guarantee term "${term}": ${element} ${(error as Error).message}`);
  }
}
