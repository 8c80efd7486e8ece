import { satisfies } from './node-requirements.js';
import { CapacityProfile } from './capacity-profile.js';
import type { ClusterNode, Instant, JobRequirements } from './model.js';
import { kthSmallest } from './kth-smallest.js';
import { NodeTimeline, type NodeBooking, type Passable } from './node-timeline.js';
import { FreeStretchMemo } from './free-stretch-memo.js';
import { EligibleListBlocks, SEARCH_BLOCK } from './free-stretch-blocks.js';
import { SearchArrayPool, SlotSearch, type SearchSpace } from './slot-search.js';
import { NodeStanding, type RepairInstants } from './node-standing.js';

/** A booking as the node's timeline and the owner's list both hold it (one object, so a change is seen by both). */
interface OwnedBooking extends NodeBooking {
  node: number;
}

/** A change a trial may undo: a booking added or removed, or its end moved (`end`: where it ended before). */
type JournalEntry = { op: 'book' | 'unbook' | 'end'; owner: string; booking: OwnedBooking; end: Instant };

/**
 * The Machine Manager (002 section 4.2.2): knows the nodes, their properties and their
 * bookings, and maps a Planning Manager decision (k nodes over [start, end)) onto
 * concrete nodes, or answers that it cannot. It also keeps the busy-node profile the
 * Planning Manager searches, so the two never disagree. Every change is journalled so a
 * trial re-plan (suspension's binary search) can be rolled back.
 */
export class MachineManager implements SearchSpace {
  /** Busy nodes over time, all bookings. */
  readonly profile = new CapacityProfile();
  /** Busy nodes over time without soft owners (best-effort jobs, which give way to SLA jobs). */
  readonly firmProfile = new CapacityProfile();
  private readonly soft = new Set<string>();
  private readonly timelines: NodeTimeline[];
  /**
   * Per node: the end of its last booking (-Infinity: none), so a search passes a node free for good without asking its
   * timeline.
   */
  private readonly lastEnds: Float64Array;
  /** What slot searches last learnt from each node's timeline (see FreeStretchMemo). */
  readonly freeStretches: FreeStretchMemo;
  /**
   * @internal for SlotSearch: what searches learnt of blocks of the eligible lists handed out (see FreeStretchBlocks).
   */
  readonly freeStretchBlocks: EligibleListBlocks;
  private readonly index = new Map<string, number>();
  /** Each owner's bookings: most jobs have one, kept without a list around it (100,000 live jobs: 5 MB). */
  private readonly owned = new Map<string, OwnedBooking | OwnedBooking[]>();
  private readonly eligibleCache = new Map<string, number[]>();
  private readonly largestIslands = new WeakMap<readonly number[], number>();
  private readonly journal: JournalEntry[] = [];
  private depth = 0;
  private changeCount = 0;
  /** Profile changes of one operation, grouped by interval: a job on 64 nodes is one profile update, not 64. */
  private readonly pendingProfile: Array<{ start: Instant; end: Instant; delta: number; firm: boolean }> = [];

  /** Each node's interconnect island as a small number (nodes without one share one). */
  private readonly islandOf: Int32Array;
  private readonly islandCount: number;
  /** Scratch space of the searches (free nodes and since when, per island), reused so a search allocates little. */
  private readonly freeNodes: Int32Array;
  private readonly freeSince: Float64Array;
  private readonly sinceUntil: Float64Array;
  private readonly order: Int32Array;
  private readonly values: Float64Array;
  private readonly islandMembers: Int32Array;
  private readonly islandBest: Int32Array;
  /** @internal for SlotSearch */
  readonly searchArrays: SearchArrayPool;
  private readonly standing: NodeStanding;

  /** `searchBlock`: eligible positions slot searches pass together (tests make it small). */
  constructor(
    readonly nodes: readonly ClusterNode[],
    searchBlock = SEARCH_BLOCK,
  ) {
    this.timelines = nodes.map(() => new NodeTimeline());
    this.lastEnds = new Float64Array(nodes.length).fill(Number.NEGATIVE_INFINITY);
    this.freeStretches = new FreeStretchMemo(nodes.length);
    this.freeStretchBlocks = new EligibleListBlocks(nodes.length, searchBlock);
    const islands = new Map<string, number>();
    this.islandOf = Int32Array.from(nodes, (node) => {
      const name = node.island ?? '';
      if (!islands.has(name)) islands.set(name, islands.size);
      return islands.get(name) as number;
    });
    this.islandCount = islands.size;
    this.freeNodes = new Int32Array(nodes.length);
    this.freeSince = new Float64Array(nodes.length);
    this.sinceUntil = new Float64Array(nodes.length);
    this.order = new Int32Array(nodes.length);
    this.values = new Float64Array(nodes.length);
    this.searchArrays = new SearchArrayPool(nodes.length);
    this.islandMembers = new Int32Array(this.islandCount);
    this.islandBest = new Int32Array(this.islandCount);
    this.standing = new NodeStanding(nodes.length);
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

  /**
   * Nodes (by index, in cluster order) whose properties satisfy the requirements; buffer and
   * warm nodes only for best-effort work, and `warmOnly` the warm nodes alone (interactive sessions).
   */
  eligible(requirements: JobRequirements, allowBuffer: boolean, warmOnly = false): number[] {
    const key = JSON.stringify([requirements, allowBuffer, warmOnly]);
    let cached = this.eligibleCache.get(key);
    if (!cached) {
      cached = [];
      this.nodes.forEach((node, i) => {
        const pool = warmOnly ? node.warm === true : allowBuffer || (!node.buffer && !node.warm);
        if (pool && satisfies(node, requirements)) cached?.push(i);
      });
      this.eligibleCache.set(key, cached);
      this.freeStretchBlocks.register(cached);
    }
    return cached;
  }

  /** The most of these nodes (a list `eligible` gave) that share one interconnect island. */
  largestIsland(nodes: readonly number[]): number {
    let largest = this.largestIslands.get(nodes);
    if (largest === undefined) {
      const members = new Int32Array(this.islandCount);
      for (const n of nodes) members[this.islandOf[n] as number] = (members[this.islandOf[n] as number] as number) + 1;
      largest = Math.max(0, ...members);
      this.largestIslands.set(nodes, largest);
    }
    return largest;
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
    let free = 0;
    for (const node of eligible) {
      const timeline = this.timelines[node] as NodeTimeline;
      if (timeline.isFree(start, end, options.ignoreOwner, options.movable, options.soft)) {
        this.freeNodes[free] = node;
        timeline.freeSinceInto(start, this.freeSince, this.sinceUntil, free);
        free++;
      }
    }
    return this.choose(free, count, start, options.oneIsland);
  }

  /**
   * A search for the earliest start where `count` of the eligible nodes (of one island
   * when required) are free for `duration`: `at(t)` maps there or answers a lower bound
   * for any start where a mapping could exist. The search keeps, per node, a lower bound
   * for where its next free stretch begins, so a node is looked at again only once the
   * search has passed that bound: after a first pass over all nodes each step costs about
   * the nodes it needs, not the cluster. Over a list `eligible` handed out, the first pass
   * itself passes whole blocks of nodes earlier searches found busy (FreeStretchBlocks). It
   * is asked for instants that never decrease, and the plan must not change while it is in use.
   */
  search(
    count: number,
    eligible: readonly number[],
    duration: number,
    options: Passable & { oneIsland?: boolean; limit?: Instant } = {},
  ): SlotSearch {
    return new SlotSearch(this, count, eligible, duration, options);
  }

  /** @internal for SlotSearch */
  timeline(node: number): NodeTimeline {
    return this.timelines[node] as NodeTimeline;
  }

  /** @internal for SlotSearch: the scratch list of free nodes (node, since) that `choose` takes from. */
  get freeList(): { nodes: Int32Array; since: Float64Array } {
    return { nodes: this.freeNodes, since: this.freeSince };
  }

  /** @internal for SlotSearch: scratch space for `count` numbers. */
  scratch(count: number): Float64Array {
    return this.values.subarray(0, count);
  }

  /** @internal for SlotSearch: each node's island as a small number. */
  islandIndex(node: number): number {
    return this.islandOf[node] as number;
  }

  /** @internal */
  get islands(): number {
    return this.islandCount;
  }

  /**
   * @internal Of the first `free` entries of the scratch free list, `count` whose last
   * booking ended latest (ties: lower index), taken from the island whose best node comes
   * first among those with enough free nodes; without such an island, the best overall
   * unless one island is required.
   */
  choose(free: number, count: number, start: Instant, oneIsland?: boolean): number[] | undefined {
    if (free < count) return undefined;
    // Settled nodes first, then those repaired recently, those out of service only where the others will not do.
    const settled = this.standing.settledFirst(this.freeNodes, this.freeSince, free, start);
    if (settled < free && settled >= count) {
      const chosen = this.chooseAmong(settled, count, oneIsland);
      if (chosen) return chosen;
    }
    const up = this.standing.inService;
    if (up > settled && up < free && up >= count) {
      const chosen = this.chooseAmong(up, count, oneIsland);
      if (chosen) return chosen;
    }
    return this.chooseAmong(free, count, oneIsland);
  }

  private chooseAmong(free: number, count: number, oneIsland?: boolean): number[] | undefined {
    const { islandMembers: members, islandBest: bestOf, freeNodes: nodes, freeSince: since } = this;
    members.fill(0);
    for (let k = 0; k < free; k++) {
      const island = this.islandOf[nodes[k] as number] as number;
      if (members[island] === 0 || before(nodes, since, k, bestOf[island] as number)) bestOf[island] = k;
      members[island] = (members[island] as number) + 1;
    }
    // The island with enough free nodes whose best node comes first.
    let chosen = -1;
    for (let island = 0; island < this.islandCount; island++) {
      if ((members[island] as number) < count) continue;
      if (chosen < 0 || before(nodes, since, bestOf[island] as number, bestOf[chosen] as number)) chosen = island;
    }
    if (chosen < 0 && oneIsland) return undefined;
    // The candidates (indices into the free list), in free-list order.
    let m = 0;
    for (let k = 0; k < free; k++) if (chosen < 0 || this.islandOf[nodes[k] as number] === chosen) this.order[m++] = k;
    return this.best(m, count);
  }

  /**
   * The first `count` of the `m` candidates in `order` in packing order, without sorting
   * all of them when few are wanted: those above the count-th best `since` sorted, then
   * those tied with it in free-list order (which holds them by node index).
   */
  private best(m: number, count: number): number[] {
    const { freeNodes: nodes, freeSince: since } = this;
    const candidates = this.order.subarray(0, m);
    const byPacking = (a: number, b: number) => (before(nodes, since, a, b) ? -1 : before(nodes, since, b, a) ? 1 : 0);
    if (count * 4 >= m) return Array.from(candidates.sort(byPacking).subarray(0, count), (k) => nodes[k] as number);
    const values = this.values;
    for (let j = 0; j < m; j++) values[j] = -(since[candidates[j] as number] as number);
    const cut = -kthSmallest(values, m, count);
    const out: number[] = [];
    let above = 0;
    for (let j = 0; j < m; j++)
      if ((since[candidates[j] as number] as number) > cut) values[above++] = candidates[j] as number;
    const sorted = Int32Array.from(values.subarray(0, above)).sort(byPacking);
    for (const k of sorted) out.push(nodes[k] as number);
    for (let j = 0; j < m && out.length < count; j++) {
      const k = candidates[j] as number;
      if (since[k] === cut) out.push(nodes[k] as number);
    }
    return out;
  }

  /**
   * Books nodes for `owner` over [start, end); with `except`, the parts already booked by that owner are skipped (a
   * renegotiated job over its original).
   */
  book(owner: string, nodes: readonly number[], start: Instant, end: Instant, except?: string): void {
    if (end <= start) return;
    for (const node of nodes) {
      if (except === undefined) {
        this.add(owner, this.booking(owner, node, start, end));
        continue;
      }
      let from = start;
      for (const b of (this.timelines[node] as NodeTimeline).overlapping(start, end)) {
        if (b.owner !== except) continue; // isFree said nobody else is there
        if (b.start > from) this.add(owner, this.booking(owner, node, from, b.start));
        from = Math.max(from, b.end);
      }
      if (from < end) this.add(owner, this.booking(owner, node, from, end));
    }
    this.flushProfile();
  }

  /**
   * Releases the owner's bookings from `from` on (all of them by default): a job that
   * stops at `from` keeps its past (a booking running across `from` is cut short there).
   */
  unbook(owner: string, from: Instant = Number.NEGATIVE_INFINITY, onlyNode?: number): void {
    const bookings = this.bookingsOf(owner);
    // Backwards, so removing one does not move those still to visit.
    for (let i = bookings.length - 1; i >= 0; i--) {
      const b = bookings[i] as OwnedBooking;
      if (b.end <= from || (onlyNode !== undefined && b.node !== onlyNode)) continue;
      if (b.start < from) this.setEnd(owner, b, from);
      else this.remove(owner, b, true, i);
    }
    this.flushProfile();
  }

  /** Bookings added, removed or cut so far (undone ones too): equal counts mean the bookings have not changed. */
  get changes(): number {
    return this.changeCount;
  }

  bookingsOf(owner: string): readonly OwnedBooking[] {
    const owned = this.owned.get(owner);
    return owned === undefined ? [] : Array.isArray(owned) ? owned : [owned];
  }

  /** Owners with a booking on the node overlapping [start, end). */
  ownersOn(node: number, start: Instant, end: Instant): string[] {
    return (this.timelines[node] as NodeTimeline).ownersOverlapping(start, end);
  }

  isFree(
    node: number,
    start: Instant,
    end: Instant,
    ignoreOwner?: string,
    movable?: (owner: string) => boolean,
    soft = false,
  ): boolean {
    return (this.timelines[node] as NodeTimeline).isFree(start, end, ignoreOwner, movable, soft);
  }

  /** Marks a node out of service (failed) or back; nodes out of service are chosen last (`choose`). */
  setDown(node: number, down: boolean): void {
    this.standing.mark(node, down);
  }

  /** Nodes repaired less than `settleMs` before a start are chosen after the others (`choose`); 0: they are not. */
  chooseSettledFirst(settleMs: number, repairs: RepairInstants): void {
    this.standing.chooseSettledFirst(settleMs, repairs);
  }

  isSoft(owner: string): boolean {
    return this.soft.has(owner);
  }

  /** Marks an owner's bookings as soft (kept out of the firm profile) or firm; existing bookings follow. */
  setSoft(owner: string, soft: boolean): void {
    if (soft === this.soft.has(owner)) return;
    if (soft) this.soft.add(owner);
    else this.soft.delete(owner);
    for (const b of this.bookingsOf(owner)) {
      this.firmProfile.add(b.start, b.end, soft ? -1 : 1);
      (this.timelines[b.node] as NodeTimeline).setSoft(owner, b.start, soft);
      this.forgetFreeStretches(b.node);
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
      const journal = this.journal;
      for (let i = journal.length - 1; i >= mark; i--) {
        const entry = journal[i] as JournalEntry;
        if (entry.op === 'book') this.remove(entry.owner, entry.booking, false);
        else if (entry.op === 'unbook') this.add(entry.owner, entry.booking, false);
        else this.setEnd(entry.owner, entry.booking, entry.end, false);
      }
      journal.length = mark;
      this.flushProfile();
    }
    this.depth--;
    if (this.depth === 0) this.journal.length = 0;
  }

  private booking(owner: string, node: number, start: Instant, end: Instant): OwnedBooking {
    return { start, end, owner, soft: this.soft.has(owner), node };
  }

  private add(owner: string, booking: OwnedBooking, journal = true): void {
    if (booking.end <= booking.start) return;
    this.changeCount++;
    booking.soft = this.soft.has(owner);
    (this.timelines[booking.node] as NodeTimeline).add(booking);
    this.nodeChanged(booking.node);
    const owned = this.owned.get(owner);
    if (owned === undefined) this.owned.set(owner, booking);
    else if (Array.isArray(owned)) owned.push(booking);
    else this.owned.set(owner, [owned, booking]);
    this.changeProfile(owner, booking.start, booking.end, 1);
    if (journal && this.depth > 0) this.journal.push({ op: 'book', owner, booking, end: booking.end });
  }

  /** Removes a booking; `at` is its index in the owner's list when the caller knows it. */
  private remove(owner: string, booking: OwnedBooking, journal = true, at?: number): void {
    this.changeCount++;
    (this.timelines[booking.node] as NodeTimeline).remove(owner, booking.start);
    this.nodeChanged(booking.node);
    const owned = this.owned.get(owner);
    if (owned === booking) this.owned.delete(owner);
    else if (Array.isArray(owned)) {
      const i = at ?? owned.indexOf(booking);
      if (i >= 0) owned.splice(i, 1);
      if (owned.length === 0) this.owned.delete(owner);
    }
    this.changeProfile(owner, booking.start, booking.end, -1);
    if (journal && this.depth > 0) this.journal.push({ op: 'unbook', owner, booking, end: booking.end });
  }

  /** Moves a booking's end (earlier: cut short; later: put back by a rollback). */
  private setEnd(owner: string, booking: OwnedBooking, end: Instant, journal = true): void {
    const old = booking.end;
    if (end === old) return;
    this.changeCount++;
    (this.timelines[booking.node] as NodeTimeline).setEnd(owner, booking.start, end);
    this.nodeChanged(booking.node);
    if (end < old) this.changeProfile(owner, end, old, -1);
    else this.changeProfile(owner, old, end, 1);
    if (journal && this.depth > 0) this.journal.push({ op: 'end', owner, booking, end: old });
  }

  /** After any change to a node's bookings: what the searches keep about the node follows. */
  private nodeChanged(node: number): void {
    this.lastEnds[node] = (this.timelines[node] as NodeTimeline).lastEnd;
    this.forgetFreeStretches(node);
  }

  private forgetFreeStretches(node: number): void {
    this.freeStretches.forget(node);
    this.freeStretchBlocks.forget(node);
  }

  /** @internal for SlotSearch: each node's last booking end (see lastEnds). */
  get lastBookingEnds(): Float64Array {
    return this.lastEnds;
  }

  private changeProfile(owner: string, start: Instant, end: Instant, delta: number): void {
    const firm = !this.soft.has(owner);
    const pending = this.pendingProfile;
    // The bookings of one job come one after another: the match, if any, is usually the last entry.
    for (let i = pending.length - 1; i >= 0; i--) {
      const p = pending[i] as { start: Instant; end: Instant; delta: number; firm: boolean };
      if (p.start === start && p.end === end && p.firm === firm) {
        p.delta += delta;
        return;
      }
    }
    pending.push({ start, end, delta, firm });
  }

  private flushProfile(): void {
    for (const { start, end, delta, firm } of this.pendingProfile) {
      this.profile.add(start, end, delta);
      if (firm) this.firmProfile.add(start, end, delta);
    }
    this.pendingProfile.length = 0;
  }
}

/**
 * Packing order of free nodes (indices into the free list): the one whose last booking ended latest first, then the
 * lower index.
 */
function before(nodes: Int32Array, since: Float64Array, a: number, b: number): boolean {
  const sa = since[a] as number;
  const sb = since[b] as number;
  return sa > sb || (sa === sb && (nodes[a] as number) < (nodes[b] as number));
}
