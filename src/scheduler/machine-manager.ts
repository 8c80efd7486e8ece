import { CapacityProfile } from './capacity-profile.js';
import type { ClusterNode, Instant, JobRequirements } from './model.js';
import { NodeTimeline, type Passable } from './node-timeline.js';

interface OwnedBooking {
  node: number;
  start: Instant;
  end: Instant;
}

/** Bookings in the way a slot search scans per node, when it must scan (an owner to look past), before it settles for a lower bound. */
const SCAN_BUDGET = 8;

type JournalEntry = { op: 'book' | 'unbook'; owner: string; booking: OwnedBooking };

/**
 * The Machine Manager (002 section 4.2.2): knows the nodes, their properties and their
 * bookings, and maps a Planning Manager decision (k nodes over [start, end)) onto
 * concrete nodes, or answers that it cannot. It also keeps the busy-node profile the
 * Planning Manager searches, so the two never disagree. Every change is journalled so a
 * trial re-plan (suspension's binary search) can be rolled back.
 */
export class MachineManager {
  /** Busy nodes over time, all bookings. */
  readonly profile = new CapacityProfile();
  /** Busy nodes over time without soft owners (best-effort jobs, which give way to SLA jobs). */
  readonly firmProfile = new CapacityProfile();
  private readonly soft = new Set<string>();
  private readonly timelines: NodeTimeline[];
  private readonly index = new Map<string, number>();
  private readonly owned = new Map<string, OwnedBooking[]>();
  private readonly eligibleCache = new Map<string, number[]>();
  private readonly journal: JournalEntry[] = [];
  private depth = 0;
  /** Profile changes of one operation, grouped by interval: a job on 64 nodes is one profile update, not 64. */
  private readonly pendingProfile = new Map<string, { start: Instant; end: Instant; delta: number; firm: boolean }>();

  /** Each node's interconnect island as a small number (nodes without one share one). */
  private readonly islandOf: Int32Array;

  constructor(readonly nodes: readonly ClusterNode[]) {
    this.timelines = nodes.map(() => new NodeTimeline());
    const islands = new Map<string, number>();
    this.islandOf = Int32Array.from(nodes, (node) => {
      const name = node.island ?? '';
      if (!islands.has(name)) islands.set(name, islands.size);
      return islands.get(name) as number;
    });
    nodes.forEach((node, i) => {
      if (this.index.has(node.id)) throw new Error(`node id "${node.id}" appears twice in the cluster description`);
      this.index.set(node.id, i);
    });
  }

  hasNode(id: string): boolean {
    return this.index.has(id);
  }

  nodeIndex(id: string): number {
    const i = this.index.get(id);
    if (i === undefined) throw new Error(`unknown node "${id}"`);
    return i;
  }

  /** Nodes (by index, in cluster order) whose properties satisfy the requirements; buffer nodes only for best-effort work. */
  eligible(requirements: JobRequirements, allowBuffer: boolean): number[] {
    const key = JSON.stringify([requirements, allowBuffer]);
    let cached = this.eligibleCache.get(key);
    if (!cached) {
      cached = [];
      this.nodes.forEach((node, i) => {
        if ((allowBuffer || !node.buffer) && satisfies(node, requirements)) cached?.push(i);
      });
      this.eligibleCache.set(key, cached);
    }
    return cached;
  }

  /**
   * Chooses `count` of the `eligible` nodes free throughout [start, end), or undefined
   * (the conflict the PM re-plans on). Nodes of one interconnect island are preferred
   * (required when the job names an interconnect); among free nodes those whose last
   * booking ended latest are taken first, which packs the schedule and leaves long
   * free stretches whole.
   */
  map(
    count: number,
    eligible: readonly number[],
    start: Instant,
    end: Instant,
    options: Passable & { oneIsland?: boolean } = {},
  ): number[] | undefined {
    if (count === 0) return [];
    const free: Array<{ node: number; since: number }> = [];
    for (const node of eligible) {
      const timeline = this.timelines[node] as NodeTimeline;
      if (timeline.isFree(start, end, options.ignoreOwner, options.movable, options.soft)) free.push({ node, since: timeline.freeSince(start) });
    }
    return this.choose(free, count, options.oneIsland);
  }

  /**
   * A search for the earliest start where `count` of the eligible nodes (of one island
   * when required) are free for `duration`: `at(t)` maps there or answers a lower bound
   * for any start where a mapping could exist. The search keeps, per node, a lower bound
   * for where its next free stretch begins, so a node is looked at again only once the
   * search has passed that bound: after a first pass over all nodes each step costs about
   * the nodes it needs, not the cluster. The plan must not change while it is in use.
   */
  search(count: number, eligible: readonly number[], duration: number, options: Passable & { oneIsland?: boolean; limit?: Instant } = {}): SlotSearch {
    return new SlotSearch(this, count, eligible, duration, options);
  }

  /** @internal for SlotSearch */
  timeline(node: number): NodeTimeline {
    return this.timelines[node] as NodeTimeline;
  }

  /**
   * @internal Of the free nodes, `count` whose last booking ended latest (ties: lower index), taken
   * from the island whose best node comes first among those with enough free nodes;
   * without such an island, the best overall unless one island is required.
   */
  choose(free: Array<{ node: number; since: number }>, count: number, oneIsland?: boolean): number[] | undefined {
    if (free.length < count) return undefined;
    const islands: Array<{ best: { node: number; since: number }; members: Array<{ node: number; since: number }> } | undefined> = [];
    for (const f of free) {
      const island = this.islandOf[f.node] as number;
      const entry = islands[island];
      if (!entry) islands[island] = { best: f, members: [f] };
      else {
        entry.members.push(f);
        if (before(f, entry.best)) entry.best = f;
      }
    }
    const order = islands.filter((e) => e !== undefined).sort((a, b) => (before(a.best, b.best) ? -1 : 1));
    for (const { members } of order) if (members.length >= count) return best(members, count);
    return oneIsland ? undefined : best(free, count);
  }

  /** Books nodes for `owner` over [start, end); with `except`, the parts already booked by that owner are skipped (a renegotiated job over its original). */
  book(owner: string, nodes: readonly number[], start: Instant, end: Instant, except?: string): void {
    if (end <= start) return;
    for (const node of nodes) {
      if (except === undefined) {
        this.add(owner, { node, start, end });
        continue;
      }
      let from = start;
      for (const b of (this.timelines[node] as NodeTimeline).overlapping(start, end)) {
        if (b.owner !== except) continue; // isFree said nobody else is there
        if (b.start > from) this.add(owner, { node, start: from, end: b.start });
        from = Math.max(from, b.end);
      }
      if (from < end) this.add(owner, { node, start: from, end });
    }
    this.flushProfile();
  }

  /** Releases the owner's bookings from `from` on (all of them by default): a job that stops at `from` keeps its past. */
  unbook(owner: string, from: Instant = Number.NEGATIVE_INFINITY, onlyNode?: number): void {
    const bookings = this.owned.get(owner);
    if (!bookings) return;
    for (const b of [...bookings]) {
      if (b.end <= from || (onlyNode !== undefined && b.node !== onlyNode)) continue;
      this.remove(owner, b);
      if (b.start < from) this.add(owner, { node: b.node, start: b.start, end: from });
    }
    this.flushProfile();
  }

  bookingsOf(owner: string): readonly OwnedBooking[] {
    return this.owned.get(owner) ?? [];
  }

  /** Owners with a booking on the node overlapping [start, end). */
  ownersOn(node: number, start: Instant, end: Instant): string[] {
    return [...new Set((this.timelines[node] as NodeTimeline).overlapping(start, end).map((b) => b.owner))];
  }

  isFree(node: number, start: Instant, end: Instant, ignoreOwner?: string, movable?: (owner: string) => boolean, soft = false): boolean {
    return (this.timelines[node] as NodeTimeline).isFree(start, end, ignoreOwner, movable, soft);
  }

  /** Marks an owner's bookings as soft (kept out of the firm profile) or firm; existing bookings follow. */
  setSoft(owner: string, soft: boolean): void {
    if (soft === this.soft.has(owner)) return;
    if (soft) this.soft.add(owner);
    else this.soft.delete(owner);
    for (const b of this.owned.get(owner) ?? []) {
      this.firmProfile.add(b.start, b.end, soft ? -1 : 1);
      (this.timelines[b.node] as NodeTimeline).setSoft(owner, b.start, soft);
    }
  }

  /**
   * Starts a trial and returns its mark; `rollback(mark)` undoes everything booked or
   * released since, `commit(mark)` keeps it. Trials nest (a partial-execution attempt
   * inside a suspension trial).
   */
  begin(): number {
    this.depth++;
    return this.journal.length;
  }

  commit(mark: number): void {
    this.end(mark, false);
  }

  rollback(mark: number): void {
    this.end(mark, true);
  }

  private end(mark: number, undo: boolean): void {
    if (undo) {
      const entries = this.journal.splice(mark);
      for (const entry of entries.reverse()) {
        if (entry.op === 'book') this.remove(entry.owner, entry.booking, false);
        else this.add(entry.owner, entry.booking, false);
      }
      this.flushProfile();
    }
    this.depth--;
    if (this.depth === 0) this.journal.length = 0;
  }

  private add(owner: string, booking: OwnedBooking, journal = true): void {
    if (booking.end <= booking.start) return;
    (this.timelines[booking.node] as NodeTimeline).add({ start: booking.start, end: booking.end, owner, soft: this.soft.has(owner) });
    const list = this.owned.get(owner);
    if (list) list.push(booking);
    else this.owned.set(owner, [booking]);
    this.changeProfile(owner, booking, 1);
    if (journal && this.depth > 0) this.journal.push({ op: 'book', owner, booking });
  }

  private remove(owner: string, booking: OwnedBooking, journal = true): void {
    (this.timelines[booking.node] as NodeTimeline).remove(owner, booking.start);
    const list = this.owned.get(owner) ?? [];
    const i = list.findIndex((b) => b.node === booking.node && b.start === booking.start);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.owned.delete(owner);
    this.changeProfile(owner, booking, -1);
    if (journal && this.depth > 0) this.journal.push({ op: 'unbook', owner, booking });
  }

  private changeProfile(owner: string, booking: OwnedBooking, delta: number): void {
    const firm = !this.soft.has(owner);
    const key = `${booking.start}:${booking.end}:${firm}`;
    const pending = this.pendingProfile.get(key);
    if (pending) pending.delta += delta;
    else this.pendingProfile.set(key, { start: booking.start, end: booking.end, delta, firm });
  }

  private flushProfile(): void {
    for (const { start, end, delta, firm } of this.pendingProfile.values()) {
      this.profile.add(start, end, delta);
      if (firm) this.firmProfile.add(start, end, delta);
    }
    this.pendingProfile.clear();
  }
}

function satisfies(node: ClusterNode, r: JobRequirements): boolean {
  if (r.memoryPerNodeGB !== undefined && node.memoryGB < r.memoryPerNodeGB) return false;
  if (r.cpusPerNode !== undefined && node.cpus < r.cpusPerNode) return false;
  if (r.interconnect !== undefined && node.interconnect !== r.interconnect) return false;
  if (r.operatingSystem !== undefined && node.operatingSystem !== undefined && node.operatingSystem !== r.operatingSystem) return false;
  if (r.architecture !== undefined && node.architecture !== undefined && node.architecture !== r.architecture) return false;
  for (const lib of r.libraries ?? []) {
    const present = node.libraries?.find((l) => l.name === lib.name);
    if (!node.libraries) continue; // a node that lists no libraries is not restricted
    if (!present) return false;
    if (lib.loaded ? present.version !== lib.version : majorVersion(present.version) !== majorVersion(lib.version)) return false;
  }
  return true;
}

/** An unloaded library needs a compatible version: the same major version. */
function majorVersion(version: string): string {
  return version.split('.')[0] ?? version;
}

/** See MachineManager.search. */
export class SlotSearch {
  /** Per eligible node: no free stretch of the duration begins before this (exact where it equals the instant asked). */
  private readonly bound: Float64Array;

  constructor(
    private readonly mm: MachineManager,
    private readonly count: number,
    private readonly eligible: readonly number[],
    private readonly duration: number,
    private readonly options: Passable & { oneIsland?: boolean; limit?: Instant },
  ) {
    this.bound = new Float64Array(eligible.length).fill(Number.NEGATIVE_INFINITY);
  }

  /** The nodes for a start at `start`, or a lower bound (> start) for any start that could work; Infinity if none ever can. */
  at(start: Instant): { nodes: number[] } | { next: Instant } {
    const { count, eligible, bound, options } = this;
    if (count === 0) return { nodes: [] };
    if (eligible.length < count) return { next: Number.POSITIVE_INFINITY };
    const free: Array<{ node: number; since: number }> = [];
    for (let i = 0; i < eligible.length; i++) {
      if ((bound[i] as number) > start) continue; // not free at start, and its bound still holds
      const node = eligible[i] as number;
      const timeline = this.mm.timeline(node);
      const at = timeline.earliestFree(start, this.duration, options, options.limit, SCAN_BUDGET);
      bound[i] = at;
      if (at === start) free.push({ node, since: timeline.freeSince(start) });
    }
    const nodes = free.length >= count ? this.mm.choose(free, count, options.oneIsland) : undefined;
    if (nodes) return { nodes };
    if (!options.oneIsland) return { next: kthSmallest(Float64Array.from(bound), eligible.length, count) };
    const byIsland = new Map<string, number[]>();
    for (let i = 0; i < eligible.length; i++) {
      const island = this.mm.nodes[eligible[i] as number]?.island ?? '';
      const list = byIsland.get(island);
      if (list) list.push(bound[i] as number);
      else byIsland.set(island, [bound[i] as number]);
    }
    let next = Number.POSITIVE_INFINITY;
    for (const list of byIsland.values()) if (list.length >= count) next = Math.min(next, kthSmallest(Float64Array.from(list), list.length, count));
    return { next };
  }
}

/** Packing order of free nodes: the one whose last booking ended latest first, then the lower index. */
function before(a: { node: number; since: number }, b: { node: number; since: number }): boolean {
  return a.since > b.since || (a.since === b.since && a.node < b.node);
}

/**
 * The first `count` of the free nodes in packing order, without sorting all of them when
 * few are wanted: those above the count-th best `since` sorted, then those tied with it,
 * which `free` already holds by node index.
 */
function best(free: Array<{ node: number; since: number }>, count: number): number[] {
  if (count * 4 >= free.length) {
    return [...free]
      .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
      .slice(0, count)
      .map((f) => f.node);
  }
  const cut = -kthSmallest(Float64Array.from(free, (f) => -f.since), free.length, count);
  const above = free.filter((f) => f.since > cut).sort((a, b) => (before(a, b) ? -1 : 1));
  const out = above.map((f) => f.node);
  for (const f of free) {
    if (out.length >= count) break;
    if (f.since === cut) out.push(f.node);
  }
  return out;
}

/** The k-th smallest (1-based) of the first `length` values; reorders them (quickselect). */
function kthSmallest(values: Float64Array, length: number, k: number): number {
  let lo = 0;
  let hi = length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) < pivot) i++;
      while ((values[j] as number) > pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i] = values[j] as number;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target] as number;
  }
  return values[target] as number;
}
