import type { Instant } from './model.js';

const DOWN = 2;
const FRESH = 1;

/** When each node was last repaired (NaN: not since the plan began, or out of service now), and the latest of them. */
export interface RepairInstants {
  readonly repairedAt: Float64Array;
  readonly lastRepair: Instant;
}

/**
 * Each node's standing for the Machine Manager's choice of nodes: out of service (failed, not
 * yet repaired) or repaired recently. A failed node's block ends with the problem horizon, which
 * packing would take for the latest end of all and choose first, though the node may not be
 * back by then. Where nodes fail again soon after a repair (RecentRepairs), one repaired
 * recently is chosen after those that have settled.
 */
export class NodeStanding {
  private readonly down: Uint8Array;
  private downCount = 0;
  /** How long after its repair a node is chosen after the settled ones (0: it is not), and the repairs seen. */
  private settleMs = 0;
  private repairs: RepairInstants | undefined;
  /** Of the free list `settledFirst` last ordered, how many entries are in service (settled or not). */
  inService = 0;

  constructor(nodes: number) {
    this.down = new Uint8Array(nodes);
  }

  mark(node: number, down: boolean): void {
    if ((this.down[node] === 1) === down) return;
    this.down[node] = down ? 1 : 0;
    this.downCount += down ? 1 : -1;
  }

  /** Nodes `repairs` saw repaired less than `settleMs` before a start are chosen after the others; 0: they are not. */
  chooseSettledFirst(settleMs: number, repairs: RepairInstants): void {
    this.settleMs = settleMs;
    this.repairs = repairs;
  }

  /**
   * Reorders the first `free` entries of a free list (`nodes`, with `since` beside them) so the
   * nodes settled at `start` come first, then those repaired recently, then those out of service,
   * each part in its order; answers how many are settled (`inService` says how many are in service).
   */
  settledFirst(nodes: Int32Array, since: Float64Array, free: number, start: Instant): number {
    const repairs = this.repairs;
    const recent = repairs !== undefined && start - repairs.lastRepair < this.settleMs;
    this.inService = free;
    if (this.downCount === 0 && !recent) return free;
    const later: Array<[number, number, number]> = [];
    let first = 0;
    for (let k = 0; k < free; k++) {
      const node = nodes[k] as number;
      const fresh = recent && start - (repairs.repairedAt[node] as number) < this.settleMs;
      const rank = this.down[node] === 1 ? DOWN : fresh ? FRESH : 0;
      if (rank !== 0) {
        later.push([rank, node, since[k] as number]);
        continue;
      }
      nodes[first] = node;
      since[first++] = since[k] as number;
    }
    later.sort((a, b) => a[0] - b[0]); // stable: each rank keeps its order
    let up = first;
    later.forEach(([rank, node, at], i) => {
      nodes[first + i] = node;
      since[first + i] = at;
      if (rank === FRESH) up++;
    });
    this.inService = up;
    return first;
  }
}
