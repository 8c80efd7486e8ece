import { CapacityProfile } from './capacity-profile.js';
import type { ClusterNode, Instant, JobRequirements } from './model.js';
import { NodeTimeline } from './node-timeline.js';

interface OwnedBooking {
  node: number;
  start: Instant;
  end: Instant;
}

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

  constructor(readonly nodes: readonly ClusterNode[]) {
    this.timelines = nodes.map(() => new NodeTimeline());
    nodes.forEach((node, i) => {
      if (this.index.has(node.id)) throw new Error(`node id "${node.id}" appears twice in the cluster description`);
      this.index.set(node.id, i);
    });
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
    options: { ignoreOwner?: string; oneIsland?: boolean; movable?: (owner: string) => boolean } = {},
  ): number[] | undefined {
    if (count === 0) return [];
    const free: Array<{ node: number; since: number }> = [];
    for (const node of eligible) {
      const timeline = this.timelines[node] as NodeTimeline;
      if (timeline.isFree(start, end, options.ignoreOwner, options.movable)) free.push({ node, since: timeline.freeSince(start) });
    }
    if (free.length < count) return undefined;
    free.sort((a, b) => b.since - a.since || a.node - b.node);
    const islands = new Map<string, number[]>();
    for (const { node } of free) {
      const island = this.nodes[node]?.island ?? '';
      const members = islands.get(island) ?? [];
      members.push(node);
      islands.set(island, members);
    }
    for (const members of islands.values()) if (members.length >= count) return members.slice(0, count);
    return options.oneIsland ? undefined : free.slice(0, count).map((f) => f.node);
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

  isFree(node: number, start: Instant, end: Instant, ignoreOwner?: string, movable?: (owner: string) => boolean): boolean {
    return (this.timelines[node] as NodeTimeline).isFree(start, end, ignoreOwner, movable);
  }

  /** Marks an owner's bookings as soft (kept out of the firm profile) or firm; existing bookings follow. */
  setSoft(owner: string, soft: boolean): void {
    if (soft === this.soft.has(owner)) return;
    if (soft) this.soft.add(owner);
    else this.soft.delete(owner);
    for (const b of this.owned.get(owner) ?? []) this.firmProfile.add(b.start, b.end, soft ? -1 : 1);
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
    (this.timelines[booking.node] as NodeTimeline).add({ start: booking.start, end: booking.end, owner });
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
