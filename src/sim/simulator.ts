import { shapeOf } from '../scheduler/job-timing.js';
import type { ClusterDescription, Instant, PlannedJob, ReplanReport } from '../scheduler/model.js';
import type { SimReport } from './report.js';
import { compareEvents } from './heap.js';
import type { Dynamic, External, SimOptions } from './events.js';
export type { SimOptions, SimProgress } from './events.js';
import { completionOf } from './plan-points.js';
import type { Track } from './outcomes.js';
import { queuedId, type Workload, type WorkloadJob } from './workload.js';
import { SimulationBook } from './simulation-book.js';

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

/** A run without migration. */
export function simulate(workload: Workload, cluster: ClusterDescription, options: SimOptions = {}): SimReport {
  if (options.peers)
    throw new Error('migration runs the Migration Controller, which is asynchronous: use runSimulation');
  const steps = new Simulation(workload, cluster, options).steps();
  const step = steps.next();
  if (!step.done) throw new Error('the simulation stopped for a migration without peers');
  return step.value;
}

/** A run with migration to `options.peers`, or without when there are none. */
export async function runSimulation(
  workload: Workload,
  cluster: ClusterDescription,
  options: SimOptions = {},
): Promise<SimReport> {
  const simulation = new Simulation(workload, cluster, options);
  const steps = simulation.steps();
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    await simulation.migrate(step.value);
  }
}

class Simulation extends SimulationBook {
  /** Refused SLA requests whose jobs went to the queue as best-effort work (`refused: 'queue'`). */
  private queuedAfterRefusal = 0;

  /** The event loop; it yields the time of each point where the Migration Controller is to run (with peers only). */
  *steps(): Generator<Instant, SimReport, void> {
    let next = 0;
    const every = Math.max(1, this.options.progressEvery ?? 500);
    let drainLimit = Number.POSITIVE_INFINITY;
    let stoppedBy: SimReport['span']['stoppedBy'] = this.until !== undefined ? 'until' : 'end of workload';
    for (;;) {
      const ext = this.external[next];
      const dyn = this.queue.peek((top) => {
        const track = this.tracks.get(top.id);
        return !track || track.version !== top.version || track.completion !== top.t;
      });
      if (!ext && !dyn) break;
      // Every job settled: failures and repairs still to come change nothing the report counts, and the run's
      // span (the utilisation's denominator) ends with the last job.
      if (this.until === undefined && this.results.settled === this.workload.jobs.length + this.queuedAfterRefusal)
        break;
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
        this.queue.pop();
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
    this.options.onProgress?.({
      settled: this.results.settled,
      total: this.workload.jobs.length + this.queuedAfterRefusal,
      simulatedSeconds: this.seconds(this.now),
      events: this.events,
      done,
    });
  }

  /** True when no job can complete and none waits for its deadline in P. */
  private idle(): boolean {
    for (const track of this.tracks.values()) if (track.completion !== undefined || track.deadlineTick) return false;
    return true;
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
        this.queue.push({
          t: event.t + this.horizonMs,
          rank: 1,
          key: event.node,
          type: 'renewal',
          node: event.node,
          since: event.t,
        });
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
        this.queue.done(event);
        if (this.failedSince.get(event.node) === event.since) {
          // The failure block ends and the node is still out: the scheduler takes it out for another horizon.
          this.counters.renewals++;
          this.markHits(event.node, event.t);
          this.advanceTo(event.t);
          this.queue.push({ ...event, t: event.t + this.horizonMs });
        }
        break;
      case 'deadline':
        this.queue.done(event);
        this.advanceTo(event.t);
        break;
    }
    this.refresh();
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
      this.results.record({ ...this.results.base(input), status: 'rejected', reason: decision.reason });
      if (this.options.refused === 'queue' && (input.kind === 'deadline' || input.kind === 'reservation')) {
        this.queuedAfterRefusal++;
        this.arrive(queuedInstead(input), t);
      }
      return;
    }
    const job = decision.job;
    const shape = shapeOf(spec, this.cluster.timing);
    this.tracks.set(spec.id, {
      input,
      spec,
      shape,
      workShare: Math.min(1, input.runtime / input.estimate),
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

  protected afterReplan(report: ReplanReport): void {
    for (const id of report.suspended) {
      const track = this.tracks.get(id);
      if (!track) continue;
      track.suspensions++;
      track.suspendedAt.push(new Date(this.now));
    }
  }

  /** Re-derives completions of jobs whose plan changed, and waits for the deadlines of jobs in P. */
  protected refresh(): void {
    for (const job of this.pm.allJobs()) {
      const track = this.tracks.get(job.spec.id);
      if (!track) continue;
      if (job.segments === track.segRef && job.segments.length === track.segLen && job.problem === track.problem)
        continue;
      track.segRef = job.segments;
      track.segLen = job.segments.length;
      track.problem = job.problem;
      this.results.notePlanChange(track, job, this.now);
      if (job.segments.filter((s) => s.start >= this.now).length >= 2) track.partial = true;
      const completion = completionOf(track, job, this.now, this.counters);
      if (completion !== track.completion) {
        track.completion = completion;
        track.version++;
        if (completion !== undefined)
          this.queue.push({
            t: completion,
            rank: 0,
            key: job.spec.id,
            type: 'completion',
            id: job.spec.id,
            version: track.version,
          });
      }
      const due = job.spec.deadline ?? job.spec.window?.end;
      track.deadlineTick = false;
      if (job.problem !== undefined && due !== undefined && !job.segments.some((s) => s.end > this.now)) {
        track.deadlineTick = true;
        this.queue.push({ t: Math.max(due, this.now), rank: 2, key: job.spec.id, type: 'deadline', id: job.spec.id });
      }
    }
  }

  /**
   * When the job's work is done in its current plan: the segment in which its work
   * (in compute intervals) is reached, its initialisation, the compute and the planned
   * checkpoints before that point, and deinitialisation. A reservation's holder releases
   * its nodes after its runtime, at the latest at the window's end.
   */
  // ---------------------------------------------------------------- migration

  // ---------------------------------------------------------------- outcomes

  // ---------------------------------------------------------------- report
}

/**
 * The job of a refused SLA request as its user submits it to the queue instead: best-effort, no deadline, window or
 * penalty, checkpointed if it asked for any fault tolerance; its outcome names the request it stands for.
 */
function queuedInstead(input: WorkloadJob): WorkloadJob {
  const { deadline: _deadline, window: _window, ...job } = input;
  return {
    ...job,
    id: queuedId(input.id),
    kind: 'best-effort',
    level: input.level === 'Legacy' ? 'Legacy' : 'Standard',
    penalty: 0,
    queuedFor: input.id,
  };
}
