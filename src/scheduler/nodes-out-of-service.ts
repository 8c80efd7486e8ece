/**
 * The nodes out of service (failed, not yet repaired), for the Machine Manager's choice of
 * nodes: a failed node's block ends with the problem horizon, which packing would take for the
 * latest end of all and choose first, though the node may not be back by then.
 */
export class NodesOutOfService {
  private readonly down: Uint8Array;
  private count = 0;

  constructor(nodes: number) {
    this.down = new Uint8Array(nodes);
  }

  mark(node: number, down: boolean): void {
    if ((this.down[node] === 1) === down) return;
    this.down[node] = down ? 1 : 0;
    this.count += down ? 1 : -1;
  }

  /**
   * Reorders the first `free` entries of a free list (`nodes`, with `since` beside them) so
   * those in service come first, each part in its order; returns how many are in service.
   */
  inServiceFirst(nodes: Int32Array, since: Float64Array, free: number): number {
    if (this.count === 0) return free;
    const down = this.down;
    const later: Array<[number, number]> = [];
    let up = 0;
    for (let k = 0; k < free; k++) {
      const node = nodes[k] as number;
      if (down[node] === 1) {
        later.push([node, since[k] as number]);
        continue;
      }
      nodes[up] = node;
      since[up++] = since[k] as number;
    }
    later.forEach(([node, at], i) => {
      nodes[up + i] = node;
      since[up + i] = at;
    });
    return up;
  }
}
