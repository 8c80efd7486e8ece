import { pieceMs, securedIntervals, totalIntervals, type JobShape } from './job-timing.js';
import type { Instant, PlannedJob, ReplanReport, Segment } from './model.js';
import { nodeList } from './model.js';
import { PlanReplacement, type MadeWay } from './plan-replacement.js';
import { at, isBestEffort, type Need } from './plan-book.js';

/** Slot searches for earlier starts an event may make per node it frees (docs/scheduler.md, "A job finishes early"). */
const searchesPerFreedNode = 32;

/**
 * What a failure does to one job, and what saves it (the third layer): a spare node, the
 * surviving nodes, a waiting node replaced; cutting a job at its last checkpoint; partial
 * execution in gaps; suspension of best-effort (then SLA) jobs to save a deadline; filling
 * freed gaps.
 */
export abstract class PlanSuspension extends PlanReplacement {
  /** Solves the jobs in P (plan-replanning.ts). */
  protected abstract solve(problems: string[], now: Instant, report: ReplanReport): string[];

  /** A failed spare (not a working node) is dropped; the job carries on with one spare fewer. */
  protected lostSpareOnly(job: PlannedJob, nodeId: string, now: Instant, madeWay: MadeWay): boolean {
    const current = job.segments.find((s) => s.end > now);
    if (!current || current.nodes.includes(nodeId) || !current.spare.includes(nodeId)) return false;
    for (const s of job.segments) if (s.end > now) s.spare = s.spare.filter((n) => n !== nodeId);
    const node = this.mm.nodeIndex(nodeId);
    this.mm.unbook(job.spec.id, now, node);
    if (job.spec.window) this.replaceSpare(job, node, now, madeWay);
    return true;
  }

  /**
   * A reservation whose spare failed takes a node free for the rest of its window as a new
   * spare, prepared from now: a second failure finds one as the first would have.
   */
  private replaceSpare(job: PlannedJob, failed: number, now: Instant, madeWay: MadeWay): void {
    const last = job.segments.at(-1);
    if (!last || last.end <= now) return;
    const from = Math.max(now, last.start);
    const free = this.replacementNode(job, failed, from, last.end, madeWay);
    if (free === undefined) return;
    this.mm.book(job.spec.id, [free], from, last.end);
    const spare = nodeList([...last.spare, this.cluster.nodes[free]?.id as string]);
    // The piece goes on as it was; from the new spare's arrival it has one more.
    job.segments =
      from > last.start
        ? [
            ...job.segments.slice(0, -1),
            { ...last, end: from, intervals: 0 },
            { ...last, start: from, spare, continues: true },
          ]
        : [...job.segments.slice(0, -1), { ...last, spare }];
    this.segmentsChanged(job);
  }

  /**
   * Enhanced and Full: a job that has not started keeps its slot when one of its working
   * nodes fails. A node free throughout the slot takes the failed one's place, or else one
   * of the job's own spare nodes does, which uses up one covered outage. Re-planning it
   * from scratch instead could lose the slot to other problems, though the spares were
   * booked for exactly this. False when neither works: the job is then re-planned.
   */
  protected replaceWaitingNode(job: PlannedJob, nodeId: string, node: number, now: Instant, madeWay: MadeWay): boolean {
    if (job.segments.some((s) => s.start <= now && now < s.end)) return false; // running: restartOnSpare's case
    const future = job.segments.filter((s) => s.end > now && (s.nodes.includes(nodeId) || s.spare.includes(nodeId)));
    const segment = future[0];
    if (future.length !== 1 || !segment || segment.spare.length === 0 || !segment.nodes.includes(nodeId)) return false;
    const free = this.replacementNode(job, node, segment.start, segment.end, madeWay);
    if (free === undefined && job.outagesLeft <= 0) return false;
    this.mm.unbook(job.spec.id, now, node);
    let replaced: Segment;
    if (free !== undefined) {
      const freeId = this.cluster.nodes[free]?.id as string;
      replaced = { ...segment, nodes: segment.nodes.map((n) => (n === nodeId ? freeId : n)) };
      this.mm.book(job.spec.id, [free], segment.start, segment.end);
    } else {
      const [spare, ...rest] = segment.spare as [string, ...string[]];
      replaced = { ...segment, nodes: segment.nodes.map((n) => (n === nodeId ? spare : n)), spare: rest };
      job.outagesLeft -= 1;
    }
    job.segments = job.segments.map((s) => (s === segment ? replaced : s));
    this.segmentsChanged(job);
    return true;
  }

  /**
   * Enhanced and Full: a running job whose working node failed restarts from its last
   * checkpoint on one of its own spare nodes, inside the time it booked for outages.
   */
  protected restartOnSpare(job: PlannedJob, nodeId: string, node: number, now: Instant): boolean {
    const index = job.segments.findIndex((s) => s.start <= now && now < s.end);
    const current = job.segments[index];
    if (
      !current ||
      job.spec.window ||
      current.spare.length === 0 ||
      job.outagesLeft <= 0 ||
      !current.nodes.includes(nodeId)
    )
      return false;
    const shape = this.shape(job);
    const secured = securedIntervals(job, shape, now);
    const securedBefore = securedIntervals({ ...job, segments: job.segments.slice(0, index) }, shape, now);
    const remaining = totalIntervals(job) - secured;
    if (remaining <= 0) return false; // past its expected end: it has finished, nothing to restart
    const needed = pieceMs(shape, job.checkpoints, remaining, true, job.outagesLeft - 1, true);
    if (now + needed > current.end) return false;
    const [spare, ...rest] = current.spare as [string, ...string[]];
    const nodes = current.nodes.map((n) => (n === nodeId ? spare : n));
    if (current.start === now) {
      // Nothing ran yet: the piece starts as planned with a spare in the failed node's place.
      job.segments.splice(index, 1, { ...current, nodes, spare: rest });
    } else {
      const restarted: Segment = {
        start: now,
        end: current.end,
        nodes,
        spare: rest,
        restart: true,
        intervals: remaining,
      };
      const ran: Segment = { ...current, end: now, intervals: secured - securedBefore };
      job.segments.splice(index, 1, ran, restarted);
    }
    job.outagesLeft -= 1;
    this.segmentsChanged(job);
    this.mm.unbook(job.spec.id, now, node);
    return true;
  }

  /**
   * A reservation (a fixed window: never moved, never suspended) whose working node failed
   * keeps its surviving nodes for the rest of the window: the failed node's place goes to
   * one of its spares, else to a node free throughout the rest of the window (not a buffer
   * node: those stay with best-effort work), else the reservation carries on with the
   * nodes it has left and is put in P at once, saying so (its owner is told; `regrow` gives
   * it a node back when one is repaired or freed). Giving it up whole would break the promise
   * for every node, and hand the survivors to other work; with fewer nodes only its
   * NodesAvailable objective is broken, for the time it is short.
   */
  protected keepSurvivors(job: PlannedJob, nodeId: string, node: number, now: Instant, madeWay: MadeWay): boolean {
    if (!job.spec.window || !job.segments.some((s) => s.end > now && s.nodes.includes(nodeId))) return false;
    // Decide every affected piece first: a piece left with no node at all is given up the usual way.
    const changes = job.segments.map((s) => {
      if (s.end <= now || !s.nodes.includes(nodeId)) return undefined;
      const from = Math.max(now, s.start);
      if (s.spare.length > 0)
        return { from, replacement: s.spare[0] as string, spare: s.spare.slice(1), book: undefined, prepared: true };
      const free = this.replacementNode(job, node, from, s.end, madeWay);
      return {
        from,
        replacement: free === undefined ? undefined : (this.cluster.nodes[free]?.id as string),
        spare: s.spare,
        book: free,
        prepared: false,
      };
    });
    if (changes.some((c) => c && c.replacement === undefined) && this.replacedWhole(job, node, madeWay)) return true;
    if (changes.some((c, i) => c && c.replacement === undefined && (job.segments[i] as Segment).nodes.length === 1))
      return false;
    const segments: Segment[] = [];
    job.segments.forEach((s, i) => {
      const change = changes[i];
      if (!change) {
        segments.push(s);
        return;
      }
      const { from, replacement, spare, book, prepared } = change;
      if (book !== undefined) this.mm.book(job.spec.id, [book], from, s.end);
      const nodes = s.nodes.flatMap((n) => (n !== nodeId ? [n] : replacement !== undefined ? [replacement] : []));
      // A spare was prepared with the other nodes: the holder goes on at once. A free node must be set up first.
      const { continues: _before, ...piece } = s;
      if (from > s.start)
        segments.push(
          { ...s, end: from, intervals: 0 },
          { ...piece, start: from, nodes, spare, restart: false, ...(prepared ? { continues: true as const } : {}) },
        );
      else segments.push({ ...s, nodes, spare });
    });
    job.segments = segments;
    this.segmentsChanged(job);
    this.mm.unbook(job.spec.id, now, node);
    const kept = segments.at(-1)?.nodes.length ?? 0;
    if (kept < job.spec.nodes)
      this.setProblem(
        job,
        `node ${nodeId} failed at ${at(now)}: the reservation keeps ${kept} of its ${job.spec.nodes} node(s) ` +
          `until a node is repaired or freed`,
      );
    return true;
  }

  /**
   * A reservation running short of nodes (`keepSurvivors` found none to replace a failed one)
   * takes free nodes back for the rest of its window: the last piece is split where they
   * join. True when it is whole again.
   */
  protected regrow(job: PlannedJob, now: Instant): boolean {
    const last = job.segments.at(-1);
    if (!job.spec.window || !last || last.end <= now || last.nodes.length >= job.spec.nodes) return false;
    const from = Math.max(now, last.start);
    const has = new Set(last.nodes);
    const island =
      last.nodes[0] !== undefined ? this.cluster.nodes[this.mm.nodeIndex(last.nodes[0])]?.island : undefined;
    const oneIsland = job.spec.requirements.interconnect !== undefined;
    const eligible = this.eligibleFor(job.spec).filter(
      (n) =>
        !has.has(this.cluster.nodes[n]?.id as string) &&
        (!oneIsland || island === undefined || this.cluster.nodes[n]?.island === island),
    );
    const found = this.mm.map(job.spec.nodes - last.nodes.length, eligible, from, last.end);
    if (!found) return false;
    this.mm.book(job.spec.id, found, from, last.end);
    const nodes = nodeList([...last.nodes, ...found.map((n) => this.cluster.nodes[n]?.id as string)]);
    const grown: Segment = { ...last, start: from, nodes };
    job.segments =
      from > last.start
        ? [...job.segments.slice(0, -1), { ...last, end: from, intervals: 0 }, grown]
        : [...job.segments.slice(0, -1), grown];
    this.segmentsChanged(job);
    delete job.problem;
    return true;
  }

  /** Stops a job at `now`: past segments stay, the running one is cut, future ones are dropped. */
  protected cut(job: PlannedJob, now: Instant): void {
    const shape = this.shape(job);
    const kept: Segment[] = [];
    let before = 0;
    for (const s of job.segments) {
      if (s.start >= now) break;
      if (s.end <= now) {
        kept.push(s);
        before += s.intervals;
        continue;
      }
      const secured = securedIntervals({ ...job, segments: [...kept, s] }, shape, now) - before;
      kept.push({ ...s, end: now, intervals: secured });
    }
    this.dropRemote(job);
    job.segments = kept;
    this.segmentsChanged(job);
    if (job.remoteStandby) for (const s of kept) this.remoteAdd(s.start, s.end, job.remoteStandby);
    this.mm.unbook(job.spec.id, now);
  }

  /**
   * Partial execution (3.5.3): pieces in gaps, each long enough to restart, compute at
   * least one interval and checkpoint it, then the rest as one run; all before the
   * deadline. Nothing is booked here; undefined if the pieces cannot finish in time.
   */
  protected placeInPieces(job: PlannedJob, shape: JobShape, from: Instant, remaining: number): Segment[] | undefined {
    const spec = job.spec;
    if (spec.deadline === undefined) return undefined;
    const plan = job.checkpoints;
    const pieces: Segment[] = [];
    const eligible = this.mm.eligible(spec.requirements, false);
    const trial = this.beginTrial();
    try {
      let left = remaining;
      let t = from;
      const onePiece = pieceMs(shape, plan, 1, true, 0, false);
      // Waiting best-effort jobs give way here too (their room counts as free).
      for (const gap of this.mm.firmProfile.windows(from, spec.deadline, this.cluster.nodes.length - spec.nodes)) {
        if (left === 0) break;
        const rest = pieceMs(shape, plan, left, true, shape.deadlineCoversOutages ? job.outagesLeft : 0, true);
        // the rest fits whole: placed below
        if (gap.start + rest <= spec.deadline && gap.end - gap.start >= rest) break;
        if (gap.end - gap.start < onePiece) continue;
        const nodes = this.mm.map(spec.nodes, eligible, gap.start, gap.end, { soft: true });
        if (!nodes) continue;
        const step = (plan.intervalSeconds + plan.checkpointSeconds) * 1000;
        const fit = Math.min(left - 1, Math.floor((gap.end - gap.start - (onePiece - step)) / step));
        if (fit < 1) continue;
        const end = gap.start + pieceMs(shape, plan, fit, true, 0, false);
        const segment = this.segment(spec, nodes, gap.start, end, true, fit);
        pieces.push(segment);
        // rolled back with the trial; solve displaces for real
        this.displaceWaiting(spec.id, gap.start, end, nodes, undefined);
        this.mm.book(spec.id, nodes, gap.start, end);
        left -= fit;
        t = end;
      }
      if (pieces.length === 0) return undefined;
      const tail = this.placeRun(spec, shape, plan, t, left, true, undefined, job.outagesLeft);
      if ('reason' in tail) return undefined;
      return [...pieces, ...tail.segments];
    } finally {
      this.rollbackTrial(trial);
    }
  }

  /**
   * Suspension by binary search over remaining area (3.5.2): running best-effort jobs
   * (or running non-reservation SLA jobs) ordered by remaining area, largest first; the
   * smallest percentage of that area whose suspension lets every problem be placed.
   * Reservation jobs are never suspended. Suspended SLA jobs keep what their checkpoints
   * secured and go to the head of S, placed before the problems.
   */
  protected suspendAndSolve(
    problems: string[],
    now: Instant,
    report: ReplanReport,
    which: 'best-effort' | 'sla',
  ): string[] {
    const candidates = this.startedJobs()
      .filter((j) => j.segments.some((s) => s.start <= now && now < s.end) && j.problem === undefined)
      .filter((j) => (which === 'best-effort' ? isBestEffort(j.spec) : j.spec.kind === 'Deadline'))
      .map((j) => ({ id: j.spec.id, area: this.remainingArea(j, now) }))
      .sort((a, b) => b.area - a.area || (a.id < b.id ? -1 : 1));
    if (candidates.length === 0) return problems;
    const totalArea = candidates.reduce((sum, c) => sum + c.area, 0);
    const prefix = (percent: number) => {
      const out: string[] = [];
      let area = 0;
      for (const c of candidates) {
        if (area >= (totalArea * percent) / 100) break;
        out.push(c.id);
        area += c.area;
      }
      return out;
    };
    // A trial depends only on which candidates it suspends and what it places (everything
    // else is rolled back), and many percentages suspend the same prefix: each is tried once.
    const tried = new Map<string, { ok: boolean; unsolved: string[] }>();
    const trial = (percent: number, targets: string[], placeSuspended: boolean) => {
      const key = `${prefix(percent).length}|${which === 'sla' && placeSuspended}|${JSON.stringify(targets)}`;
      let result = tried.get(key);
      if (!result) tried.set(key, (result = run(percent, targets, placeSuspended)));
      return result;
    };
    const run = (percent: number, targets: string[], placeSuspended: boolean) => {
      const snapshot = this.snapshot([...targets, ...candidates.map((c) => c.id)]);
      const mark = this.beginTrial();
      const suspended = prefix(percent);
      const scratch: ReplanReport = { moved: [], suspended: [], problematic: [], solved: [] };
      for (const id of suspended) this.cut(this.jobs.get(id) as PlannedJob, now);
      const slaSuspended = which === 'sla' && placeSuspended ? suspended : [];
      const order = [...slaSuspended, ...targets];
      for (const id of slaSuspended) this.setProblem(this.jobs.get(id) as PlannedJob, 'suspended');
      const outer = this.displaced;
      this.displaced = new Set(); // a trial's displacements are rolled back with it
      const unsolved = this.solve(order, now, scratch);
      this.displaced = outer;
      this.rollbackTrial(mark);
      this.restoreSnapshot(snapshot);
      return { ok: unsolved.length === 0, unsolved };
    };
    // Problems that do not fit even with every candidate suspended (and nothing suspended put
    // back) cannot be helped; the search is for the others, so one hopeless problem neither
    // blocks them nor makes every re-plan pay for the whole search.
    const hopeless = new Set(trial(100, problems, false).unsolved);
    const targets = problems.filter((id) => !hopeless.has(id));
    if (targets.length === 0 || !trial(100, targets, true).ok) return problems;
    let lower = 0;
    let upper = 100;
    while (lower < upper) {
      const mid = Math.floor((lower + upper) / 2);
      if (trial(mid, targets, true).ok) upper = mid;
      else lower = mid + 1;
    }
    const suspended = prefix(upper);
    for (const id of suspended) {
      const job = this.jobs.get(id) as PlannedJob;
      this.cut(job, now);
      this.setProblem(job, `suspended at ${at(now)} to make room after a failure`);
    }
    report.suspended.push(...suspended);
    const order = which === 'sla' ? [...suspended, ...targets] : targets;
    const unsolved = this.solve(order, now, report);
    if (which === 'best-effort') for (const id of suspended) delete (this.jobs.get(id) as PlannedJob).problem;
    return [...unsolved, ...problems.filter((id) => hopeless.has(id))];
  }

  /**
   * After a job finished early: waiting jobs that can start now on the freed nodes move up (ordered by planned start).
   */
  protected fillGaps(now: Instant, freed: Array<{ start: Instant; end: Instant; nodes: number[] }>): string[] {
    const moved: string[] = [];
    // Only a job that can use something freed may move up: a freed node (the released
    // bookings, the repaired node, the old slots of jobs moved up before it) must be free
    // for its whole new slot. The others are not tried, so an early finish or a repair
    // costs about what it frees, not the size of the plan.
    const usesFreed = (id: string, start: Instant, end: Instant) => {
      for (const f of freed) {
        if (f.start >= end || start >= f.end) continue;
        for (const n of f.nodes) if (this.mm.isFree(n, start, end) || this.mm.isFree(n, start, end, id)) return true;
      }
      return false;
    };
    // Only jobs that may start earlier than planned and before what was freed ends are candidates.
    const freedEnd = freed.reduce((latest, f) => Math.max(latest, f.end), Number.NEGATIVE_INFINITY);
    const waiting: PlannedJob[] = [];
    const startOf: number[] = [];
    this.jobs.forEach((j) => {
      const next = j.segments.at(-1);
      if (j.spec.window || j.problem !== undefined || !next || next.start <= now) return;
      // A suspended job's pieces before its last have run: its last, waiting to resume, moves up as a waiting job does.
      if (j.segments.length > 1 && (j.segments.at(-2) as Segment).end > now) return;
      const from = Math.max(now, j.spec.earliestStart ?? now);
      if (from >= freedEnd || from >= next.start) return; // would not move up
      waiting.push(j);
      startOf.push(next.start);
    });
    // By planned start (then id), the keys side by side: a sort that follows pointers into every job is slow.
    const order: number[] = [];
    for (let k = 0; k < waiting.length; k++) order.push(k);
    order.sort(
      (a, b) =>
        (startOf[a] as number) - (startOf[b] as number) ||
        ((waiting[a] as PlannedJob).spec.id < (waiting[b] as PlannedJob).spec.id ? -1 : 1),
    );
    // Busy nodes where candidates would start (many share `now`); forgotten when a job moves.
    let busyAt = new Map<Instant, number>();
    // Searches for an earlier slot, bounded by what was freed (a slot search each, however large the plan).
    const earlier = { searches: searchesPerFreedNode * freed.reduce((sum, f) => sum + f.nodes.length, 0) };
    for (const k of order) {
      const job = waiting[k] as PlannedJob;
      const segment = job.segments.at(-1) as Segment;
      const from = Math.max(now, job.spec.earliestStart ?? now);
      const length = segment.end - segment.start;
      const target =
        this.startNow(job, segment, from, length, busyAt, usesFreed) ??
        this.startEarlier(job, segment, from, length, freedEnd, earlier);
      if (!target) continue;
      const { start, nodes } = target;
      this.dropRemote(job); // its own standby must not count against its move
      if (job.spec.level === 'Full' && this.remoteCheck(job.spec, start, start + length) !== undefined) {
        if (job.remoteStandby) for (const s of job.segments) this.remoteAdd(s.start, s.end, job.remoteStandby);
        continue;
      }
      this.mm.unbook(job.spec.id, segment.start);
      const resumed = this.segment(job.spec, nodes, start, start + length, segment.restart, segment.intervals);
      job.segments = [...job.segments.slice(0, -1), resumed];
      this.segmentsChanged(job);
      this.bookSegment(job, resumed);
      this.syncSoftness(job);
      freed.push({ start: segment.start, end: segment.end, nodes: this.nodeIndices(segment) });
      busyAt = new Map();
      moved.push(job.spec.id);
    }
    return moved;
  }

  /** Nodes for the waiting job from `from` on, when it can start then and uses something freed. */
  private startNow(
    job: PlannedJob,
    segment: Segment,
    from: Instant,
    length: number,
    busyAt: Map<Instant, number>,
    usesFreed: (id: string, start: Instant, end: Instant) => boolean,
  ): { start: Instant; nodes: number[] } | undefined {
    const total = this.cluster.nodes.length;
    // the profile counts the job itself
    const own = segment.start < from + length ? segment.nodes.length + segment.spare.length : 0;
    const need = segment.nodes.length + segment.spare.length;
    let busy = busyAt.get(from);
    if (busy === undefined) busyAt.set(from, (busy = this.mm.profile.at(from)));
    if (busy + need > total) return undefined; // not even enough free nodes at the start
    if (!usesFreed(job.spec.id, from, from + length)) return undefined;
    if (this.mm.profile.maxOver(from, from + length) - own + need > total) return undefined;
    const nodes = this.mm.map(need, this.eligibleFor(job.spec), from, from + length, {
      ignoreOwner: job.spec.id,
      oneIsland: job.spec.requirements.interconnect !== undefined,
    });
    return nodes ? { start: from, nodes } : undefined;
  }

  /** The earliest start before its planned one, and before what was freed ends, where the waiting job fits. */
  private startEarlier(
    job: PlannedJob,
    segment: Segment,
    from: Instant,
    length: number,
    freedEnd: Instant,
    budget: { searches: number },
  ): { start: Instant; nodes: number[] } | undefined {
    const latest = Math.min(segment.start, freedEnd) - 1;
    if (latest < from || budget.searches <= 0) return undefined;
    // Cheap first: before its planned start the job's own booking is not in the profile, so without an instant
    // where enough nodes are free there is no earlier slot.
    const count = segment.nodes.length + segment.spare.length;
    if (this.mm.profile.firstFit(from, 1, this.cluster.nodes.length - count) > latest) return undefined;
    budget.searches--;
    const need: Need = {
      nodes: segment.nodes.length,
      spare: segment.spare.length,
      eligible: this.eligibleFor(job.spec),
      oneIsland: job.spec.requirements.interconnect !== undefined,
      lengthMs: length,
      replacing: job.spec.id,
      displaceWaiting: false,
    };
    return this.findSlot(need, from, latest, this.standbyFits(job.spec, length));
  }
}
