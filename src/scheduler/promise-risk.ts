import type { JobSpec } from './model.js';

/**
 * The chance that a deadline no fault-tolerance mechanism protects (Legacy) is broken: any
 * failure of one of its nodes during its run loses the run, and a restart from the beginning
 * rarely finds as many nodes free at once in time. With failures at `failuresPerNodeDay` on
 * each node, P = 1 - exp(-rate x nodes x runtime in days).
 */
export function unprotectedBreakRisk(nodes: number, runtimeSeconds: number, failuresPerNodeDay: number): number {
  return 1 - Math.exp((-failuresPerNodeDay * nodes * runtimeSeconds) / 86_400);
}

/**
 * Why a new Legacy deadline job is refused for its risk ("If the a priori analysis of the terms
 * of a requested guarantee results in a high risk of violation, the requested guarantee should
 * be denied", Hovestadt 2006, section 2.3.1), or undefined when the risk is within `limit` (the
 * site's promiseRiskLimit) or the job is not such a promise. The rate is asked for only then.
 */
export function promiseRiskRefusal(spec: JobSpec, rateOf: () => number, limit: number): string | undefined {
  if (spec.level !== 'Legacy' || spec.kind !== 'Deadline' || limit >= 1) return undefined;
  const failuresPerNodeDay = rateOf();
  const risk = unprotectedBreakRisk(spec.nodes, spec.runtimeSeconds, failuresPerNodeDay);
  if (!(risk > limit)) return undefined;
  const percent = (p: number) => `${Math.round(p * 100)} %`;
  return (
    `a Legacy deadline has no fault tolerance: a failure of any of its ${spec.nodes} node(s) during its ` +
    `${formatHours(spec.runtimeSeconds)} run breaks it; at the ${failuresPerNodeDay.toFixed(3)} failures per node ` +
    `and day this site observes the risk is ${percent(risk)}, above the ${percent(limit)} it accepts ` +
    '(promiseRiskLimit): ask for Standard or a higher level (checkpointed), or fewer nodes or a shorter run'
  );
}

function formatHours(seconds: number): string {
  const hours = seconds / 3600;
  return hours >= 10 ? `${Math.round(hours)} h` : `${Number(hours.toFixed(1))} h`;
}
