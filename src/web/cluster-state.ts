import { Gauge, type Registry } from 'prom-client';

/**
 * Who plans, seen from one instance (docs/deployment.md, "Several instances"): this
 * instance's role, the leader the database names, and the last takeover with its gap. A
 * single server (SQLite) is its own leader and has no takeovers.
 */
export interface ClusterState {
  role: 'leader' | 'standby' | 'single';
  /** This instance's name (host/pid/random). */
  instance?: string;
  leader?: {
    instance: string;
    url: string;
    /** Counts the leaders the database has seen. */
    term: number;
    since: Date;
    /** The leader's last heartbeat (every second). */
    alive?: Date;
  };
  /**
   * The last change of leader: the one before, and the time from its last heartbeat to the new leader's announcement
   * (at most a heartbeat longer than the time without a leader).
   */
  lastTakeover?: { previous: string; at: Date; gapSeconds: number };
}

/** The state as JSON (GET /api/cluster). */
export function clusterStateJson(state: ClusterState): Record<string, unknown> {
  return {
    role: state.role,
    ...(state.instance ? { instance: state.instance } : {}),
    ...(state.leader
      ? {
          leader: {
            ...state.leader,
            since: state.leader.since.toISOString(),
            ...(state.leader.alive ? { alive: state.leader.alive.toISOString() } : {}),
          },
        }
      : {}),
    ...(state.lastTakeover ? { lastTakeover: { ...state.lastTakeover, at: state.lastTakeover.at.toISOString() } } : {}),
  };
}

/** Gauges of the cluster state, read at each scrape of the registry. */
export function registerClusterGauges(registry: Registry, state: () => ClusterState): void {
  const registers = [registry];
  new Gauge({
    name: 'wsag_cluster_leader',
    help: 'Whether this instance is the planning leader (1) or a standby (0); a single server is its own leader',
    registers,
    collect() {
      this.set(state().role === 'standby' ? 0 : 1);
    },
  });
  new Gauge({
    name: 'wsag_cluster_term',
    help: 'Leaders the database has seen: each takeover raises it (0 for a single server)',
    registers,
    collect() {
      this.set(state().leader?.term ?? 0);
    },
  });
  new Gauge({
    name: 'wsag_cluster_leader_since_seconds',
    help: 'When the current planning leader announced itself (Unix time; absent for a single server)',
    registers,
    collect() {
      const since = state().leader?.since;
      if (since) this.set(since.getTime() / 1000);
    },
  });
  new Gauge({
    name: 'wsag_cluster_last_takeover_gap_seconds',
    help: "The last takeover: from the former leader's last heartbeat to the new leader's announcement",
    registers,
    collect() {
      const gap = state().lastTakeover?.gapSeconds;
      if (gap !== undefined) this.set(gap);
    },
  });
}
