import type { MigrationRecord } from '../domain/agreement.js';
import { jobSpecOf } from './job-spec.js';
import { MigrationController } from '../engine/migration/index.js';
import { migrationJobOf, type MigrationJob } from '../engine/migration/index.js';
import type { ClusterDescription, Instant, JobSpec, PlannedJob, ReplanReport } from '../scheduler/model.js';
import { PlanningManager } from '../scheduler/planning-manager.js';
import { agreementOf, atRisk, atRiskWhatIf, guaranteeTermsOf, MigrationTally } from './migration.js';
import type { SimulatedPeersConfig } from './peers.js';
import type { JobOutcome, JobStatus, MigrationMove, SimReport } from './report.js';
import { SimulatedPeers } from './simulated-peers.js';
import { DynamicEvents, externalEvents, type External, type SimOptions } from './events.js';
import { buildReport, slaKinds } from './report-builder.js';
import { SimOutcomes, type Track } from './outcomes.js';
import { queuedId, type Workload, type WorkloadJob } from './workload.js';

/**
 * What a simulation keeps and concludes: its units of time, jobs finished here or at a peer, migrations to peers, and
 * the report (Simulation runs the events).
 */
export abstract class SimulationBook {
  protected readonly pm: PlanningManager;

  protected readonly epoch: Instant;

  protected readonly horizonMs: number;

  protected readonly external: External[];

  protected readonly queue = new DynamicEvents();

  protected readonly tracks = new Map<string, Track>();

  protected readonly until: Instant | undefined;

  protected now: Instant;

  protected lastAdvance = Number.NEGATIVE_INFINITY;

  protected events = 0;

  protected lastEventAt: Instant;

  protected readonly counters = {
    repairs: 0,
    failures: 0,
    renewals: 0,
    retiredWithoutCompletion: 0,
    completionClamped: 0,
    lateWithoutProblem: 0,
  };

  protected readonly failedSince = new Map<string, Instant>();

  protected failedMs = 0;

  protected readonly hitJobs = new Set<string>();

  protected readonly runningHitJobs = new Set<string>();

  protected readonly values: Map<string, number>;

  protected readonly results: SimOutcomes;

  protected readonly migration:
    | { config: SimulatedPeersConfig; peers: SimulatedPeers; tally: MigrationTally }
    | undefined;

  /** Jobs at risk after the last event: the controller runs when one not among them appears. */
  protected atRiskBefore = new Set<string>();

  /** During a controller run: where each job went (recorded before it is released) and the moves made. */
  protected readonly migrationRecords = new Map<string, MigrationRecord>();

  protected movesThisRun: MigrationMove[] = [];

  constructor(
    protected readonly workload: Workload,
    protected readonly cluster: ClusterDescription,
    protected readonly options: SimOptions,
  ) {
    this.pm = new PlanningManager(cluster);
    this.epoch = workload.start;
    this.now = workload.start;
    this.lastEventAt = workload.start;
    this.horizonMs = cluster.timing.problemHorizonSeconds * 1000;
    this.until = options.untilSeconds !== undefined ? this.ms(options.untilSeconds) : undefined;
    this.external = externalEvents(workload, (seconds) => this.ms(seconds));
    this.values = new Map(workload.jobs.map((j) => [j.id, j.value]));
    this.migration = options.peers
      ? {
          config: options.peers,
          peers: new SimulatedPeers(options.peers.terms, workload.currency),
          tally: new MigrationTally(options.peers),
        }
      : undefined;
    this.results = new SimOutcomes(
      (t) => this.seconds(t),
      this.counters,
      this.migration?.tally,
      // A reduce, not Math.max(...): an archive trace's hundreds of thousands of jobs overflow the call stack.
      this.workload.jobs.reduce((last, j) => Math.max(last, j.arrival), 0),
    );
  }

  protected ms(seconds: number): Instant {
    return this.epoch + Math.round(seconds * 1000);
  }

  protected seconds(t: Instant): number {
    return (t - this.epoch) / 1000;
  }

  protected isSla = (id: string): boolean => {
    const kind = this.tracks.get(id)?.input.kind;
    return kind !== undefined && slaKinds.includes(kind);
  };

  /** True when a job is at risk (in P, no local plan left) that was not after the last event. */
  protected newlyAtRisk(): boolean {
    const now = atRisk(this.pm, this.now, this.isSla).map((p) => p.id);
    const fresh = now.some((id) => !this.atRiskBefore.has(id));
    this.atRiskBefore = new Set(now);
    return fresh;
  }

  /**
   * One run of the Migration Controller at `t` over the SLA jobs still planned (only those
   * at risk when the policy moves only problematic jobs: the others would be left out at
   * step 1 anyway). Peers answer from their simulated capacity; jobs that move leave the
   * plan through `leaveForPeer`.
   */
  async migrate(t: Instant): Promise<void> {
    const migration = this.migration;
    if (!migration) return;
    const now = new Date(t);
    const at = (seconds: number) => new Date(this.ms(seconds));
    const currency = this.workload.currency;
    const onlyProblems = migration.config.peers.policy.candidates === 'problematic';
    const inP = new Set(atRisk(this.pm, t, this.isSla).map((p) => p.id));
    const jobs: MigrationJob[] = [];
    for (const planned of this.pm.allJobs()) {
      const track = this.tracks.get(planned.spec.id);
      if (!track || !this.isSla(planned.spec.id) || (onlyProblems && !inP.has(planned.spec.id))) continue;
      jobs.push(
        migrationJobOf(
          agreementOf(track.input, at),
          planned,
          this.cluster.timing,
          now,
          guaranteeTermsOf(track.input, at, currency),
        ),
      );
    }
    const checkpointMB = new Map(jobs.map((j) => [j.agreementId, j.checkpointMB]));
    this.movesThisRun = [];
    this.migrationRecords.clear();
    const controller = new MigrationController({
      peers: migration.config.peers,
      providers: migration.peers,
      timing: this.cluster.timing,
      schedule: atRiskWhatIf(this.pm, t, this.isSla),
      currency,
      providerName: `wsag sim (${this.workload.name})`,
      checkpointOf: async (id) => {
        const mb = checkpointMB.get(id) ?? 0;
        return mb > 0 ? { sizeBytes: Math.round(mb * 1024 * 1024) } : undefined;
      },
      record: async (id, record) => {
        this.migrationRecords.set(id, record);
      },
      release: async (id) => this.leaveForPeer(id, t),
    });
    const report = await controller.run(jobs, now);
    for (const move of this.movesThisRun) {
      const weighed = report.jobs.find((j) => j.agreementId === move.id);
      move.detail = weighed?.detail ?? '';
      move.problematic = weighed?.problematic ?? move.problematic;
    }
    for (const weighed of report.jobs) {
      const track = this.tracks.get(weighed.agreementId);
      if (!track || weighed.migrated) continue;
      const declined = weighed.reason === 'dearer-than-penalty' || weighed.reason === 'provider-policy';
      track.gridDeclined = declined ? weighed.detail.replace(/^not migrated: /, '') : undefined;
    }
    migration.tally.addRun(report, this.movesThisRun, (id) =>
      this.results.stakeOf(this.tracks.get(id), this.pm.job(id), t),
    );
    this.refresh();
    this.atRiskBefore = new Set(atRisk(this.pm, t, this.isSla).map((p) => p.id));
  }

  /** A job moved to a peer: it leaves the plan now and completes there when the peer's agreement says. */
  protected leaveForPeer(id: string, t: Instant): void {
    const migration = this.migration;
    const track = this.tracks.get(id);
    const job = this.pm.job(id);
    const record = this.migrationRecords.get(id);
    const booking = record ? migration?.peers.agreement(record.remoteAgreementId) : undefined;
    if (!migration || !track || !job || !record || !booking)
      throw new Error(`job ${id} cannot leave for a peer: it is not planned here or has no agreement there`);
    const snapshot: PlannedJob = { ...job, segments: job.segments.map((s) => ({ ...s })) };
    // Had it stayed, the provider would have declined this offer.
    const stake = this.results.stakeOf(
      this.tracks.get(id),
      this.pm.job(id),
      t,
      `it declined the offer of ${record.peer} (${record.price.amount.toFixed(2)} ${record.price.currency})`,
    );
    this.afterReplan(this.pm.jobFinished(id, t));
    this.movesThisRun.push({
      id,
      kind: track.input.kind,
      level: track.input.level,
      at: this.seconds(t),
      peer: record.peer,
      remoteAgreementId: record.remoteAgreementId,
      price: record.price.amount,
      problematic: snapshot.problem !== undefined && !snapshot.segments.some((s) => s.end > t),
      penalty: stake.owed,
      payable: stake.payable,
      start: this.seconds(booking.start),
      end: this.seconds(booking.end),
      detail: '',
    });
    this.finish(track, snapshot, 'completed', t, undefined, {
      peer: record.peer,
      price: record.price.amount,
      end: booking.end,
    });
  }

  protected specOf(input: WorkloadJob): JobSpec {
    return jobSpecOf(input, (seconds) => this.ms(seconds));
  }

  /** A job leaves the plan; see SimOutcomes.finish. */
  protected finish(
    track: Track,
    job: PlannedJob,
    status: JobStatus,
    at: Instant,
    reason?: string,
    peer?: { peer: string; price: number; end: Instant },
  ): void {
    this.tracks.delete(track.input.id);
    this.results.finish(track, job, status, at, reason, peer);
  }

  protected report(end: Instant, stoppedBy: SimReport['span']['stoppedBy']): SimReport {
    // Jobs still planned when the run stops are accounted up to the stop.
    for (const job of [...this.pm.allJobs()]) {
      const track = this.tracks.get(job.spec.id);
      if (!track) continue;
      const status: JobStatus =
        job.problem !== undefined && !job.segments.some((s) => s.end > end)
          ? 'in-P'
          : job.segments.some((s) => s.start <= end && end < s.end)
            ? 'running'
            : 'waiting';
      this.finish(track, job, status, end, job.problem);
    }
    for (const [node, since] of this.failedSince) {
      void node;
      if (since < end) this.failedMs += end - since;
    }
    return buildReport({
      workload: this.workload,
      cluster: this.cluster,
      options: this.options,
      epoch: this.epoch,
      end,
      endSeconds: this.seconds(end),
      stoppedBy,
      // In workload order, a refused request's queued job after it; with --until, jobs that had not arrived yet are
      // left out.
      outcomes: this.workload.jobs
        .flatMap((j) => [this.results.outcomes.get(j.id), this.results.outcomes.get(queuedId(j.id))])
        .filter((o): o is JobOutcome => o !== undefined),
      violations: this.results.violations,
      counters: this.counters,
      time: {
        busyMs: this.results.busyMs,
        spareMs: this.results.spareMs,
        usefulMs: this.results.usefulMs,
        slaUsefulMs: this.results.slaUsefulMs,
        usefulToLastArrivalMs: this.results.usefulToLastArrivalMs,
        checkpointNodeMs: this.results.checkpointNodeMs,
        failedMs: this.failedMs,
        lastArrivalSeconds: this.results.lastArrivalSeconds,
        lastCompletionSeconds: this.results.lastCompletionSeconds,
      },
      restartsOnSpare: this.results.restartsOnSpare,
      partialJobs: this.results.partialJobs,
      jobsHit: this.hitJobs.size,
      runningJobsHit: this.runningHitJobs.size,
      values: this.values,
      ...(this.migration
        ? {
            migration: {
              peers: this.migration.config.peers.peers.map((p) => p.name),
              section: this.migration.tally.section(this.migration.peers.usage()),
            },
          }
        : {}),
    });
  }

  protected abstract afterReplan(report: ReplanReport): void;
  protected abstract refresh(): void;
}
