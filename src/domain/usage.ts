import type { Agreement } from './agreement.js';
import type { Money } from './negotiation.js';
import { usagePrice, type PriceList } from './pricing.js';

/** What a post-runtime report says of a job's run (src/domain/post-runtime-report.ts, `happened`). */
export interface RunFacts {
  outcome?: string;
  started?: string;
  completed?: string;
  failure?: { at: string };
}

/**
 * When the job used its nodes: from its start to its completion, failure or the agreement's end; undefined if it never
 * started.
 */
export function usedPeriod(agreement: Agreement, run: RunFacts | undefined): { start: Date; end: Date } | undefined {
  if (!run?.started) return undefined;
  const end = run.completed ?? run.failure?.at ?? agreement.updatedAt.toISOString();
  return { start: new Date(run.started), end: new Date(end) };
}

/**
 * What an ended agreement is charged: Complete, its actual usage (a reservation
 * its window: the capacity was kept for it whether used or not); Terminated, what it used
 * until then; otherwise nothing. The hold it was settled from caps it at the quoted price.
 */
export function usageCharge(agreement: Agreement, run: RunFacts | undefined, prices: PriceList): Money | undefined {
  if (agreement.state !== 'Complete' && agreement.state !== 'Terminated') return undefined;
  if (agreement.request.window && agreement.state === 'Complete') return agreement.price;
  const period = usedPeriod(agreement, run);
  if (!period) return undefined;
  const nodes = agreement.allocation?.nodes ?? agreement.request.nodeCount;
  return usagePrice(
    agreement.request,
    nodes,
    (period.end.getTime() - period.start.getTime()) / 1000,
    prices,
    agreement.priceFactor ?? 1,
  );
}

/**
 * An OGF Usage Record (GFD.98) of one agreement's job, as the domain sees it; src/xml/usage-record-writer.ts writes it.
 */
export interface UsageRecord {
  recordId: string;
  createdAt: Date;
  agreementId: string;
  /** The agreement's address at this provider. */
  globalJobId: string;
  /** The initiator's identity (certificate subject). */
  user: string;
  jobName?: string;
  charge?: Money;
  /** GFD.98's minimum set: completed, failed, aborted (terminated). */
  status: 'completed' | 'failed' | 'aborted';
  guaranteeLevel: string;
  wallSeconds?: number;
  nodes: number;
  processors?: number;
  start?: Date;
  end?: Date;
  machine: string;
  /** The VO the job was charged to (GFD.98 ProjectName, as SGAS uses it). */
  project?: string;
}

/** The usage record of an ended agreement (Complete or Terminated); undefined for other states. */
export function usageRecordOf(
  agreement: Agreement,
  run: RunFacts | undefined,
  prices: PriceList,
  site: { machine: string; baseUrl: string },
  now: Date,
): UsageRecord | undefined {
  if (agreement.state !== 'Complete' && agreement.state !== 'Terminated') return undefined;
  const period = usedPeriod(agreement, run);
  const charge = usageCharge(agreement, run, prices);
  const nodes = agreement.allocation?.nodes ?? agreement.request.nodeCount;
  const cpus = agreement.request.cpusPerNode;
  const project = agreement.request.chargeAccount?.virtualOrganisation;
  return {
    recordId: `${site.machine}/usage/${agreement.id}`,
    createdAt: now,
    agreementId: agreement.id,
    globalJobId: `${site.baseUrl}/wsag/Agreement/${agreement.id}`,
    user: agreement.initiator,
    ...(agreement.name !== undefined ? { jobName: agreement.name } : {}),
    ...(charge ? { charge } : {}),
    status: agreement.state === 'Terminated' ? 'aborted' : run?.outcome === 'failed' ? 'failed' : 'completed',
    guaranteeLevel: agreement.request.guaranteeLevel,
    ...(period
      ? {
          wallSeconds: Math.max(0, Math.round((period.end.getTime() - period.start.getTime()) / 1000)),
          start: period.start,
          end: period.end,
        }
      : {}),
    nodes,
    ...(cpus !== undefined ? { processors: nodes * cpus } : {}),
    machine: site.machine,
    ...(project !== undefined ? { project } : {}),
  };
}
