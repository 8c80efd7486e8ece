/**
 * Capacity the provider has set aside for an agreement (or a preparatory hold): `nodes`
 * nodes over [start, end). These three are on the wire (srv:Slot) and in prices.
 *
 * The optional fields are the planning scheduler's exact plan behind it, kept so a restart
 * restores the same plan (same nodes, same checkpoints) instead of planning again:
 * `segments` are the booked pieces with their concrete node ids (one for a job run in one
 * go), `checkpoints` the checkpoint plan, `outagesLeft` the covered outages not yet used.
 * Allocations stored before the planning scheduler have none of them; they are placed
 * again at their times on start-up.
 */
export interface Allocation {
  start: Date;
  end: Date;
  nodes: number;
  segments?: AllocationSegment[];
  checkpoints?: CheckpointSchedule;
  /** Covered outages (n_romax) not yet used. */
  outagesLeft?: number;
  /** Standby nodes reserved at a peer provider (Full). */
  remoteStandby?: number;
  /** Why the scheduler cannot (yet) keep the promise (the job is problematic), if so. */
  problem?: string;
  /** When the request was admitted: orders best-effort jobs (first come first served). */
  arrival?: Date;
  /**
   * What is promised inside the booking, for a job promised from a time (a reservation
   * window, an interactive session): [start, end) adds the nodes' preparation before it and
   * their release after it. Prices and usage count the promise.
   */
  promised?: { start: Date; end: Date };
}

/**
 * One booked piece of a job: `nodeIds` work over [start, end); `spareNodeIds` are kept for restarts (Enhanced, Full).
 */
export interface AllocationSegment {
  start: Date;
  end: Date;
  nodeIds: string[];
  spareNodeIds: string[];
  /** The piece begins from a checkpoint. */
  restart: boolean;
  /** Compute intervals the piece completes. */
  intervals: number;
  /** A best-effort job started ahead of its turn: it stops where SLA work needs its nodes. */
  yields?: boolean;
  /** A deadline job's run past what the plan could fit before its deadline: it completes if the job needs less. */
  onChance?: boolean;
}

/** The checkpoint plan of a job (SCHEDULER.md formulas 3.4 to 3.8), in seconds. */
export interface CheckpointSchedule {
  count: number;
  /** t_compint: computation between checkpoints. */
  intervalSeconds: number;
  /** t_cp. */
  checkpointSeconds: number;
  /** t_minslot: the job without outages. */
  minSlotSeconds: number;
  /** t_jobmax. */
  jobMaxSeconds: number;
  /** t_jobmax with initialisation, restarts and deinitialisation. */
  worstCaseSeconds: number;
  /** Covered outages the plan was made for. */
  outages: number;
}
