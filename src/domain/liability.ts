import type { ExecutionRecord, Outage } from './execution.js';
import type { GuaranteeLevel } from './terms.js';
import { isoTime } from './time.js';

/**
 * Who pays a violated guarantee term: the liability rules of the guarantee levels (Hovestadt 2006
 * section 3.2.2, TERMS.md "Guarantee levels"), proved from the execution record, which is
 * the provider's log of the run ("the provider has to be able to prove the fulfillment of
 * the agreement terms, e.g. by means of system protocols", 002 section 3.2.2).
 */
export interface LiabilityInput {
  level: GuaranteeLevel;
  record: ExecutionRecord;
  /** n_romax: resource outages the promise covers (TERMS.md "maximum covered outages"). */
  coveredOutages: number;
  /** The objective is itself an agreed mechanism (the checkpoint interval): an outage cannot excuse missing it. */
  mechanism: boolean;
}

export interface Liability {
  liable: boolean;
  /** The rule applied and the facts behind it, for the report. */
  rule: string;
}

export function liabilityFor(input: LiabilityInput): Liability {
  const { level, record } = input;
  // Guarantee levels say which unforeseen events the provider compensates (002 section 3.2.2);
  // a job that fails by itself is not such an event at any level.
  if (record.failure?.cause === 'application') {
    return {
      liable: false,
      rule: `not liable: the job itself failed (${record.failure.reason}), not the provider's resources`,
    };
  }
  switch (level) {
    case 'Background':
      return {
        liable: false,
        rule: 'not liable: Background runs in gaps of the schedule with no time promise (002 section 3.2.2)',
      };
    case 'Full':
      return { liable: true, rule: 'liable: Full pays the penalty for any violation (002 section 3.2.2; TERMS.md)' };
    case 'Legacy':
      // The seed leaves Legacy's liability open (deadline by advance reservation, no fault
      // tolerance); the liability rule settles it: Legacy pays.
      return {
        liable: true,
        rule:
          'liable: Legacy holds its promise by the advance reservation alone and pays when it is broken ' +
          '(no fault-tolerance mechanism was agreed that could excuse it)',
      };
    case 'Standard':
    case 'Enhanced':
      return limitedLiability(input);
  }
}

/**
 * Standard and Enhanced pay "only if [the provider] failed to enforce the agreed fault
 * tolerance mechanisms (e.g. if he did not checkpoint the job regularly or if he failed to
 * provide backup resources for restarting the job in case of resource outages)" (002
 * section 3.2.2). Standard restarts on local spare resources only when some are free;
 * Enhanced always keeps them, for at most n_romax outages.
 */
function limitedLiability({ level, record, coveredOutages, mechanism }: LiabilityInput): Liability {
  const missed = record.missedCheckpoints[0];
  if (missed) {
    return {
      liable: true,
      rule:
        `liable: ${level} checkpoints regularly, but the checkpoint securing interval ${missed.interval} ` +
        `was not taken at ${isoTime(missed.at)} (${missed.reason})`,
    };
  }
  if (mechanism)
    return { liable: true, rule: `liable: the checkpoint interval is itself the mechanism ${level} agreed to apply` };
  const suspension = record.suspensions[0];
  if (suspension)
    return {
      liable: true,
      rule:
        `liable: the provider suspended the job at ${isoTime(suspension.at)} (${suspension.reason}); ` +
        `${level} covers resource outages only`,
    };
  if (record.outages.length === 0)
    return {
      liable: true,
      rule:
        `liable: no resource outage hit the job, so the violation is the provider's own (${level} excuses ` +
        `outages only)`,
    };
  const oldCheckpoint = restartFromOlderCheckpoint(record);
  if (oldCheckpoint)
    return { liable: true, rule: `liable: ${oldCheckpoint}; ${level} restarts from the last checkpoint` };
  if (level === 'Enhanced') {
    const unserved = record.outages.slice(0, coveredOutages).find((outage) => !restartedAfter(record, outage));
    if (unserved) {
      return {
        liable: true,
        rule:
          `liable: Enhanced keeps spare resources for ${coveredOutages} outage(s), but the job was not ` +
          `restarted after node ${unserved.node} failed at ${isoTime(unserved.at)}`,
      };
    }
  }
  const beyond =
    record.outages.length > coveredOutages ? `; ${record.outages.length} outages, ${coveredOutages} covered` : '';
  const spares = level === 'Standard' ? '; Standard restarts on local spare resources only when some are free' : '';
  return {
    liable: false,
    rule:
      `not liable: ${record.outages.length === 1 ? 'a resource outage' : 'resource outages'} hit the job ` +
      `and ${level}'s mechanisms were applied (checkpoints as planned, restarts from the last checkpoint` +
      `${spares})${beyond}`,
  };
}

function restartedAfter(record: ExecutionRecord, outage: Outage): boolean {
  return record.restarts.some((r) => r.cause === 'outage' && r.at.getTime() >= outage.at.getTime());
}

/** A restart after an outage from an older checkpoint than the last one taken before the outage. */
function restartFromOlderCheckpoint(record: ExecutionRecord): string | undefined {
  for (const restart of record.restarts) {
    if (restart.cause !== 'outage') continue;
    const secured = record.checkpoints
      .filter((c) => c.at.getTime() <= restart.at.getTime())
      .reduce((most, c) => Math.max(most, c.interval), 0);
    if (restart.fromInterval < secured) {
      return (
        `the restart at ${isoTime(restart.at)} resumed from interval ${restart.fromInterval} though the ` +
        `checkpoint of interval ${secured} existed`
      );
    }
  }
  return undefined;
}
