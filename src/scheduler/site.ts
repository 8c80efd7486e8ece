/**
 * The site's timing model (Hovestadt 2006, section 3.4): what initialising, checkpointing,
 * restarting and migrating cost on this cluster. An administrator measures these on the
 * deployed system; the defaults are plausible for a small cluster with a network
 * filesystem and a sequential checkpointer.
 */
export interface SiteTiming {
  /** t_nodeinit: booting and preparing a node for a job, seconds. */
  nodeInitSeconds: number;
  /** t_stinit(s): creating the job's storage partition, seconds per GB of storage. */
  storageInitSecondsPerGB: number;
  /** t_strollback(s): rolling the storage back to a snapshot, seconds per GB. */
  storageRollbackSecondsPerGB: number;
  /** t_stmount: mounting the storage on the nodes, seconds. */
  storageMountSeconds: number;
  /** t_deinit: releasing the nodes and storage after the job, seconds. */
  deinitSeconds: number;
  /**
   * t_handover: starting the holder's session on prepared nodes, seconds. A promise that
   * starts at a time (a reservation window, an interactive session) is prepared this much
   * before it, so the nodes are the holder's when the promise starts, not a moment after.
   */
  handoverSeconds: number;
  /** f_slow: slowdown of running under the checkpointing environment (1.01 = 1 %). */
  slowdownFactor: number;
  /** t_cpnode(m): checkpointing one node, seconds per GB of main memory. */
  checkpointSecondsPerNodeGB: number;
  /** t_snapshot(s): snapshotting the job's storage, seconds per GB. */
  snapshotSecondsPerGB: number;
  /** A parallel checkpointer writes all nodes at once, so t_cp is close to one node's (002 section 3.4.2). */
  parallelCheckpoint: boolean;
  /** Main memory per node assumed when the request names none (worst case: all of it), GB. */
  defaultMemoryPerNodeGB: number;
  /** Bandwidth to other sites for moving checkpoints (3.5), MB/s; 0 means none. */
  migrationBandwidthMBps: number;
  /** n_romax assumed when a fault-tolerant request names no count of covered outages. */
  defaultCoveredOutages: number;
  /** The problem horizon (002 section 3.5.1.2): usual repair time of a node, seconds. */
  problemHorizonSeconds: number;
  /**
   * Failures a node has per day, as the site expects them: what checkpoints beyond those a
   * promise needs are weighed against (Young/Daly's interval). 0.02 is one failure per node
   * in 50 days.
   */
  nodeFailuresPerDay: number;
  /**
   * How many node-days of observation nodeFailuresPerDay is worth: the planner's estimate
   * moves from it to the failures the nodes have as node-days pass (scheduler/failure-rate.ts).
   */
  nodeFailuresPriorNodeDays: number;
  /**
   * Checkpoints by need (docs/scheduler.md): the fewest that keep each promise, and those
   * that pay for themselves at nodeFailuresPerDay. false: the optimum of Hovestadt 2006
   * (3.16) for every job, as the thesis plans.
   */
  checkpointsByNeed: boolean;
  /**
   * Spare nodes a reservation books beside its own where some are free throughout its window
   * (beyond an Enhanced or Full reservation's), prepared with them: a failed node's place is
   * taken at once, not after preparing another (docs/scheduler.md, "Reservation spares").
   */
  reservationSpareNodes: number;
  /**
   * Hours after its repair a node counts as repaired recently: its failures are counted apart,
   * and once they are more than chance at the other nodes' rate, such nodes are chosen last
   * (scheduler/recent-repairs.ts). 0: never.
   */
  recentRepairHours: number;
  /**
   * The highest chance of breaking it the planner accepts for a new promise no fault-tolerance
   * mechanism protects (a Legacy deadline: any node failure during its run breaks it), at the
   * failure rate learned for its nodes (scheduler/promise-risk.ts). 1: none is refused for risk.
   */
  promiseRiskLimit: number;
  /**
   * Waiting best-effort work starts ahead of its turn on nodes free now, yielding to SLA work while it runs
   * (scheduler/plan-start-now.ts); false: it waits for its place in the plan, as the thesis planned it.
   */
  bestEffortStartsAhead: boolean;
  /**
   * A deadline job the plan can no longer fit before its deadline (after a failure) runs anyway where nodes are free
   * for at least this share of its estimated run, stopped by the deadline: it keeps the promise if it needs less than
   * its estimate (scheduler/plan-replanning.ts, `runOnChance`). 1: it waits in P for room for its whole estimate.
   */
  chanceShare: number;
}

/** The settings of SiteTiming that are true or false; the others are numbers. */
export const switchTimingKeys = ['parallelCheckpoint', 'checkpointsByNeed', 'bestEffortStartsAhead'] as const;
export type SwitchTimingKey = (typeof switchTimingKeys)[number];
export const isSwitchTimingKey = (key: string): key is SwitchTimingKey =>
  (switchTimingKeys as readonly string[]).includes(key);

export const defaultSiteTiming: SiteTiming = {
  nodeInitSeconds: 30,
  storageInitSecondsPerGB: 0.5,
  storageRollbackSecondsPerGB: 1,
  storageMountSeconds: 5,
  deinitSeconds: 15,
  handoverSeconds: 1,
  slowdownFactor: 1.01,
  checkpointSecondsPerNodeGB: 4,
  snapshotSecondsPerGB: 0.5,
  parallelCheckpoint: true,
  defaultMemoryPerNodeGB: 16,
  migrationBandwidthMBps: 100,
  defaultCoveredOutages: 1,
  problemHorizonSeconds: 4 * 3600,
  nodeFailuresPerDay: 0.02,
  nodeFailuresPriorNodeDays: 1000,
  checkpointsByNeed: true,
  reservationSpareNodes: 0,
  recentRepairHours: 24,
  promiseRiskLimit: 0.5,
  bestEffortStartsAhead: true,
  chanceShare: 0.5,
};
