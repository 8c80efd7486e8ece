import type { Agreement } from '../domain/agreement.js';
import type { GuaranteeTerm, ServiceRequest } from '../domain/terms.js';
import type { MigrationReport, NotMigratedReason } from '../engine/migration/index.js';
import { planWhatIf, type ProblemList, type ScheduleWhatIf } from '../engine/migration/index.js';
import type { Instant } from '../scheduler/model.js';
import type { PlanningManager } from '../scheduler/planning-manager.js';
import type { MigrationMove, MigrationSection } from './report.js';
import type { SimulatedPeersConfig } from './peers.js';
import type { PeerActivity } from './simulated-peers.js';
import type { WorkloadJob } from './workload.js';

/**
 * What the simulator hands the real Migration Controller (src/engine/migration/migration-controller.ts):
 * each workload job as the agreement it stands for, P as the jobs whose promise the plan
 * can no longer keep, and the tally of what the controller's runs did.
 */

/** Seconds from the start of the simulation to a date. */
export type At = (seconds: number) => Date;

/** The terms a workload job stands for, as an SLA would state them. */
export function requestOf(input: WorkloadJob, at: At): ServiceRequest {
  return {
    nodeCount: input.nodes,
    ...(input.memoryGB !== undefined ? { memoryPerNodeMiB: input.memoryGB * 1024 } : {}),
    ...(input.interconnect !== undefined ? { interconnect: input.interconnect } : {}),
    libraries: [],
    storageGB: input.storageGB,
    runtimeSeconds: input.estimate,
    ...(input.earliestStart !== undefined ? { earliestStart: at(input.earliestStart) } : {}),
    ...(input.deadline !== undefined ? { deadline: at(input.deadline) } : {}),
    ...(input.window ? { window: { start: at(input.window.start), end: at(input.window.end) } } : {}),
    requestKind: 'Binding',
    guaranteeLevel: input.level,
    ...(input.checkpointsPerHour !== undefined ? { checkpointFrequency: input.checkpointsPerHour } : {}),
    maxCoveredOutages: input.outages,
    ...(input.migration !== undefined ? { migrationPolicy: { scope: input.migration, include: [], exclude: [] } } : {}),
    securityPolicy: [],
  };
}

/**
 * The job's promise as a guarantee term whose penalty is the workload's `penalty`, once per
 * violation: completion by the deadline, or the nodes throughout the reservation's window.
 * So the penalty the controller weighs a move against is the one the report counts.
 */
export function guaranteeTermsOf(input: WorkloadJob, at: At, currency: string): GuaranteeTerm[] {
  if (input.penalty <= 0) return [];
  const penalties = [{ assessmentInterval: { count: 1 }, valueUnit: currency, amount: input.penalty }];
  if (input.kind === 'deadline' && input.deadline !== undefined) {
    return [
      {
        name: 'CompletionByDeadline',
        serviceScope: [input.id],
        kpiName: 'CompletionTime',
        target: { kind: 'CompletedBy', at: at(input.deadline) },
        penalties,
        rewards: [],
      },
    ];
  }
  if (input.kind === 'reservation') {
    return [
      {
        name: 'NodesThroughWindow',
        serviceScope: [input.id],
        kpiName: 'NodesAvailable',
        target: { kind: 'NodesAvailable', nodes: input.nodes },
        penalties,
        rewards: [],
      },
    ];
  }
  return [];
}

/**
 * The Observed agreement a workload job stands for; its template is named after the job's kind (for the policy's
 * template lists).
 */
export function agreementOf(input: WorkloadJob, at: At): Agreement {
  const created = at(input.arrival);
  return {
    id: input.id,
    templateId: `sim-${input.kind}`,
    templateName: input.kind,
    initiator: 'wsag sim',
    state: 'Observed',
    serviceTerms: [],
    guaranteeTerms: [],
    request: requestOf(input, at),
    document: '',
    createdAt: created,
    updatedAt: created,
  };
}

/**
 * The jobs of P whose promise the plan no longer keeps: SLA jobs in P with no piece planned
 * from now on. Jobs only flagged in P (planned beyond the problem horizon on a failed node)
 * still have their plan and may well keep it: the controller does not weigh them.
 */
export function atRisk(pm: PlanningManager, now: Instant, isSla: (id: string) => boolean): ProblemList {
  return pm.problematic().filter((p) => isSla(p.id) && !(pm.job(p.id)?.segments.some((s) => s.end > now) ?? false));
}

/**
 * ScheduleWhatIf (src/engine/migration/migration-schedule.ts) over the Planning Manager, with P narrowed to the jobs at
 * risk now.
 */
export function atRiskWhatIf(pm: PlanningManager, now: Instant, isSla: (id: string) => boolean): ScheduleWhatIf {
  const whatIf = planWhatIf(pm, () => new Date(now));
  return {
    problematic: () => atRisk(pm, now, isSla),
    problematicWithout(removed) {
      const current = new Set(atRisk(pm, now, isSla).map((p) => p.id));
      return whatIf.problematicWithout(removed).filter((p) => current.has(p.id));
    },
  };
}

/**
 * A job taken out of P by a run: the penalty it no longer owes, and what of it the liability rules would have made the
 * provider pay.
 */
export interface Saved {
  owed: number;
  payable: number;
}

/** What the controller's runs did over a simulation, for the report's `migration` section. */
export class MigrationTally {
  private runs = 0;
  private readonly weighed = new Set<string>();
  /** Jobs in P the controller kept, with the reason of the last run that weighed them. */
  private readonly kept = new Map<string, NotMigratedReason>();
  private readonly keptViolated = new Set<string>();
  private readonly saved = new Map<string, Saved>();
  private readonly moves: MigrationMove[] = [];

  constructor(private readonly config: SimulatedPeersConfig) {}

  /**
   * One run: its moves (`moved`, built by the simulator as each job left), the jobs in P it
   * weighed, and those it took out of P (moved, or solved by the room the moves freed),
   * with their penalty and what of it the liability rules would have made the provider pay
   * had the promise broken (`stake`, for jobs still here).
   */
  addRun(report: MigrationReport, moved: readonly MigrationMove[], stake: (id: string) => Saved): void {
    this.runs++;
    this.moves.push(...moved);
    for (const job of report.jobs) {
      if (!job.problematic) continue;
      this.weighed.add(job.agreementId);
      if (job.migrated) this.kept.delete(job.agreementId);
      else this.kept.set(job.agreementId, job.reason ?? 'no-effect');
    }
    const after = new Set(report.problematicAfter);
    const movedIds = new Map(moved.map((m) => [m.id, m]));
    for (const id of report.problematicBefore) {
      if (after.has(id)) continue;
      const move = movedIds.get(id);
      this.saved.set(id, move ? { owed: move.penalty, payable: move.payable } : stake(id));
    }
  }

  /** A job broke its promise after all: a penalty saved earlier was not saved. */
  violated(id: string): void {
    this.saved.delete(id);
    if (this.kept.has(id)) this.keptViolated.add(id);
  }

  section(usage: readonly PeerActivity[]): MigrationSection {
    const savedJobs = [...this.saved.values()];
    const notMigrated: MigrationSection['notMigrated'] = {};
    for (const [id, reason] of this.kept) if (!this.saved.has(id)) notMigrated[reason] = (notMigrated[reason] ?? 0) + 1;
    const usageOf = new Map(usage.map((u) => [u.peer, u]));
    return {
      runs: this.runs,
      problematicWeighed: this.weighed.size,
      migrations: this.moves.length,
      problematicMigrated: this.moves.filter((m) => m.problematic).length,
      price: round2(this.moves.reduce((s, m) => s + m.price, 0)),
      penaltiesSaved: {
        jobs: savedJobs.length,
        owed: round2(savedJobs.reduce((s, j) => s + j.owed, 0)),
        payable: round2(savedJobs.reduce((s, j) => s + j.payable, 0)),
      },
      notMigrated,
      keptThenViolated: this.keptViolated.size,
      peers: this.config.peers.peers.map((peer) => {
        const terms = this.config.terms.get(peer.name);
        const u = usageOf.get(peer.name);
        return {
          name: peer.name,
          nodes: terms?.nodes ?? 0,
          pricePerNodeHour: terms?.pricePerNodeHour ?? 0,
          pricePerJob: terms?.pricePerJob ?? 0,
          quotes: u?.quotes ?? 0,
          refusals: u?.refusals ?? 0,
          migrations: this.moves.filter((m) => m.peer === peer.name).length,
          price: round2(this.moves.filter((m) => m.peer === peer.name).reduce((s, m) => s + m.price, 0)),
          nodeSeconds: u?.nodeSeconds ?? 0,
        };
      }),
      moves: this.moves,
    };
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
