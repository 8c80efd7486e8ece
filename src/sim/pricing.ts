import { demandFactor, usagePrice, type PriceCurve, type PriceList } from '../domain/pricing.js';
import { firmLoad } from '../scheduler/load.js';
import type { ClusterDescription, Instant, JobSpec } from '../scheduler/model.js';
import { isBestEffort, PlanningManager } from '../scheduler/planning-manager.js';
import { chosenByHash, inArrivalOrder } from './selection.js';
import { jobSpecOf } from './job-spec.js';
import type { Workload, WorkloadJob } from './workload.js';

/**
 * Fixed against demand prices on one workload (docs/pricing.md, "Fixed and demand
 * prices in the simulator"). The jobs arrive at the planning scheduler in order. A share of
 * the customers (`flexible`, chosen by a hash of the job id, so the same ones in both runs)
 * ask for start slots first (the Advisory answer: `slots` of them from the requested start)
 * and take the cheapest that keeps their deadline, the earliest of equal prices; the others
 * take the earliest booking the scheduler gives them, whatever it costs. With fixed prices
 * every slot costs the same, so flexible customers take the earliest too. Revenue is what
 * the accepted SLA jobs pay as quoted (best-effort and background work at the list price);
 * jobs run as planned: no failures, no early finishes.
 */
export interface PricingRun {
  pricing: 'fixed' | 'demand';
  accepted: number;
  refused: number;
  /** Flexible customers who took a later slot than the earliest because it was cheaper. */
  movedForPrice: number;
  revenue: number;
  /** Booked node-time over the cluster's node-time from the first arrival to the last booking's end. */
  utilisation: number;
  /** Mean price curve factor the accepted SLA jobs paid. */
  meanFactor: number;
  /** The highest load of any hour (share of the SLA capacity booked). */
  peakHourLoad: number;
}

export interface PricingComparison {
  flexible: number;
  jobs: number;
  fixed: PricingRun;
  demand: PricingRun;
}

export function comparePricing(
  workload: Workload,
  cluster: ClusterDescription,
  prices: PriceList,
  options: { flexible: number; slots: number },
): PricingComparison {
  const flat: PriceCurve = [
    { load: 0, factor: 1 },
    { load: 1, factor: 1 },
  ];
  return {
    flexible: options.flexible,
    jobs: workload.jobs.length,
    fixed: runPricing(workload, cluster, { ...prices, curve: flat }, 'fixed', options),
    demand: runPricing(workload, cluster, prices, 'demand', options),
  };
}

function runPricing(
  workload: Workload,
  cluster: ClusterDescription,
  prices: PriceList,
  pricing: PricingRun['pricing'],
  options: { flexible: number; slots: number },
): PricingRun {
  const pm = new PlanningManager(cluster);
  const ms = (seconds: number) => workload.start + Math.round(seconds * 1000);
  const quoteFactor = (start: Instant, end: Instant, excluding: string[]) =>
    demandFactor(prices.curve, firmLoad(cluster, pm.mm, start, end, excluding));
  let accepted = 0;
  let refused = 0;
  let movedForPrice = 0;
  let revenue = 0;
  let factorSum = 0;
  let slaAccepted = 0;
  let busy = 0;
  let last = workload.start;
  for (const input of inArrivalOrder(workload.jobs)) {
    const t = ms(input.arrival);
    const asked = jobSpecOf(input, ms);
    const sla = !isBestEffort(asked);
    let spec = asked;
    if (sla && isFlexible(input, options.flexible)) {
      const chosen = cheapestSlot(pm, asked, t, options.slots, quoteFactor);
      if (chosen) {
        spec = chosen.spec;
        if (chosen.later) movedForPrice++;
      }
    }
    const decision = pm.admit(spec, t);
    if (!decision.accepted) {
      refused++;
      continue;
    }
    accepted++;
    const segments = decision.job.segments;
    const first = segments[0]?.start ?? t;
    const end = segments.at(-1)?.end ?? t;
    const factor = sla ? quoteFactor(first, end, [spec.id]) : 1;
    const nodeSeconds = segments.reduce((sum, s) => sum + (s.nodes.length * (s.end - s.start)) / 1000, 0);
    revenue += usagePrice({ guaranteeLevel: input.level }, input.nodes, (end - first) / 1000, prices, factor).amount;
    if (sla) {
      factorSum += factor;
      slaAccepted++;
    }
    busy += nodeSeconds;
    last = Math.max(last, end);
  }
  const capacity = (cluster.nodes.length * (last - workload.start)) / 1000;
  return {
    pricing,
    accepted,
    refused,
    movedForPrice,
    revenue: Math.round(revenue * 100) / 100,
    utilisation: capacity > 0 ? busy / capacity : 0,
    meanFactor: slaAccepted ? factorSum / slaAccepted : 1,
    peakHourLoad: peakHourLoad(cluster, pm, workload.start, last),
  };
}

/**
 * The customer's choice among the Advisory slots: the cheapest that keeps its deadline; `later` when it is not the
 * earliest.
 */
function cheapestSlot(
  pm: PlanningManager,
  spec: JobSpec,
  t: Instant,
  count: number,
  factorAt: (start: Instant, end: Instant, excluding: string[]) => number,
): { spec: JobSpec; later: boolean } | undefined {
  let best: { spec: JobSpec; factor: number; index: number } | undefined;
  pm.slots(spec, t, count).forEach((slot, index) => {
    if (spec.deadline !== undefined && slot.end > spec.deadline) return;
    const moved: JobSpec = spec.window
      ? { ...spec, window: { start: slot.start, end: slot.start + (spec.window.end - spec.window.start) } }
      : { ...spec, earliestStart: slot.start };
    const factor = factorAt(slot.start, slot.end, []);
    if (!best || factor < best.factor - 1e-9) best = { spec: moved, factor, index };
  });
  const chosen = best as { spec: JobSpec; factor: number; index: number } | undefined;
  return chosen && { spec: chosen.spec, later: chosen.index > 0 };
}

/** Whether this job's customer is flexible (the same ones in both runs). */
function isFlexible(input: WorkloadJob, share: number): boolean {
  return chosenByHash(input.id, share, 0);
}

function peakHourLoad(cluster: ClusterDescription, pm: PlanningManager, from: Instant, to: Instant): number {
  let peak = 0;
  for (let t = from; t < to; t += 3600_000) peak = Math.max(peak, firmLoad(cluster, pm.mm, t, t + 3600_000));
  return peak;
}

export function formatPricingComparison(c: PricingComparison, currency: string): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const rows: Array<[string, (r: PricingRun) => string]> = [
    ['jobs accepted', (r) => String(r.accepted)],
    ['jobs refused', (r) => String(r.refused)],
    ['flexible customers who moved for a lower price', (r) => String(r.movedForPrice)],
    ['revenue', (r) => `${r.revenue.toFixed(2)} ${currency}`],
    ['utilisation', (r) => pct(r.utilisation)],
    ['mean price factor of SLA jobs', (r) => r.meanFactor.toFixed(3)],
    ['busiest hour (share of capacity booked)', (r) => pct(r.peakHourLoad)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `Fixed against demand prices (docs/pricing.md): ${c.jobs} jobs, ${pct(c.flexible)} of customers flexible`,
    '',
    `${''.padEnd(width)}  ${'fixed'.padStart(16)}  ${'demand'.padStart(16)}`,
    ...rows.map(
      ([label, value]) => `${label.padEnd(width)}  ${value(c.fixed).padStart(16)}  ${value(c.demand).padStart(16)}`,
    ),
  ];
}
