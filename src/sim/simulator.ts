import type { MigrationRecord } from '../domain/agreement.js';
import type { Outage } from '../domain/execution.js';
import { jobSpecOf } from './job-spec.js';
import { MigrationController } from '../engine/migration/migration-controller.js';
import { migrationJobOf, type MigrationJob } from '../engine/migration/migration-jobs.js';
import type { CheckpointPlan } from '../scheduler/checkpoint-plan.js';
import { checkpointsWritten, securedIntervals, shapeOf, totalIntervals, type JobShape } from '../scheduler/job-timing.js';
import type { ClusterDescription, Instant, JobSpec, PlannedJob, ReplanReport, Segment } from '../scheduler/model.js';
import { PlanningManager } from '../scheduler/planning-manager.js';
import { liabilityOf, type LiabilityFacts, type PlanChange } from './liability.js';
import { agreementOf, atRisk, atRiskWhatIf, guaranteeTermsOf, MigrationTally, type Saved } from './migration.js';
import type { SimulatedPeersConfig } from './peers.js';
import type { JobOutcome, JobStatus, MigrationMove, SimReport, Violation, ViolationType } from './report.js';
import { SimulatedPeers } from './simulated-peers.js';
import { compareEvents, Heap } from './heap.js';
import { finishPoint, firstGap } from './plan-points.js';
import { buildReport, slaKinds } from './report-builder.js';
import type { Workload, WorkloadJob } from './workload.js';

/**
 * The simulator: replays a workload (arrivals and failure events) against a cluster by
 * driving the Planning Manager in simulated time. Pure: no I/O and no clock; the same
 * inputs give the same report.
 *
 * Events run in time order; at one instant completions come first (their nodes are free
 * for what follows), then the ends of failure blocks and of deadlines in P, then repairs,
 * failures and arrivals, each in workload order. After every call into the scheduler the
 * plan decides when each job completes: its work (the actual runtime, at most the
 * estimate) runs through its segments at the pace of its checkpoint plan, so a job that
 * needs less than its estimate finishes early and `jobFinished` opens the gap.
 *
 * With peers (`SimOptions.peers`), whenever jobs newly fall into P with no local plan left,
 * the real Migration Controller runs against simulated peers (simulated-peers.ts); a job it
 * moves leaves the plan (`jobFinished`: its nodes are free from then) and completes at its
 * peer. The controller is asynchronous, so the event loop is a generator that stops at
 * those points: `simulate` runs it without peers, `runSimulation` with or without.
 */

export interface SimOptions {
  /** Stop at this many seconds from the start (jobs still planned are reported open). */
  untilSeconds?: number;
  /** Called every `progressEvery` events and once at the end. */
  onProgress?: (progress: SimProgress) => void;
  progressEvery?: number;
  /** Include every job's outcome in the report. */
  jobs?: boolean;
  /** Migrate to these simulated peers (only with `runSimulation`). */
  peers?: SimulatedPeersConfig;
}

export interface SimProgress {
  /** Jobs with a final outcome (rejected, completed, dropped). */
  settled: number;
  total: number;
  simulatedSeconds: number;
  events: number;
  done: boolean;
}



/** Events the simulator generates itself; ranks order them against the workload's events at one instant. */
type Dynamic =
  | { t: Instant; rank: 0; key: string; type: 'completion'; id: string; version: number }
  | { t: Instant; rank: 1; key: string; type: 'renewal'; node: string; since: Instant }
  | { t: Instant; rank: 2; key: string; type: 'deadline'; id: string };

type External =
  | { t: Instant; rank: 3; index: number; type: 'repair'; node: string }
  | { t: Instant; rank: 4; index: number; type: 'failure'; node: string }
  | { t: Instant; rank: 5; index: number; type: 'arrival'; job: WorkloadJob };

/** What the simulator keeps per accepted job beside the plan. */
interface Track {
  input: WorkloadJob;
  spec: JobSpec;
  shape: JobShape;
  /** The job's work in compute intervals of its plan (runtime / estimate x intervals). */
  work: number;
  segRef: Segment[] | undefined;
  segLen: number;
  problem: string | undefined;
  completion: Instant | undefined;
  version: number;
  deadlineTick: boolean;
  suspensions: number;
  /** Failures (node and failure start) that hit the job's bookings. */
  hitBy: Set<string>;
  /** The same failures as outages of the job (for the liability rules). */
  outages: Outage[];
  suspendedAt: Date[];
  /** The checkpoint plan agreed at admission, and the first time the plan differed from it. */
  agreed: CheckpointPlan;
  planChange: PlanChange | undefined;
  /** The last run of the Migration Controller kept the job though a peer could take it (why, in its words). */
  gridDeclined: string | undefined;
  partial: boolean;
}

/** A run without migration. */
export function simulate(workload: Workload, cluster: ClusterDescription, options: SimOptions = {}): SimReport {
  if (options.peers) throw new Error('migration runs the Migration Controller, which is asynchronous: use runSimulation');
  const steps = new Simulation(workload, cluster, options).steps();
  const step = steps.next();
  if (!step.done) throw new Error('the simulation stopped for a migration without peers');
  return step.value;
}

/** A run with migration to `options.peers`, or without when there are none. */
export async function runSimulation(workload: Workload, cluster: ClusterDescription, options: SimOptions = {}): Promise<SimReport> {
  const simulation = new Simulation(workload, cluster, options);
  const steps = simulation.steps();
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    await simulation.migrate(step.value);
  }
}

class Simulation {
  private readonly pm: PlanningManager;
  private readonly epoch: Instant;
  private readonly horizonMs: number;
  private readonly external: External[];
  private readonly heap = new Heap<Dynamic>(compareEvents);
  private readonly tracks = new Map<string, Track>();
  private readonly outcomes = new Map<string, JobOutcome>();
  private readonly violations: Violation[] = [];
  private readonly until: Instant | undefined;
  private now: Instant;
  private lastAdvance = Number.NEGATIVE_INFINITY;
  private events = 0;
  private settled = 0;
  private lastEventAt: Instant;
  private readonly counters = { repairs: 0, failures: 0, renewals: 0, retiredWithoutCompletion: 0, completionClamped: 0, lateWithoutProblem: 0 };
  private readonly pendingTicks = new Set<string>();
  private readonly failedSince = new Map<string, Instant>();
  private failedMs = 0;
  private readonly hitJobs = new Set<string>();
  private readonly runningHitJobs = new Set<string>();
  private readonly values: Map<string, number>;
  private busyMs = 0;
  private spareMs = 0;
  private usefulMs = 0;
  private restartsOnSpare = 0;
  private partialJobs = 0;
  private readonly migration: { config: SimulatedPeersConfig; peers: SimulatedPeers; tally: MigrationTally } | undefined;
  /** Jobs at risk after the last event: the controller runs when one not among them appears. */
  private atRiskBefore = new Set<string>();
  /** During a controller run: where each job went (recorded before it is released) and the moves made. */
  private readonly migrationRecords = new Map<string, MigrationRecord>();
  private movesThisRun: MigrationMove[] = [];

  constructor(
    private readonly workload: Workload,
    private readonly cluster: ClusterDescription,
    private readonly options: SimOptions,
  ) {
    this.pm = new PlanningManager(cluster);
    this.epoch = workload.start;
    this.now = workload.start;
    this.lastEventAt = workload.start;
    this.horizonMs = cluster.timing.problemHorizonSeconds * 1000;
    this.until = options.untilSeconds !== undefined ? this.ms(options.untilSeconds) : undefined;
    const external: External[] = [];
    workload.jobs.forEach((job, index) => external.push({ t: this.ms(job.arrival), rank: 5, index, type: 'arrival', job }));
    workload.failures.forEach((f, index) => {
      external.push({ t: this.ms(f.at), rank: 4, index, type: 'failure', node: f.node });
      if (f.repairAt !== undefined) external.push({ t: this.ms(f.repairAt), rank: 3, index, type: 'repair', node: f.node });
    });
    external.sort((a, b) => a.t - b.t || a.rank - b.rank || a.index - b.index);
    this.external = external;
    this.values = new Map(workload.jobs.map((j) => [j.id, j.value]));
    this.migration = options.peers
      ? { config: options.peers, peers: new SimulatedPeers(options.peers.terms, workload.currency), tally: new MigrationTally(options.peers) }
      : undefined;
  }

  private ms(seconds: number): Instant {
    return this.epoch + Math.round(seconds * 1000);
  }

  private seconds(t: Instant): number {
    return (t - this.epoch) / 1000;
  }

  /** The event loop; it yields the time of each point where the Migration Controller is to run (with peers only). */
  *steps(): Generator<Instant, SimReport, void> {
    let next = 0;
    const every = Math.max(1, this.options.progressEvery ?? 500);
    let drainLimit = Number.POSITIVE_INFINITY;
    let stoppedBy: SimReport['span']['stoppedBy'] = this.until !== undefined ? 'until' : 'end of workload';
    for (;;) {
      const ext = this.external[next];
      const dyn = this.peekDynamic();
      if (!ext && !dyn) break;
      // Only the ends of failure blocks are left: nothing planned can change any more.
      if (!ext && dyn?.type === 'renewal' && this.idle()) break;
      if (!ext && drainLimit === Number.POSITIVE_INFINITY) drainLimit = this.drainLimit();
      const takeExternal = ext !== undefined && (dyn === undefined || compareEvents(ext, dyn) < 0);
      const t = takeExternal ? (ext as External).t : (dyn as Dynamic).t;
      if (this.until !== undefined && t > this.until) break;
      if (t > drainLimit) {
        // Jobs keep being planned after the ends of failure blocks of a node that is never repaired.
        stoppedBy = 'drain limit';
        this.lastEventAt = drainLimit;
        break;
      }
      this.now = t;
      this.events++;
      if (takeExternal) {
        next++;
        this.lastEventAt = t;
        this.advanceTo(t);
        this.handleExternal(ext as External);
      } else {
        this.heap.pop();
        if (dyn?.type !== 'renewal') this.lastEventAt = t;
        this.handleDynamic(dyn as Dynamic);
      }
      if (this.migration && this.newlyAtRisk()) yield t;
      if (this.events % every === 0) this.progress(false);
    }
    const end = this.until ?? this.lastEventAt;
    this.now = end;
    this.progress(true);
    return this.report(end, stoppedBy);
  }

  /**
   * When the workload's events are over, the jobs still planned get a generous time to
   * finish: each of them run one after the other, twice over, after the last deadline or
   * window, plus a problem horizon. A healthy plan drains long before; a job that needs a
   * node that failed for good is moved past each renewed failure block for ever, and the
   * run stops here instead (the jobs are reported open).
   */
  private drainLimit(): Instant {
    let latest = this.now;
    let work = 0;
    for (const track of this.tracks.values()) {
      latest = Math.max(latest, track.spec.deadline ?? track.spec.window?.end ?? track.spec.earliestStart ?? 0);
      work += 2 * (track.input.estimate + track.shape.timing.tInitNew + track.shape.timing.tDeinit) * 1000;
    }
    return latest + work + this.horizonMs;
  }

  private progress(done: boolean): void {
    this.options.onProgress?.({ settled: this.settled, total: this.workload.jobs.length, simulatedSeconds: this.seconds(this.now), events: this.events, done });
  }

  /** True when no job can complete and none waits for its deadline in P. */
  private idle(): boolean {
    for (const track of this.tracks.values()) if (track.completion !== undefined || track.deadlineTick) return false;
    return true;
  }

  /** The next valid dynamic event (stale completions are dropped). */
  private peekDynamic(): Dynamic | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (!top) return undefined;
      if (top.type === 'completion') {
        const track = this.tracks.get(top.id);
        if (!track || track.version !== top.version || track.completion !== top.t) {
          this.heap.pop();
          continue;
        }
      }
      return top;
    }
  }

  // ---------------------------------------------------------------- events

  private handleExternal(event: External): void {
    switch (event.type) {
      case 'arrival':
        this.arrive(event.job, event.t);
        break;
      case 'failure': {
        this.counters.failures++;
        this.failedSince.set(event.node, event.t);
        this.markHits(event.node, event.t);
        this.afterReplan(this.pm.nodeFailed(event.node, event.t));
        this.schedule({ t: event.t + this.horizonMs, rank: 1, key: event.node, type: 'renewal', node: event.node, since: event.t });
        break;
      }
      case 'repair': {
        this.counters.repairs++;
        const since = this.failedSince.get(event.node);
        if (since !== undefined) this.failedMs += event.t - since;
        this.failedSince.delete(event.node);
        this.afterReplan(this.pm.nodeRepaired(event.node, event.t));
        break;
      }
    }
    this.refresh();
  }

  private handleDynamic(event: Dynamic): void {
    switch (event.type) {
      case 'completion':
        this.complete(event.id, event.t);
        break;
      case 'renewal':
        this.pendingTicks.delete(`renewal:${event.node}:${event.t}`);
        if (this.failedSince.get(event.node) === event.since) {
          // The failure block ends and the node is still out: the scheduler takes it out for another horizon.
          this.counters.renewals++;
          this.markHits(event.node, event.t);
          this.advanceTo(event.t);
          this.schedule({ ...event, t: event.t + this.horizonMs });
        }
        break;
      case 'deadline':
        this.pendingTicks.delete(`deadline:${event.id}:${event.t}`);
        this.advanceTo(event.t);
        break;
    }
    this.refresh();
  }

  private schedule(event: Dynamic): void {
    if (event.type !== 'completion') {
      const key = `${event.type}:${event.type === 'renewal' ? event.node : event.id}:${event.t}`;
      if (this.pendingTicks.has(key)) return;
      this.pendingTicks.add(key);
    }
    this.heap.push(event);
  }

  /** Moves the scheduler's clock: it retires jobs whose promise broke in P and renews failure blocks. */
  private advanceTo(t: Instant): void {
    if (t <= this.lastAdvance) return;
    this.lastAdvance = t;
    const { report, left } = this.pm.advance(t);
    if (report) this.afterReplan(report);
    for (const job of left) {
      const track = this.tracks.get(job.spec.id);
      if (!track) continue;
      if (job.problem !== undefined) {
        const end = Math.min(t, job.spec.deadline ?? job.spec.window?.end ?? t);
        this.finish(track, job, 'dropped', end, job.problem);
      } else {
        // The plan says the job is over but its work was not: should not happen.
        this.counters.retiredWithoutCompletion++;
        const last = job.segments[job.segments.length - 1];
        this.finish(track, job, 'completed', Math.min(t, last?.end ?? t));
      }
    }
  }

  private arrive(input: WorkloadJob, t: Instant): void {
    const spec = this.specOf(input);
    const decision = this.pm.admit(spec, t);
    if (!decision.accepted) {
      this.record({ ...this.baseOutcome(input), status: 'rejected', reason: decision.reason });
      return;
    }
    const job = decision.job;
    const shape = shapeOf(spec, this.cluster.timing);
    const total = totalIntervals(job);
    this.tracks.set(spec.id, {
      input,
      spec,
      shape,
      work: input.runtime >= input.estimate ? total : (input.runtime / input.estimate) * total,
      segRef: undefined,
      segLen: 0,
      problem: undefined,
      completion: undefined,
      version: 0,
      deadlineTick: false,
      suspensions: 0,
      hitBy: new Set(),
      outages: [],
      suspendedAt: [],
      agreed: { ...job.checkpoints },
      planChange: undefined,
      gridDeclined: undefined,
      partial: false,
    });
  }

  private complete(id: string, t: Instant): void {
    const track = this.tracks.get(id) as Track;
    const job = this.pm.job(id) as PlannedJob;
    const snapshot: PlannedJob = { ...job, segments: job.segments.map((s) => ({ ...s })) };
    this.afterReplan(this.pm.jobFinished(id, t));
    this.finish(track, snapshot, 'completed', t);
  }

  private markHits(node: string, t: Instant): void {
    const index = this.pm.mm.nodeIndex(node);
    const failure = `${node}@${this.failedSince.get(node) ?? t}`;
    for (const owner of this.pm.mm.ownersOn(index, t, Number.POSITIVE_INFINITY)) {
      const track = this.tracks.get(owner);
      if (!track || track.hitBy.has(failure)) continue;
      track.hitBy.add(failure);
      track.outages.push({ at: new Date(t), node });
      this.hitJobs.add(owner);
      const job = this.pm.job(owner);
      if (job?.segments.some((s) => s.start <= t && t < s.end && s.nodes.includes(node))) {
        this.runningHitJobs.add(owner);
      }
    }
  }

  private afterReplan(report: ReplanReport): void {
    for (const id of report.suspended) {
      const track = this.tracks.get(id);
      if (!track) continue;
      track.suspensions++;
      track.suspendedAt.push(new Date(this.now));
    }
  }

  /** Re-derives completions of jobs whose plan changed, and waits for the deadlines of jobs in P. */
  private refresh(): void {
    for (const job of this.pm.allJobs()) {
      const track = this.tracks.get(job.spec.id);
      if (!track) continue;
      if (job.segments === track.segRef && job.segments.length === track.segLen && job.problem === track.problem) continue;
      track.segRef = job.segments;
      track.segLen = job.segments.length;
      track.problem = job.problem;
      this.notePlanChange(track, job, this.now);
      if (job.segments.filter((s) => s.start >= this.now).length >= 2) track.partial = true;
      const completion = this.completionOf(track, job);
      if (completion !== track.completion) {
        track.completion = completion;
        track.version++;
        if (completion !== undefined) this.heap.push({ t: completion, rank: 0, key: job.spec.id, type: 'completion', id: job.spec.id, version: track.version });
      }
      const due = job.spec.deadline ?? job.spec.window?.end;
      track.deadlineTick = false;
      if (job.problem !== undefined && due !== undefined && !job.segments.some((s) => s.end > this.now)) {
        track.deadlineTick = true;
        this.schedule({ t: Math.max(due, this.now), rank: 2, key: job.spec.id, type: 'deadline', id: job.spec.id });
      }
    }
  }

  /**
   * When the job's work is done in its current plan: the segment in which its work
   * (in compute intervals) is reached, its initialisation, the compute and the planned
   * checkpoints before that point, and deinitialisation. A reservation's holder releases
   * its nodes after its runtime, at the latest at the window's end.
   */
  private completionOf(track: Track, job: PlannedJob): Instant | undefined {
    const segments = job.segments;
    if (segments.length === 0) return undefined;
    const live = segments.some((s) => s.end > this.now);
    let at: Instant | undefined;
    if (job.spec.window) {
      if (!live) return undefined;
      const last = segments[segments.length - 1] as Segment;
      const release = job.spec.window.start + track.input.runtime * 1000;
      at = Math.max(last.start, Math.min(release, last.end));
    } else {
      const found = finishPoint(track.shape, track.work, job);
      if (!found) return undefined;
      at = found.at;
      if (at > found.segment.end) at = found.segment.end; // its work was secured by the checkpoint that ended the segment
    }
    if (at < this.now) {
      this.counters.completionClamped++;
      at = this.now;
    }
    return at;
  }

  // ---------------------------------------------------------------- migration

  private isSla = (id: string): boolean => {
    const kind = this.tracks.get(id)?.input.kind;
    return kind !== undefined && slaKinds.includes(kind);
  };

  /** True when a job is at risk (in P, no local plan left) that was not after the last event. */
  private newlyAtRisk(): boolean {
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
      jobs.push(migrationJobOf(agreementOf(track.input, at), planned, this.cluster.timing, now, guaranteeTermsOf(track.input, at, currency)));
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
    migration.tally.addRun(report, this.movesThisRun, (id) => this.stakeOf(id, t));
    this.refresh();
    this.atRiskBefore = new Set(atRisk(this.pm, t, this.isSla).map((p) => p.id));
  }

  /** A job moved to a peer: it leaves the plan now and completes there when the peer's agreement says. */
  private leaveForPeer(id: string, t: Instant): void {
    const migration = this.migration;
    const track = this.tracks.get(id);
    const job = this.pm.job(id);
    const record = this.migrationRecords.get(id);
    const booking = record ? migration?.peers.agreement(record.remoteAgreementId) : undefined;
    if (!migration || !track || !job || !record || !booking) throw new Error(`job ${id} cannot leave for a peer: it is not planned here or has no agreement there`);
    const snapshot: PlannedJob = { ...job, segments: job.segments.map((s) => ({ ...s })) };
    // Had it stayed, the provider would have declined this offer.
    const stake = this.stakeOf(id, t, `it declined the offer of ${record.peer} (${record.price.amount.toFixed(2)} ${record.price.currency})`);
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
    this.finish(track, snapshot, 'completed', t, undefined, { peer: record.peer, price: record.price.amount, end: booking.end });
  }

  /**
   * A job's penalty, and what of it the liability rules would make the provider pay if its
   * promise broke at `t` (`declined`: as if the provider had kept it from a peer that had room).
   */
  private stakeOf(id: string, t: Instant, declined?: string): Saved {
    const track = this.tracks.get(id);
    const job = this.pm.job(id);
    if (!track || !job) return { owed: 0, payable: 0 };
    const owed = track.input.penalty;
    const facts = this.factsOf(track, job, t);
    if (declined !== undefined) facts.gridDeclined = declined;
    return { owed, payable: owed > 0 && liabilityOf(facts).liable ? owed : 0 };
  }

  // ---------------------------------------------------------------- outcomes

  private specOf(input: WorkloadJob): JobSpec {
    return jobSpecOf(input, (seconds) => this.ms(seconds));
  }

  private baseOutcome(input: WorkloadJob): JobOutcome {
    return {
      id: input.id,
      kind: input.kind,
      level: input.level,
      nodes: input.nodes,
      status: 'rejected',
      arrival: input.arrival,
      ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
      checkpoints: 0,
      pieces: 0,
      restarts: 0,
      suspensions: 0,
      hits: 0,
      busyNodeSeconds: 0,
      penalty: input.penalty,
      paid: 0,
    };
  }

  private record(outcome: JobOutcome): void {
    this.outcomes.set(outcome.id, outcome);
    if (outcome.status === 'rejected' || outcome.status === 'completed' || outcome.status === 'dropped') this.settled++;
  }

  /**
   * A job leaves the plan (completed, dropped, or moved to a peer where it completes by
   * `peer.end`) or the run stops with it planned. Its pieces here count up to `at`.
   */
  private finish(track: Track, job: PlannedJob, status: JobStatus, at: Instant, reason?: string, peer?: { peer: string; price: number; end: Instant }): void {
    const input = track.input;
    this.tracks.delete(input.id);
    const executed = job.segments.filter((s) => s.start < at);
    let busy = 0;
    let spare = 0;
    for (const s of executed) {
      const elapsed = (Math.min(s.end, at) - s.start) / 1000;
      busy += s.nodes.length * elapsed;
      spare += s.spare.length * elapsed;
    }
    let checkpoints: number;
    if (peer) {
      checkpoints = checkpointsWritten(job, track.shape, at);
    } else if (status === 'completed' && !job.spec.window) {
      const found = finishPoint(track.shape, track.work, job);
      checkpoints = found ? found.checkpoints : checkpointsWritten(job, track.shape, at);
    } else if (status === 'dropped') {
      checkpoints = executed.reduce((sum, s) => sum + s.intervals, 0);
      checkpoints = Math.min(checkpoints, job.checkpoints.count);
    } else {
      checkpoints = checkpointsWritten(job, track.shape, at);
    }
    const restarts = executed.filter((s) => s.restart).length;
    const onSpare = executed.filter((s, i) => {
      const before = executed[i - 1];
      return i > 0 && s.restart && before !== undefined && s.start === before.end && before.spare.some((n) => s.nodes.includes(n));
    }).length;
    const first = executed[0];
    const outcome: JobOutcome = {
      ...this.baseOutcome(input),
      status,
      ...(first ? { start: this.seconds(first.start) } : {}),
      ...(status === 'completed' || status === 'dropped' ? { end: this.seconds(peer ? peer.end : at) } : {}),
      checkpoints,
      pieces: executed.length,
      restarts,
      suspensions: track.suspensions,
      hits: track.hitBy.size,
      busyNodeSeconds: busy,
      ...(reason !== undefined ? { reason } : {}),
      ...(peer ? { migratedTo: { peer: peer.peer, at: this.seconds(at), price: peer.price } } : {}),
    };
    // At a peer the job completes under the peer's agreement, which promises the deadline or the window.
    const completedAt = peer ? peer.end : at;
    let violation: ViolationType | undefined;
    let detail = '';
    if (input.kind === 'deadline' && (status === 'completed' || status === 'dropped')) {
      outcome.met = status === 'completed' && completedAt <= (job.spec.deadline as Instant);
      if (status === 'dropped') {
        violation = 'left-in-P';
        detail = reason ?? 'left the plan unsolved';
      } else if (!outcome.met) {
        violation = 'deadline-missed';
        detail = `completed at ${this.seconds(at)} s, deadline ${input.deadline} s`;
        if (track.hitBy.size === 0 && track.suspensions === 0) this.counters.lateWithoutProblem++;
      }
    }
    if (input.kind === 'reservation' && (status === 'completed' || status === 'dropped')) {
      const window = job.spec.window as { start: Instant; end: Instant };
      const gap = status === 'completed' && !peer ? firstGap(executed, window.start, at) : undefined;
      outcome.honoured = status === 'completed' && gap === undefined;
      if (status === 'dropped') {
        violation = 'left-in-P';
        detail = reason ?? 'left the plan unsolved';
      } else if (gap !== undefined) {
        violation = 'reservation-not-honoured';
        detail = `no nodes held from ${this.seconds(gap.from)} s to ${this.seconds(gap.to)} s of the window ${input.window?.start} s to ${input.window?.end} s`;
      }
    }
    if (violation) {
      outcome.violation = violation;
      const rule = liabilityOf(this.factsOf(track, job, at));
      outcome.paid = rule.liable ? input.penalty : 0;
      this.violations.push({ id: input.id, kind: input.kind, level: input.level, type: violation, detail, penalty: input.penalty, paid: outcome.paid, liability: rule.rule });
      this.migration?.tally.violated(input.id);
    }
    this.record(outcome);
    this.busyMs += busy * 1000;
    this.spareMs += spare * 1000;
    // A migrated job's work is done at the peer, not here.
    if (status === 'completed' && !peer) this.usefulMs += input.nodes * input.runtime * 1000;
    this.restartsOnSpare += onSpare;
    if (track.partial) this.partialJobs++;
  }

  /** The facts the liability rules judge the job on, up to `at`. */
  private factsOf(track: Track, job: PlannedJob, at: Instant): LiabilityFacts {
    this.notePlanChange(track, job, at);
    return {
      jobId: track.input.id,
      level: track.input.level,
      coveredOutages: track.shape.deadlineCoversOutages ? track.shape.timing.outages : 0,
      outages: track.outages,
      suspensions: track.suspendedAt,
      ...(track.planChange ? { planChange: track.planChange } : {}),
      executed: job.segments.filter((s) => s.start < at),
      ...(track.gridDeclined !== undefined ? { gridDeclined: track.gridDeclined } : {}),
    };
  }

  /** Notes the first time the job's checkpoint plan is not the one agreed at admission. */
  private notePlanChange(track: Track, job: PlannedJob, at: Instant): void {
    if (track.planChange || (job.checkpoints.count === track.agreed.count && job.checkpoints.intervalSeconds === track.agreed.intervalSeconds)) return;
    track.planChange = { at: new Date(at), agreed: track.agreed, changed: { ...job.checkpoints }, secured: securedIntervals(job, track.shape, at) };
  }

  // ---------------------------------------------------------------- report

  private report(end: Instant, stoppedBy: SimReport['span']['stoppedBy']): SimReport {
    // Jobs still planned when the run stops are accounted up to the stop.
    for (const job of [...this.pm.allJobs()]) {
      const track = this.tracks.get(job.spec.id);
      if (!track) continue;
      const status: JobStatus = job.problem !== undefined && !job.segments.some((s) => s.end > end) ? 'in-P' : job.segments.some((s) => s.start <= end && end < s.end) ? 'running' : 'waiting';
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
      // In workload order; with --until, jobs that had not arrived yet are left out.
      outcomes: this.workload.jobs.map((j) => this.outcomes.get(j.id)).filter((o): o is JobOutcome => o !== undefined),
      violations: this.violations,
      counters: this.counters,
      time: { busyMs: this.busyMs, spareMs: this.spareMs, usefulMs: this.usefulMs, failedMs: this.failedMs },
      restartsOnSpare: this.restartsOnSpare,
      partialJobs: this.partialJobs,
      jobsHit: this.hitJobs.size,
      runningJobsHit: this.runningHitJobs.size,
      values: this.values,
      ...(this.migration ? { migration: { peers: this.migration.config.peers.peers.map((p) => p.name), section: this.migration.tally.section(this.migration.peers.usage()) } } : {}),
    });
  }
}
