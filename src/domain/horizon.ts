import { CannotSatisfy } from './errors.js';
import type { GuaranteeTerm, ServiceRequest } from './terms.js';
import { isoTime } from './time.js';

/**
 * The planning horizon: the plan reaches this far ahead and no further. A time
 * beyond it is refused naming the element that holds it, in every form a window can be
 * written (an EndTime, a StartTime plus Duration, a Deadline, an objective), so no request
 * can book capacity decades ahead or push the scheduler's structures past what it plans.
 * Pure: the caller passes `now` and the horizon's length.
 */
export function checkHorizon(
  request: ServiceRequest,
  terms: readonly GuaranteeTerm[],
  now: Date,
  horizonSeconds: number,
): void {
  const end = now.getTime() + horizonSeconds * 1000;
  const beyond = (element: string, at: Date) => {
    if (at.getTime() > end) {
      throw new CannotSatisfy(
        `${element} ${isoTime(at)} is beyond the planning horizon: the plan reaches ${isoTime(new Date(end))} ` +
          `(${describeDays(horizonSeconds)} ahead); ask again nearer the time`,
      );
    }
  };
  if (request.window) {
    beyond('arp:StartTime', request.window.start);
    beyond("the reservation window's end (arp:EndTime, or arp:StartTime plus arp:Duration)", request.window.end);
  }
  if (request.earliestStart) beyond('sla:EarliestStart', request.earliestStart);
  if (request.deadline) beyond('sla:Deadline', request.deadline);
  for (const term of terms) {
    if (term.target.kind === 'CompletedBy' || term.target.kind === 'StartBy')
      beyond(`guarantee term "${term.name}": sla:${term.target.kind}`, term.target.at);
  }
  if (!request.window && request.runtimeSeconds !== undefined) {
    const from = Math.max(now.getTime(), request.earliestStart?.getTime() ?? 0);
    beyond(
      `the end of a job of sla:RuntimeEstimate ${request.runtimeSeconds} s, at the earliest`,
      new Date(from + request.runtimeSeconds * 1000),
    );
  }
}

function describeDays(seconds: number): string {
  const days = seconds / 86_400;
  return Number.isInteger(days) ? `${days} days` : `${seconds} s`;
}
