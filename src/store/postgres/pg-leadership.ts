import pg from 'pg';

/** The planning leader as it announced itself in the database. */
export interface LeaderRecord {
  instance: string;
  url: string;
  /** Counts the leaders the database has seen: each takeover raises it. */
  term: number;
  since: Date;
  /** Its last heartbeat. */
  alive?: Date;
  /** The leader before it, and that one's last heartbeat (the last takeover). */
  previous?: { instance: string; alive: Date };
}

interface LeaderRow {
  instance: string;
  url: string;
  term: string | number;
  since: string | number;
  alive?: string | number | null;
  previous_instance?: string | null;
  previous_alive?: string | number | null;
}

/** The advisory lock key of the planning leadership (the same one-server lock `PgStore.openExclusive` takes). */
export const leadershipLockKey = 727000;

/**
 * Planning leadership among the instances sharing one PostgreSQL database (docs/deployment.md):
 * a session-level advisory lock on a connection of its own. PostgreSQL releases it when that
 * session ends (a clean stop, kill -9, a lost host once TCP keepalive notices), and the next
 * instance to try takes it. The leader announces the URL the others forward to.
 */
export class PgLeadership {
  private lost: ((error: Error) => void) | undefined;
  private held = false;

  private constructor(private readonly session: pg.Client) {
    // The session is the lock: once it fails, leadership is gone (and a standby reconnects).
    const end = (error: Error) => {
      const callback = this.lost;
      this.lost = undefined;
      callback?.(error);
    };
    session.on('error', end);
    session.on('end', () => end(new Error('the database session holding the planning leadership ended')));
  }

  static async connect(url: string): Promise<PgLeadership> {
    const session = new pg.Client({ connectionString: url, keepAlive: true, keepAliveInitialDelayMillis: 5000 });
    const leadership = new PgLeadership(session);
    await session.connect();
    return leadership;
  }

  get isLeader(): boolean {
    return this.held;
  }

  /** Takes the leadership if no other session holds it. */
  async tryAcquire(): Promise<boolean> {
    const { rows } = await this.session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      leadershipLockKey,
    ]);
    this.held = rows[0]?.locked === true;
    return this.held;
  }

  /** Tells the others where the leader serves, keeping the one before it; returns its term. */
  async announce(instance: string, url: string, now: Date): Promise<number> {
    const { rows } = await this.session.query<{ term: string | number }>(
      `INSERT INTO cluster_leader (singleton, instance, url, term, since, alive) VALUES (TRUE, $1, $2, 1, $3, $3)
       ON CONFLICT (singleton) DO UPDATE SET previous_instance = cluster_leader.instance,
         previous_alive = COALESCE(cluster_leader.alive, cluster_leader.since),
         instance = $1, url = $2, term = cluster_leader.term + 1, since = $3, alive = $3
       RETURNING term`,
      [instance, url, now.getTime()],
    );
    return Number(rows[0]?.term);
  }

  /** The leader is alive at `now` (every second or so): a takeover's gap is measured from the last one. */
  async heartbeat(instance: string, now: Date): Promise<void> {
    await this.session.query('UPDATE cluster_leader SET alive = $2 WHERE instance = $1', [instance, now.getTime()]);
  }

  /** The leader last announced (it may have died since: forwarding finds out). */
  async leader(): Promise<LeaderRecord | undefined> {
    const { rows } = await this.session
      // Every column: a leader of an earlier version may not have brought the heartbeat columns up yet.
      .query<LeaderRow>('SELECT * FROM cluster_leader')
      // No leader has brought the schema up yet.
      .catch((error: { code?: string }) => (error.code === '42P01' ? { rows: [] } : Promise.reject(error)));
    const row = rows[0];
    if (!row) return undefined;
    const time = (ms: string | number | null | undefined) =>
      ms === null || ms === undefined ? undefined : new Date(Number(ms));
    const alive = time(row.alive);
    const previousAlive = time(row.previous_alive);
    return {
      instance: row.instance,
      url: row.url,
      term: Number(row.term),
      since: new Date(Number(row.since)),
      ...(alive ? { alive } : {}),
      ...(row.previous_instance && previousAlive
        ? { previous: { instance: row.previous_instance, alive: previousAlive } }
        : {}),
    };
  }

  /** Called once when the session fails: a leader must stop acting on the plan at once. */
  onLost(callback: (error: Error) => void): void {
    this.lost = callback;
  }

  async close(): Promise<void> {
    this.lost = undefined;
    this.held = false;
    await this.session.end().catch(() => undefined);
  }
}
