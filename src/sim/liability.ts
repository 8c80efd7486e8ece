import { liabilityFor, type Liability } from '../domain/liability.js';
import { newExecutionRecord, type Outage, type Restart } from '../domain/execution.js';
import type { GuaranteeLevel } from '../domain/terms.js';
import type { CheckpointPlan } from '../scheduler/checkpoint-plan.js';
import type { Segment } from '../scheduler/model.js';

/**
 * Who pays a broken promise in the simulator: the domain's liability rules
 * (src/domain/liability.ts, TERMS.md "Guarantee levels"), applied to an execution record
 * built from what the simulator saw happen to the job. The record holds the facts those
 * rules look at, and only those: failures that hit the nodes the job worked on or had
 * booked (outages), the scheduler's suspensions, the pieces that resumed from a checkpoint
 * (restarts), and a change of the checkpoint plan agreed at admission (the planned
 * checkpoints were not taken as agreed).
 *
 * One fact the execution record has no place for: Standard's mechanism goes on where local
 * resources end: "the system will query the Grid middleware for appropriate resources ...
 * If Grid resources are found, the job will be restarted on these" (Hovestadt 2006, section
 * 3.2.2). When the Migration Controller found a peer for the job and the provider kept it
 * anyway (the offer cost more than the penalty, or the provider's policy kept the job), the
 * mechanism was not applied, and a Standard job pays. Without peers the Grid has nothing
 * to offer, and no offer was declined.
 */
export interface LiabilityFacts {
  jobId: string;
  level: GuaranteeLevel;
  /** n_romax the plan covers. */
  coveredOutages: number;
  outages: Outage[];
  /** When the scheduler suspended the job. */
  suspensions: Date[];
  /** The first time the scheduler's plan for the job had another checkpoint plan than the one agreed at admission. */
  planChange?: PlanChange;
  /** The pieces the job ran (or began) up to the time of judgement. */
  executed: readonly Segment[];
  /** Why the provider kept the job though the Grid had room for it (the Migration Controller's sentence). */
  gridDeclined?: string;
}

export interface PlanChange {
  at: Date;
  agreed: CheckpointPlan;
  changed: CheckpointPlan;
  /** Intervals secured when it changed. */
  secured: number;
}

export function liabilityOf(facts: LiabilityFacts): Liability {
  const record = newExecutionRecord(facts.jobId);
  record.outages = [...facts.outages].sort((a, b) => a.at.getTime() - b.at.getTime());
  record.suspensions = facts.suspensions.map((at) => ({
    at,
    reason: 'suspended by the scheduler to keep other promises',
  }));
  record.restarts = restartsOf(facts);
  if (facts.planChange) {
    const { at, agreed, changed, secured } = facts.planChange;
    record.missedCheckpoints = [
      {
        at,
        interval: secured + 1,
        reason:
          `the scheduler changed the checkpoint plan agreed at admission (${planText(agreed)}) to ` +
          `${planText(changed)}`,
      },
    ];
  }
  const rule = liabilityFor({ level: facts.level, record, coveredOutages: facts.coveredOutages, mechanism: false });
  if (!rule.liable && facts.level === 'Standard' && facts.gridDeclined !== undefined) {
    return {
      liable: true,
      rule:
        `liable: Standard resumes the job on Grid resources when local ones are lacking (Hovestadt 2006, ` +
        `section 3.2.2), but the provider kept it: ${facts.gridDeclined}`,
    };
  }
  return rule;
}

/** Every piece after the first that began from a checkpoint, with what interrupted the one before it. */
function restartsOf(facts: LiabilityFacts): Restart[] {
  const restarts: Restart[] = [];
  let secured = 0;
  facts.executed.forEach((segment, i) => {
    const before = facts.executed[i - 1];
    if (before) secured += before.intervals;
    if (!before || !segment.restart) return;
    const within = (t: Date) => t.getTime() >= before.start && t.getTime() <= segment.start;
    const cause = facts.outages.some((o) => within(o.at))
      ? 'outage'
      : facts.suspensions.some(within)
        ? 'suspension'
        : 'planned';
    restarts.push({ at: new Date(segment.start), nodes: [...segment.nodes], fromInterval: secured, cause });
  });
  return restarts;
}

function planText(plan: CheckpointPlan): string {
  return `${plan.count} checkpoint${plan.count === 1 ? '' : 's'} every ${Math.round(plan.intervalSeconds)} s`;
}
