import type { CheckpointPlan } from './checkpoint-plan.js';
import {
  checkpointPlanAt,
  intervalsWithin,
  pieceMs,
  preparationMs,
  releaseMs,
  securedIntervals,
  totalIntervals,
  withOptimumCount,
  type JobShape,
} from './job-timing.js';
import { failureGroupOf } from './failure-rate.js';
import type { ClusterNode, Instant, JobSpec, PlannedJob, Segment } from './model.js';
import { nodeList } from './model.js';
import { PlanBook } from './plan-book.js';
import { at, isBestEffort, totalIntervalsOf, type AdmitOptions, type Need, type Placement } from './plan-book.js';

/**
 * Where a job can go (the second layer): validating a request, its need, slots on the nodes,
 * reservations and runs with their checkpoint plans, and best-effort jobs giving way (figure
 * 3.4 inserts B last).
 */
export abstract class PlanPlacement extends PlanBook {
  // ---------------------------------------------------------------- placement
  protected validate(spec: JobSpec): string | undefined {
    // No time or count that is not a finite number enters the capacity profile: it would corrupt it for every later
    // job.
    const numbers = [
      spec.nodes,
      spec.runtimeSeconds,
      spec.arrival,
      spec.earliestStart,
      spec.deadline,
      spec.window?.start,
      spec.window?.end,
      spec.storageGB,
    ];
    if (numbers.some((n) => n !== undefined && !Number.isFinite(n)))
      return 'the request holds a time or a count that is not a finite number';
    if (spec.window && spec.window.end <= spec.window.start) return 'the reservation window ends before it starts';
    const usable = this.eligibleFor(spec).length;
    if (spec.nodes < 1) return 'a job needs at least one node';
    if (spec.nodes + this.shapeFor(spec).spare > usable) {
      const spare = this.shapeFor(spec).spare;
      const policies = spec.requirements.securityPolicies;
      const hosts = spec.requirements.candidateHosts;
      const policyNote =
        (policies
          ? ` (sla:SecurityPolicy ${policies.join(', ')}: ` +
            `${this.mm.eligible({ securityPolicies: policies }, true).length} node(s) of the cluster meet it)`
          : '') +
        (hosts
          ? ` (jsdl:CandidateHosts ${hosts.join(', ')}: ` +
            `${this.mm.eligible({ candidateHosts: hosts }, true).length} of them are nodes of the cluster)`
          : '');
      return (
        `${spec.nodes} nodes${spare ? ` plus ${spare} spare node(s) for ${spec.level} service` : ''} ` +
        `requested but the cluster has ${usable} ` +
        `${usable === this.cluster.nodes.length ? 'nodes' : 'nodes that meet the requirements'}` +
        (spec.prepared
          ? ' kept prepared for interactive sessions'
          : isBestEffort(spec)
            ? ''
            : ' available to SLA jobs') +
        `${policyNote}`
      );
    }
    if (spec.requirements.interconnect !== undefined) {
      const largest = this.mm.largestIsland(this.eligibleFor(spec));
      const spare = this.shapeFor(spec).spare;
      if (spec.nodes + spare > largest) {
        return (
          `${spec.nodes + spare} nodes on ${spec.requirements.interconnect} must share one interconnect ` +
          `island, but the largest suitable island has ${largest}`
        );
      }
    }
    if (spec.window) {
      if (spec.window.end <= spec.window.start)
        return `reservation window ends (${at(spec.window.end)}) before it starts (${at(spec.window.start)})`;
      if (spec.window.start < this.now)
        return `reservation window starts in the past (${at(spec.window.start)}, now ${at(this.now)})`;
      return undefined;
    }
    if (!(spec.runtimeSeconds > 0))
      return 'a runtime estimate (sla:RuntimeEstimate) or a reservation window is required to plan the job';
    if (spec.deadline !== undefined && spec.deadline <= this.now)
      return `deadline ${at(spec.deadline)} has already passed (now ${at(this.now)})`;
    if (spec.level === 'Full' && this.cluster.peerStandbyNodes < spec.nodes) {
      return (
        `Full service needs ${spec.nodes} standby nodes reserved at a peer provider, but ` +
        (this.cluster.peerStandbyNodes === 0
          ? 'no peer standby capacity is configured'
          : `only ${this.cluster.peerStandbyNodes} are configured`)
      );
    }
    return undefined;
  }

  protected needFor(spec: JobSpec, shape: JobShape, lengthMs: number, replacing?: string): Need {
    return {
      nodes: spec.nodes,
      spare: shape.spare,
      eligible: this.eligibleFor(spec),
      oneIsland: spec.requirements.interconnect !== undefined,
      lengthMs,
      ...(replacing !== undefined ? { replacing } : {}),
      displaceWaiting: !isBestEffort(spec),
    };
  }

  /** The whole placement of a new job as the rules of its kind and level demand, or why not. */
  protected findPlacement(spec: JobSpec, now: Instant, options: AdmitOptions): Placement | { reason: string } {
    const planned = this.shapeFor(spec);
    const shape = options.optimumCount ? withOptimumCount(planned) : planned;
    if (spec.window) {
      // A new promise must leave time to prepare its nodes; a renegotiated one keeps the preparation it has.
      const prepare = preparationMs(shape, false, spec.prepared);
      if (options.replacing === undefined && spec.window.start - prepare < now)
        return { reason: tooSoonReason(spec.window.start, prepare, now) };
      return this.placeReservation(
        spec,
        shape,
        spec.window.start,
        spec.window.end,
        options.replacing,
        0,
        totalIntervalsOf(shape, spec, spec.window.start),
      );
    }
    const from = Math.max(now, spec.earliestStart ?? now);
    const plan = checkpointPlanAt(spec, shape, from);
    if ('reason' in plan) return { reason: this.deadlineReason(spec, plan.reason) };
    const placed = this.placeRun(spec, shape, plan, from, plan.count + 1, false, options.replacing);
    if (!('reason' in placed) || shape.countRule.shortestBooking || spec.deadline === undefined) return placed;
    return this.placeLater(spec, shape, from, placed, options.replacing);
  }

  /**
   * Checkpoints by need for a job whose nodes are not free at once: the fewest checkpoints
   * that keep the deadline from `from` leave it no later start. The optimum (3.16) allows the
   * latest start; where it finds one, the job takes the fewest checkpoints that keep the
   * deadline from there (a shorter booking at the same start, so it fits where the optimum's
   * did), else the optimum's placement stands.
   */
  private placeLater(
    spec: JobSpec,
    shape: JobShape,
    from: Instant,
    refused: { reason: string },
    replacing: string | undefined,
  ): Placement | { reason: string } {
    const optimum = checkpointPlanAt(spec, withOptimumCount(shape), from);
    if ('reason' in optimum) return refused;
    const latest = this.placeRun(spec, shape, optimum, from, optimum.count + 1, false, replacing);
    if ('reason' in latest) return latest;
    const start = latest.segments[0]?.start ?? from;
    const fewest = checkpointPlanAt(spec, shape, start);
    if ('reason' in fewest || fewest.count >= optimum.count) return latest;
    const placed = this.placeRun(spec, shape, fewest, start, fewest.count + 1, false, replacing);
    return 'reason' in placed ? latest : placed;
  }

  /**
   * A reservation keeps its window; only the nodes may change. The booking begins with the
   * nodes' preparation before `start` (from now at the earliest) and ends with their release
   * after `end`: the promise covers [start, end), the work to keep it is booked around it.
   */
  protected placeReservation(
    spec: JobSpec,
    shape: JobShape,
    start: Instant,
    end: Instant,
    replacing: string | undefined,
    doneIntervals: number,
    total: number,
  ): Placement | { reason: string } {
    const checkpoints = checkpointPlanAt({ ...spec, deadline: undefined }, shape, start);
    if ('reason' in checkpoints) return checkpoints;
    const restart = doneIntervals > 0;
    const bookedFrom = Math.max(this.now, start - preparationMs(shape, restart, spec.prepared));
    const bookedTo = end + releaseMs(shape);
    const need = this.needFor(spec, shape, bookedTo - bookedFrom, replacing);
    // The site's spares beside the level's where nodes are free for them; where not, the reservation as its level says.
    const extra = this.cluster.timing.reservationSpareNodes;
    const nodes =
      (extra > 0 ? this.mapAt({ ...need, spare: need.spare + extra }, bookedFrom) : undefined) ??
      this.mapAt(need, bookedFrom);
    if (!nodes) {
      const free = this.freeThroughout(need, bookedFrom, bookedTo);
      return {
        reason:
          `${spec.nodes}${shape.spare ? ` + ${shape.spare} spare` : ''} nodes are not free from ${at(start)} ` +
          `to ${at(end)}: ` +
          `${free} of ${need.eligible.length} ` +
          `${need.eligible.length === this.cluster.nodes.length ? '' : 'suitable '}nodes are free throughout ` +
          `that window ` +
          `with its preparation and release (${at(bookedFrom)} to ${at(bookedTo)})`,
      };
    }
    const remote = this.remoteCheck(spec, bookedFrom, bookedTo);
    if (remote) return { reason: remote };
    return {
      checkpoints,
      segments: [this.segment(spec, nodes, bookedFrom, bookedTo, restart, Math.max(1, total - doneIntervals))],
    };
  }

  /** A run of `intervals` intervals from `from` on: earliest fit, within the deadline for SLA jobs. */
  protected placeRun(
    spec: JobSpec,
    shape: JobShape,
    plan: CheckpointPlan,
    from: Instant,
    intervals: number,
    restart: boolean,
    replacing?: string,
    outagesLeft?: number,
  ): Placement | { reason: string } {
    const outages = outagesLeft ?? shape.timing.outages;
    const lengthMs = pieceMs(shape, plan, intervals, restart, shape.booksWorstCase ? outages : 0, true);
    const worstMs = pieceMs(shape, plan, intervals, restart, shape.deadlineCoversOutages ? outages : 0, true);
    const need = this.needFor(spec, shape, lengthMs, replacing);
    const latestStart =
      spec.deadline !== undefined && spec.kind === 'Deadline' ? spec.deadline - Math.max(lengthMs, worstMs) : undefined;
    const standbyFrom =
      spec.level === 'Full'
        ? (t: Instant) => this.remote.firstFit(t, lengthMs, this.cluster.peerStandbyNodes - spec.nodes)
        : undefined;
    const found = this.findSlot(need, from, latestStart, this.standbyFits(spec, lengthMs), standbyFrom);
    if (!found) {
      if (latestStart !== undefined && latestStart < from) {
        return { reason: this.lateReason(spec, plan, from + Math.max(lengthMs, worstMs), shape, outages) };
      }
      const earliest = this.findSlot({ ...need }, from);
      if (earliest && spec.deadline !== undefined)
        return { reason: this.lateReason(spec, plan, earliest.start + Math.max(lengthMs, worstMs), shape, outages) };
      return {
        reason:
          this.remoteCheck(spec, from, from + lengthMs) ??
          `${spec.nodes} nodes are never free for ${Math.ceil(lengthMs / 1000)} s`,
      };
    }
    return {
      checkpoints: plan,
      segments: [this.segment(spec, found.nodes, found.start, found.start + lengthMs, restart, intervals)],
    };
  }

  protected lateReason(
    spec: JobSpec,
    plan: CheckpointPlan,
    completion: Instant,
    shape: JobShape,
    outages = shape.timing.outages,
  ): string {
    const how = shape.checkpointed
      ? `with ${plan.count} checkpoint${plan.count === 1 ? '' : 's'}` +
        (shape.deadlineCoversOutages ? ` and ${outages} covered outage${outages === 1 ? '' : 's'}` : '')
      : 'without checkpoints';
    return this.deadlineReason(
      spec,
      `earliest ${shape.deadlineCoversOutages ? 'worst-case ' : ''}completion ${how} is ${at(completion)} on ` +
        `${spec.nodes} nodes`,
    );
  }

  protected deadlineReason(spec: JobSpec, why: string): string {
    return spec.deadline !== undefined ? `deadline ${at(spec.deadline)} cannot be met: ${why}` : why;
  }

  protected segment(
    spec: JobSpec,
    nodes: number[],
    start: Instant,
    end: Instant,
    restart: boolean,
    intervals: number,
  ): Segment {
    const ids = nodes.map((n) => this.cluster.nodes[n]?.id as string);
    return {
      start,
      end,
      nodes: nodeList(ids.slice(0, spec.nodes)),
      spare: nodeList(ids.slice(spec.nodes)),
      restart,
      intervals,
    };
  }

  /** A slot search's test that a run of `lengthMs` from a start leaves the peer's standby nodes enough (Full). */
  protected standbyFits(spec: JobSpec, lengthMs: number): (start: Instant) => boolean {
    return (start) => this.remoteCheck(spec, start, start + lengthMs) === undefined;
  }

  /** Full: the peer's standby nodes over the job's slot. */
  protected remoteCheck(spec: JobSpec, start: Instant, end: Instant): string | undefined {
    if (spec.level !== 'Full') return undefined;
    const free = this.cluster.peerStandbyNodes - this.remote.maxOver(start, end);
    return free >= spec.nodes
      ? undefined
      : `Full service needs ${spec.nodes} standby nodes at a peer provider from ${at(start)} to ${at(end)}; ` +
          `${free} of ${this.cluster.peerStandbyNodes} are free then`;
  }

  /**
   * The earliest start >= from (and <= latestStart) where the MM can map the need; the
   * PM's profile skips instants where too many nodes are busy, the MM's search instants
   * where too few of the same nodes are free throughout, and `earliest` (when given)
   * instants where a constraint of the caller's fails; `accept` has the last word.
   * Waiting best-effort jobs are not counted against SLA jobs: they move.
   */
  findSlot(
    need: Need,
    from: Instant,
    latestStart?: Instant,
    accept?: (start: Instant) => boolean,
    earliest?: (t: Instant) => Instant,
  ): { start: Instant; nodes: number[] } | undefined {
    const total = this.cluster.nodes.length;
    const slack = need.replacing !== undefined ? this.peakNodesOf(need.replacing) : 0;
    const filter = need.displaceWaiting ? this.mm.firmProfile : this.mm.profile;
    // Waiting best-effort jobs are soft in the Machine Manager: SLA searches look past them.
    const search = this.mm.search(need.nodes + need.spare, need.eligible, need.lengthMs, {
      ...(need.replacing !== undefined ? { ignoreOwner: need.replacing } : {}),
      oneIsland: need.oneIsland,
      soft: need.displaceWaiting,
      ...(latestStart !== undefined ? { limit: latestStart } : {}),
    });
    const busyAllowed = total - need.nodes - need.spare + slack;
    let t = from;
    try {
      for (;;) {
        t = filter.firstFit(t, need.lengthMs, busyAllowed);
        if (latestStart !== undefined && t > latestStart) return undefined;
        // A constraint of the caller's that can say where it holds next (a peer's standby nodes).
        const later = earliest?.(t) ?? t;
        if (later > t) {
          t = later;
          continue;
        }
        const mapped = search.at(t);
        if ('next' in mapped) {
          // Not enough of the same nodes free throughout: no start before `next` works either.
          if (mapped.next === Number.POSITIVE_INFINITY) return undefined;
          t = mapped.next;
          continue;
        }
        if (!accept || accept(t))
          return { start: t, nodes: this.spreadSpares(need, mapped.nodes, t, t + need.lengthMs) };
        // The next instant anything changes: a booking of any kind ends or begins.
        const next = Math.min(this.mm.profile.nextChangeAfter(t) ?? Infinity, filter.nextChangeAfter(t) ?? Infinity);
        if (next === Infinity) return undefined; // nothing changes after t: what fails now fails forever
        t = next;
      }
    } finally {
      search.done(); // its arrays go to the next search
    }
  }

  protected mapAt(need: Need, start: Instant): number[] | undefined {
    const end = start + need.lengthMs;
    // Waiting best-effort jobs are soft in the Machine Manager: SLA placements look past them.
    const options = {
      ...(need.replacing !== undefined ? { ignoreOwner: need.replacing } : {}),
      oneIsland: need.oneIsland,
      soft: need.displaceWaiting,
    };
    const nodes = this.mm.map(need.nodes + need.spare, need.eligible, start, end, options);
    return nodes && this.spreadSpares(need, nodes, start, end);
  }

  /**
   * Spares where a failure of the nodes they stand in for is least likely to take them too: each spare that shares a
   * failure group with the job's nodes is exchanged, where one is free throughout, for a node of a group the job does
   * not use yet (of its island when it needs one). A group failing at once (a chassis, a power feed) then leaves the
   * spares standing.
   */
  private spreadSpares(need: Need, nodes: number[], start: Instant, end: Instant): number[] {
    if (need.spare === 0) return nodes;
    const groupOf = (n: number) => failureGroupOf(this.cluster.nodes[n] as ClusterNode);
    const islandOf = (n: number) => this.cluster.nodes[n]?.island;
    const island = islandOf(nodes[0] as number);
    const used = new Set(nodes.slice(0, need.nodes).map(groupOf));
    const taken = new Set(nodes);
    const spread = [...nodes];
    for (let i = need.nodes; i < spread.length; i++) {
      const other = !used.has(groupOf(spread[i] as number))
        ? undefined
        : need.eligible.find(
            (n) =>
              !taken.has(n) &&
              !used.has(groupOf(n)) &&
              (!need.oneIsland || islandOf(n) === island) &&
              !this.failed.has(n) &&
              this.mm.isFree(n, start, end, need.replacing, undefined, need.displaceWaiting),
          );
      if (other !== undefined) {
        taken.add(other);
        spread[i] = other;
      }
      used.add(groupOf(spread[i] as number));
    }
    return spread;
  }

  protected freeThroughout(need: Need, start: Instant, end: Instant): number {
    return need.eligible.filter((n) => this.mm.isFree(n, start, end, need.replacing, undefined, need.displaceWaiting))
      .length;
  }

  /**
   * A piece that yields, cut where another booking now takes one of its nodes: the whole intervals (with their
   * checkpoints and release) that fit before then; unchanged when nothing does before its end.
   */
  private keptUntilNeeded(job: PlannedJob, shape: JobShape, piece: Segment): Segment {
    const nothingMakesWay = () => false;
    let end = piece.end;
    for (const n of this.nodeIndices(piece))
      end = Math.min(end, this.mm.timeline(n).freeUntil(this.now, nothingMakesWay));
    if (end >= piece.end) return piece;
    const intervals = intervalsWithin(shape, job.checkpoints, end - piece.start, piece.restart, piece.intervals);
    return { ...piece, end, intervals };
  }

  /**
   * Step 7: best-effort jobs (unbooked by the caller) go back first come first served, into the earliest gap from now.
   */
  protected replaceBestEffort(ids: string[]): string[] {
    const moved: string[] = [];
    for (const id of ids) {
      const job = this.jobs.get(id) as PlannedJob;
      const shape = this.shape(job);
      const past = job.segments.filter((s) => s.end <= this.now);
      let from = Math.max(this.now, job.spec.earliestStart ?? this.now);
      // A piece under way that yields goes on until what displaced it needs its nodes, with what it secures by then.
      const yielding = job.segments.find((s) => s.yields && s.start < this.now && s.end > this.now);
      if (yielding) {
        const kept = this.keptUntilNeeded(job, shape, yielding);
        past.push(kept);
        if (kept.end > this.now) this.bookSegment(job, kept);
        from = Math.max(from, kept.end);
      }
      const secured = yielding ? past.reduce((sum, s) => sum + s.intervals, 0) : securedIntervals(job, shape, this.now);
      const remaining = totalIntervals(job) - secured;
      if (remaining <= 0) {
        // All its work is secured (it was past its expected end): it has finished.
        job.segments = past;
        this.segmentsChanged(job);
        delete job.problem;
        continue;
      }
      const placed = this.placeRun(job.spec, shape, job.checkpoints, from, remaining, secured > 0);
      if ('reason' in placed) {
        this.setProblem(job, placed.reason); // only when the cluster has no suitable nodes left at all
        job.segments = past;
        this.segmentsChanged(job);
        continue;
      }
      job.segments = [...past, ...placed.segments];
      this.segmentsChanged(job);
      for (const s of placed.segments) this.bookSegment(job, s);
      this.syncSoftness(job);
      delete job.problem;
      moved.push(id);
    }
    return moved;
  }
}

/** Why a promised start is too soon: the nodes could not be ready by then. */
export function tooSoonReason(start: Instant, prepareMs: number, now: Instant): string {
  return (
    `the window starts at ${at(start)}, but its nodes need ${prepareMs / 1000} s of preparation before it ` +
    `(node initialisation, storage, mount and hand-over, the site's timing model): the earliest start the ` +
    `site can promise is ${at(now + prepareMs)}`
  );
}
