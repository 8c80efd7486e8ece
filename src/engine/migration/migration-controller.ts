import { formatCharge } from '../../domain/compensation.js';
import type { Money } from '../../domain/negotiation.js';
import { isoTime } from '../../domain/time.js';
import { compatibilityProfile, profileMismatch } from './migration-compatibility.js';
import { arrivalAt, transferSeconds, type MigrationJob } from './migration-jobs.js';
import { cheaperThan, penaltyAtStake } from './migration-penalty.js';
import { customerScope, customerTargetRefusal, providerRefusal, providerTargetRefusal } from './migration-policy.js';
import { receivesCheckpoints } from './peers.js';

export type {
  MigrationControllerDeps,
  NotMigratedReason,
  DroppedTarget,
  OfferSeen,
  JobMigration,
  MigrationReport,
  MigrationCase,
  MigrationRun,
  MigrationStep,
} from './migration-model.js';
import type {
  MigrationControllerDeps,
  MigrationReport,
  MigrationCase,
  MigrationRun,
  MigrationStep,
} from './migration-model.js';
import { newCase, open, conclude, drop, droppedText, refusalsText, promiseOf, latestText } from './migration-cases.js';
import { type Quoted, quoteAll, declineAll, migrateToCheapest, solvedWithout, sum } from './migration-quotes.js';

// --- step 1 ------------------------------------------------------------------------------

/**
 * Candidates MT by the provider's policy (002 section 3.6.1): problematic jobs in P's order
 * (those that had run first, then value descending), then, when the policy lets other jobs move, those
 * least valuable first (so important jobs stay longest); fixed reservations only if their
 * window starts before the last problematic job's promise falls due (after it, moving them
 * helps no problem). Peers the provider's policy excludes are dropped here.
 */
export const selectCandidates: MigrationStep = {
  name: 'selectCandidates',
  run(run, { peers }) {
    const inP = new Map(run.problems.map((p, i) => [p.id, i]));
    const byId = new Map(run.jobs.map((j) => [j.agreementId, j]));
    // As the scheduler orders P: jobs that had run first, then value descending.
    const problematic = run.problems
      .map((p) => byId.get(p.id))
      .filter((j): j is MigrationJob => j !== undefined)
      .sort(
        (a, b) =>
          Number(b.checkpointMB > 0) - Number(a.checkpointMB > 0) ||
          b.value - a.value ||
          (a.agreementId < b.agreementId ? -1 : 1),
      );
    const lastPromise = Math.max(...problematic.map(promiseOf), Number.NEGATIVE_INFINITY);
    const general = run.jobs
      .filter((j) => !inP.has(j.agreementId))
      .filter((j) => j.kind !== 'Reservation' || (j.request.window?.start.getTime() ?? Infinity) < lastPromise)
      .sort((a, b) => a.value - b.value || (a.agreementId < b.agreementId ? -1 : 1));
    for (const job of [...problematic, ...general]) {
      const isProblem = inP.has(job.agreementId);
      const c = newCase(job, isProblem, peers.peers, run.problems[inP.get(job.agreementId) ?? -1]?.reason);
      const refusal = providerRefusal(job, isProblem, peers.policy);
      if (refusal) {
        if (isProblem) conclude(c, 'provider-policy', `not migrated: ${refusal}`);
        else continue;
      } else {
        for (const peer of [...c.targets]) {
          const reason = providerTargetRefusal(job, peer, peers.policy, peers.local);
          if (reason) drop(c, peer, 'selectCandidates', reason);
        }
        if (c.targets.length === 0)
          conclude(
            c,
            'provider-policy',
            `not migrated: the provider's policy admits no peer for it (${droppedText(c)})`,
          );
      }
      run.cases.push(c);
    }
  },
};

// --- step 2 ------------------------------------------------------------------------------

/**
 * The customer's policy from the SLA (002 section 3.6.2): a prohibition overrules the provider's admission; include and
 * exclude lists narrow the targets.
 */
export const applyCustomerPolicy: MigrationStep = {
  name: 'applyCustomerPolicy',
  run(run, { peers }) {
    for (const c of open(run)) {
      const policy = c.job.request.migrationPolicy;
      const allowed = customerScope(policy, peers.policy.scope);
      if ('refusal' in allowed) {
        conclude(c, 'customer-policy', `not migrated: ${allowed.refusal}`);
        continue;
      }
      c.scope = allowed.scope;
      for (const peer of [...c.targets]) {
        const reason = customerTargetRefusal(policy, allowed.scope, peer, peers.local);
        if (reason) drop(c, peer, 'applyCustomerPolicy', reason);
      }
      if (c.targets.length === 0)
        conclude(c, 'customer-policy', `not migrated: the SLA's migration policy admits no peer (${droppedText(c)})`);
    }
  },
};

// --- step 3 ------------------------------------------------------------------------------

/** The compatibility profile of each job (002 section 3.6.3): the SLA's demands plus what its checkpoint demands. */
export const buildCompatibilityProfiles: MigrationStep = {
  name: 'buildCompatibilityProfiles',
  run(run, { peers }) {
    for (const c of open(run)) c.profile = compatibilityProfile(c.job.request, peers.local, c.job.checkpointMB > 0);
  },
};

// --- step 4 ------------------------------------------------------------------------------

/**
 * Static matching (002 section 3.6.4): each target's configured profile against the job's; a job with a checkpoint also
 * needs a peer that can receive one.
 */
export const matchTargets: MigrationStep = {
  name: 'matchTargets',
  run(run) {
    for (const c of open(run)) {
      for (const peer of [...c.targets]) {
        const reason =
          c.job.checkpointMB > 0 && !receivesCheckpoints(peer)
            ? 'it cannot receive checkpoints (a ws-agreement peer without checkpointUrl)'
            : profileMismatch(c.profile ?? { libraries: [] }, peer.profile);
        if (reason) drop(c, peer, 'matchTargets', reason);
      }
      if (c.targets.length === 0)
        conclude(c, 'no-compatible-peer', `not migrated: no compatible peer (${droppedText(c)})`);
    }
  },
};

// --- step 5 ------------------------------------------------------------------------------

/**
 * The bandwidth filter (002 section 3.6.5): a target stays only if the checkpoint arrives
 * there (t_migr = size / bandwidth, formula 3.5) by the job's latest start, the time that
 * still leaves room to resume and finish by the deadline (or the reservation's start).
 */
export const filterByBandwidth: MigrationStep = {
  name: 'filterByBandwidth',
  run(run) {
    for (const c of open(run)) {
      for (const peer of [...c.targets]) {
        const arrival = arrivalAt(c.job, peer.bandwidthMBps, run.now);
        if (arrival.getTime() <= c.job.latestStart.getTime()) continue;
        const seconds = Math.ceil(transferSeconds(c.job, peer.bandwidthMBps));
        drop(
          c,
          peer,
          'filterByBandwidth',
          `the checkpoint (${Math.ceil(c.job.checkpointMB)} MB) takes ${seconds} s at ${peer.bandwidthMBps} ` +
            `MB/s and would arrive at ${isoTime(arrival)}, after the latest start ${latestText(c.job)}`,
        );
      }
      if (c.targets.length === 0)
        conclude(c, 'bandwidth', `not migrated: no peer can receive the checkpoint in time (${droppedText(c)})`);
    }
  },
};

// --- step 6 ------------------------------------------------------------------------------

/**
 * Problematic jobs first (002 section 3.6.7): every target is asked for an offer; the
 * cheapest is taken if it costs less than the penalty the job would pay, and the job moves:
 * the offer is accepted, the checkpoint sent, the job released here and its agreement told
 * where it went. Offers not taken are declined, so the peers release their holds.
 */
export const migrateProblematicJobs: MigrationStep = {
  name: 'migrateProblematicJobs',
  async run(run, deps) {
    for (const c of open(run).filter((c) => c.problematic)) {
      const penalty = run.penalties.get(c.job.agreementId) ?? { amount: 0, currency: deps.currency };
      c.report.penalty = penalty;
      if (penalty.amount <= 0) {
        conclude(
          c,
          'no-penalty',
          'not migrated: staying costs no penalty (the agreement states none for this violation), so no offer ' +
            'can be worth it',
        );
        continue;
      }
      const quotes = await quoteAll(c, run, deps);
      if (quotes.length === 0) {
        conclude(c, 'peers-refused', `not migrated: no peer made an offer (${refusalsText(c)})`);
        continue;
      }
      const affordable = quotes.filter((q) => cheaperThan(q.quote.price, penalty));
      if (affordable.length === 0) {
        await declineAll(quotes, deps, c);
        const cheapest = quotes[0] as Quoted;
        conclude(
          c,
          'dearer-than-penalty',
          `not migrated: the cheapest offer (${formatCharge(cheapest.quote.price)} from ` +
            `${cheapest.peer.name}) costs no less than the penalty ${formatCharge(penalty)}; paying the ` +
            `penalty is cheaper`,
        );
        continue;
      }
      await migrateToCheapest(c, affordable, quotes, run, deps, {
        penalty,
        text: `below the penalty ${formatCharge(penalty)}`,
      });
    }
  },
};

// --- step 7 ------------------------------------------------------------------------------

/**
 * General jobs (002 section 3.6.8): taken in order, each assumed gone on a copy of the
 * schedule until P shrinks; then every assumed job's targets are asked, jobs nobody takes
 * are dropped from the assumption, and the assumed jobs move if the sum of their cheapest
 * offers is below the sum of the penalties of the problems they solve. Otherwise the
 * assumptions stay and the next job is added (a high penalty solved later may pay for them).
 */
export const migrateGeneralJobs: MigrationStep = {
  name: 'migrateGeneralJobs',
  async run(run, deps) {
    if (deps.peers.policy.candidates !== 'all') return;
    let problems = new Set(deps.schedule.problematic().map((p) => p.id));
    let assumed: MigrationCase[] = [];
    for (const candidate of open(run).filter((c) => !c.problematic)) {
      if (problems.size === 0) break;
      assumed.push(candidate);
      candidate.listed = true;
      if (solvedWithout(assumed, problems, deps).length === 0) {
        candidate.report.detail = 'not migrated: moving it (with the jobs assumed before it) solves no problematic job';
        candidate.report.reason = 'no-effect';
        continue;
      }
      const offers = new Map<MigrationCase, Quoted[]>();
      for (const c of assumed) {
        const quotes = await quoteAll(c, run, deps);
        if (quotes.length > 0) offers.set(c, quotes);
        else conclude(c, 'peers-refused', `not migrated: no peer made an offer (${refusalsText(c)})`);
      }
      assumed = assumed.filter((c) => offers.has(c));
      const solved = assumed.length > 0 ? solvedWithout(assumed, problems, deps) : [];
      const price = sum(
        assumed.map((c) => (offers.get(c) as Quoted[])[0]?.quote.price as Money),
        deps.currency,
      );
      const saved = sum(
        solved.map((id) => run.penalties.get(id) ?? { amount: 0, currency: deps.currency }),
        deps.currency,
      );
      if (solved.length === 0 || !cheaperThan(price, saved)) {
        for (const [c, quotes] of offers) await declineAll(quotes, deps, c);
        for (const c of assumed) {
          c.report.reason = solved.length === 0 ? 'no-effect' : 'dearer-than-penalty';
          c.report.penalty = saved;
          c.report.detail =
            solved.length === 0
              ? 'not migrated: without the jobs no peer takes, moving it solves no problematic job'
              : `not migrated: moving ${assumed.map((a) => a.job.agreementId).join(', ')} costs ` +
                `${formatCharge(price)}, no less than the penalties it saves (${formatCharge(saved)} for ` +
                `${solved.join(', ')})`;
        }
        continue;
      }
      for (const c of assumed) {
        c.report.solves = solved;
        c.report.penalty = saved;
        const quotes = offers.get(c) as Quoted[];
        const others = assumed.filter((a) => a !== c).map((a) => a.job.agreementId);
        const text =
          `with ${others.length === 0 ? 'no other job' : others.join(', ')} for ${formatCharge(price)} in all, ` +
          `below the penalties saved (${formatCharge(saved)} for ${solved.join(', ')})`;
        await migrateToCheapest(c, quotes.slice(0, 1), quotes, run, deps, { penalty: saved, text });
      }
      const migrated = assumed.filter((c) => c.report.migrated).map((c) => c.job.agreementId);
      const before = problems;
      problems = new Set(deps.schedule.problematic().map((p) => p.id));
      for (const solvedId of [...before].filter((id) => !problems.has(id))) {
        const report = run.cases.find((c) => c.job.agreementId === solvedId)?.report;
        if (report && !report.migrated) report.solvedBy = [...(report.solvedBy ?? []), ...migrated];
      }
      assumed = [];
    }
  },
};

export const migrationSteps: readonly MigrationStep[] = [
  selectCandidates,
  applyCustomerPolicy,
  buildCompatibilityProfiles,
  matchTargets,
  filterByBandwidth,
  migrateProblematicJobs,
  migrateGeneralJobs,
];

/**
 * The Migration Controller (Hovestadt 2006, sections 3.6 and 4.2.4; SCHEDULER.md "Cross-border
 * migration"): when the Planning Manager cannot keep every promise with local resources,
 * it moves jobs to peer providers. Seven steps, in order, each a named function over the
 * run below: candidates by the provider's policy, the customer's policy, compatibility
 * profiles, static matching, the bandwidth filter, then negotiation and migration of the
 * problematic jobs, then of other jobs whose departure frees room for them. A job moves
 * only where the cheapest offer costs less than the penalty the move saves.
 *
 * The controller neither stops nor resumes execution: `checkpointOf` hands it the job's
 * latest checkpoint (undefined for a job that has not run) and `release` takes the job out
 * of the local plan and run time once it has moved; `record` stores where it went on the
 * local agreement (Agreement.migratedTo).
 */
export class MigrationController {
  constructor(private readonly deps: MigrationControllerDeps) {}

  /** One run over `jobs` (every SLA job the controller may weigh, problematic or not) at `now`. */
  async run(jobs: readonly MigrationJob[], now: Date): Promise<MigrationReport> {
    const run = startRun(jobs, now, this.deps);
    for (const step of migrationSteps) await step.run(run, this.deps);
    return finishRun(run, this.deps);
  }
}

/** The run before the steps: P from the schedule, and the penalty each problematic job would pay if it stayed. */
export function startRun(
  jobs: readonly MigrationJob[],
  now: Date,
  deps: Pick<MigrationControllerDeps, 'schedule' | 'timing' | 'currency'>,
): MigrationRun {
  const problems = deps.schedule.problematic();
  const penalties = new Map<string, Money>();
  for (const job of jobs) {
    if (problems.some((p) => p.id === job.agreementId))
      penalties.set(job.agreementId, penaltyAtStake(job, now, deps.timing.problemHorizonSeconds, deps.currency));
  }
  return { now, jobs: [...jobs], problems, cases: [], penalties };
}

export function finishRun(run: MigrationRun, deps: Pick<MigrationControllerDeps, 'schedule'>): MigrationReport {
  const after = deps.schedule.problematic();
  const stillIn = new Set(after.map((p) => p.id));
  for (const c of run.cases) {
    if (c.problematic) c.report.unsolved = stillIn.has(c.job.agreementId);
    if (!c.report.migrated && c.report.reason === undefined) c.report.reason = 'no-effect';
  }
  const listed = run.cases.filter((c) => c.listed).map((c) => c.report);
  const reports = new Map(listed.map((r) => [r.agreementId, r]));
  return {
    at: run.now,
    problematicBefore: run.problems.map((p) => p.id),
    problematicAfter: after.map((p) => p.id),
    jobs: listed,
    violations: after.map((p) => {
      const report = reports.get(p.id);
      const penalty = run.penalties.get(p.id);
      return {
        agreementId: p.id,
        reason: report ? `${p.reason}; ${report.detail}` : p.reason,
        ...(penalty ? { penalty } : {}),
      };
    }),
  };
}

// --- helpers -------------------------------------------------------------------------------
