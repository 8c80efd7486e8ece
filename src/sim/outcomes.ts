import type { Outage } from '../domain/execution.js';
import type { CheckpointPlan } from '../scheduler/checkpoint-plan.js';
import { checkpointsWritten, securedIntervals, segmentPhases, type JobShape } from '../scheduler/job-timing.js';
import type { Instant, JobSpec, PlannedJob, Segment } from '../scheduler/model.js';
import { liabilityOf, type LiabilityFacts, type PlanChange } from './liability.js';
import type { MigrationTally, Saved } from './migration.js';
import { finishPoint, firstGap, workIntervals } from './plan-points.js';
import type { JobOutcome, JobStatus, Violation, ViolationType } from './report.js';
import type { WorkloadJob } from './workload.js';

/** What the simulator keeps per accepted job beside the plan. */
export interface Track {
  input: WorkloadJob;
  spec: JobSpec;
  shape: JobShape;
  /**
   * The share of its estimate the job's run needs (runtime / estimate, at most 1): its work in compute intervals is
   * this share of its plan's intervals, whatever count a re-plan gives it (`workIntervals`).
   */
  workShare: number;
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

/**
 * The simulator's books on its jobs (simulator.ts): each job's outcome as it leaves the plan
 * (completed, dropped, moved to a peer, or planned when the run stops), the violations with
 * the penalties the liability rules make the provider pay, and the node time they used.
 */
export class SimOutcomes {
  readonly outcomes = new Map<string, JobOutcome>();
  readonly violations: Violation[] = [];
  /** Jobs whose outcome is final (rejected, completed, dropped). */
  settled = 0;
  busyMs = 0;
  spareMs = 0;
  usefulMs = 0;
  /** Of usefulMs: the work of SLA jobs (reservations and deadline jobs). */
  slaUsefulMs = 0;
  /** Of usefulMs: what completed jobs ran up to the last arrival (each job's last runtime's worth before its end). */
  usefulToLastArrivalMs = 0;
  /** Node time spent writing the checkpoints taken. */
  checkpointNodeMs = 0;
  /** When the last job completed here (simulated seconds). */
  lastCompletionSeconds = 0;
  restartsOnSpare = 0;
  partialJobs = 0;

  constructor(
    private readonly seconds: (t: Instant) => number,
    private readonly counters: { lateWithoutProblem: number },
    private readonly tally: MigrationTally | undefined,
    /** The last arrival (simulated seconds): the steady state's end. */
    readonly lastArrivalSeconds: number,
  ) {}

  base(input: WorkloadJob): JobOutcome {
    return {
      id: input.id,
      kind: input.kind,
      level: input.level,
      nodes: input.nodes,
      status: 'rejected',
      arrival: input.arrival,
      ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
      ...(input.queuedFor !== undefined ? { queuedFor: input.queuedFor } : {}),
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

  record(outcome: JobOutcome): void {
    this.outcomes.set(outcome.id, outcome);
    if (outcome.status === 'rejected' || outcome.status === 'completed' || outcome.status === 'dropped') this.settled++;
  }

  /**
   * A job leaves the plan (completed, dropped, or moved to a peer where it completes by
   * `peer.end`) or the run stops with it planned. Its pieces here count up to `at`.
   */
  finish(
    track: Track,
    job: PlannedJob,
    status: JobStatus,
    at: Instant,
    reason?: string,
    peer?: { peer: string; price: number; end: Instant },
  ): void {
    const input = track.input;
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
      const found = finishPoint(track.shape, workIntervals(track, job), job);
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
      return (
        i > 0 &&
        s.restart &&
        before !== undefined &&
        s.start === before.end &&
        before.spare.some((n) => s.nodes.includes(n))
      );
    }).length;
    const first = executed[0];
    // A promise with a start time is prepared before it: its holder has the nodes from the hand-over (the window's
    // start, as planned).
    const window = job.spec.window;
    const handedOver = (s: Segment) => segmentPhases(job, track.shape, s).readyAt;
    const outcome: JobOutcome = {
      ...this.base(input),
      status,
      ...(first ? { start: this.seconds(window ? Math.max(window.start, handedOver(first)) : first.start) } : {}),
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
      const promised = window as { start: Instant; end: Instant };
      // Each piece holds the nodes for its holder from its hand-over: a piece re-placed after a failure is prepared
      // first, and that is a gap, unless the holder goes on with nodes it held in the piece before (a failed node's
      // replacement, or freed nodes, joining the survivors).
      const held = executed.map((s, i) => ({ ...s, start: goesOn(executed[i - 1], s) ? s.start : handedOver(s) }));
      const gap =
        status === 'completed' && !peer ? firstGap(held, promised.start, Math.min(at, promised.end)) : undefined;
      outcome.honoured = status === 'completed' && gap === undefined;
      if (status === 'dropped') {
        violation = 'left-in-P';
        detail = reason ?? 'left the plan unsolved';
      } else if (gap !== undefined) {
        violation = 'reservation-not-honoured';
        detail =
          `no nodes held from ${this.seconds(gap.from)} s to ${this.seconds(gap.to)} s of the window ` +
          `${input.window?.start} s to ${input.window?.end} s`;
      }
    }
    if (violation) {
      outcome.violation = violation;
      const rule = liabilityOf(this.factsOf(track, job, at));
      outcome.paid = rule.liable ? input.penalty : 0;
      this.violations.push({
        id: input.id,
        kind: input.kind,
        level: input.level,
        type: violation,
        detail,
        penalty: input.penalty,
        paid: outcome.paid,
        liability: rule.rule,
      });
      this.tally?.violated(input.id);
    }
    this.record(outcome);
    this.busyMs += busy * 1000;
    this.checkpointNodeMs += checkpoints * track.shape.timing.tCp * input.nodes * 1000;
    this.spareMs += spare * 1000;
    // A migrated job's work is done at the peer, not here.
    if (status === 'completed' && !peer) {
      const work = input.nodes * input.runtime * 1000;
      this.usefulMs += work;
      if (input.kind === 'deadline' || input.kind === 'reservation') this.slaUsefulMs += work;
      const before = this.workBefore(this.lastArrivalSeconds, input.runtime, executed, job, track.shape, at);
      this.usefulToLastArrivalMs += input.nodes * before * 1000;
      if (outcome.end !== undefined) this.lastCompletionSeconds = Math.max(this.lastCompletionSeconds, outcome.end);
    }
    this.restartsOnSpare += onSpare;
    if (track.partial) this.partialJobs++;
  }

  /**
   * Seconds of a completed job's `runtime` computed before `limit` (seconds): its work is taken to be the last
   * `runtime` seconds its pieces computed (each from its nodes' readiness to its release, the last to `at`), so a
   * job that ran in pieces counts the work of each piece where it ran.
   */
  private workBefore(
    limit: number,
    runtime: number,
    executed: readonly Segment[],
    job: PlannedJob,
    shape: JobShape,
    at: Instant,
  ): number {
    let left = runtime;
    let before = 0;
    for (let i = executed.length - 1; i >= 0 && left > 0; i--) {
      const phases = segmentPhases(job, shape, executed[i] as Segment);
      const to = this.seconds(i === executed.length - 1 ? at : Math.min(phases.releaseFrom, at));
      const computed = Math.min(left, Math.max(0, to - this.seconds(phases.readyAt)));
      before += Math.max(0, Math.min(to, limit) - (to - computed));
      left -= computed;
    }
    return before;
  }

  /** The facts the liability rules judge the job on, up to `at`. */
  factsOf(track: Track, job: PlannedJob, at: Instant): LiabilityFacts {
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
  notePlanChange(track: Track, job: PlannedJob, at: Instant): void {
    if (
      track.planChange ||
      (job.checkpoints.count === track.agreed.count && job.checkpoints.intervalSeconds === track.agreed.intervalSeconds)
    )
      return;
    track.planChange = {
      at: new Date(at),
      agreed: track.agreed,
      changed: { ...job.checkpoints },
      secured: securedIntervals(job, track.shape, at),
    };
  }

  /**
   * A job's penalty, and what of it the liability rules would make the provider pay if its
   * promise broke at `t` (`declined`: as if the provider had kept it from a peer that had room).
   */
  stakeOf(track: Track | undefined, job: PlannedJob | undefined, t: Instant, declined?: string): Saved {
    if (!track || !job) return { owed: 0, payable: 0 };
    const owed = track.input.penalty;
    const facts = this.factsOf(track, job, t);
    if (declined !== undefined) facts.gridDeclined = declined;
    return { owed, payable: owed > 0 && liabilityOf(facts).liable ? owed : 0 };
  }
}

/** The holder keeps nodes of the piece before without a break into this one. */
function goesOn(before: Segment | undefined, piece: Segment): boolean {
  return before !== undefined && before.end >= piece.start && piece.nodes.some((n) => before.nodes.includes(n));
}
