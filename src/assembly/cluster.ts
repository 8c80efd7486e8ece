import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { pino } from 'pino';
import type { ServerConfig } from '../engine/configuration/index.js';
import { endpointsAt, startServer, type RunningServer, type ServerParts } from '../server.js';
import { Front } from './front.js';
import { paths } from '../soap/agreement-ports.js';
import { negotiationPaths } from '../soap/negotiation-ports.js';
import { PgLeadership, type LeaderRecord } from '../store/postgres/pg-leadership.js';
import { PgStore } from '../store/postgres/pg-store.js';
import type { ClusterState } from '../web/cluster-state.js';
import { health, standbyApp } from '../web/forwarding.js';
import { TrustStore } from '../crypto/trust-store.js';
import type { Caller } from '../domain/identity.js';
import { authenticator, tlsClientCertificate } from '../soap/authentication.js';
import type { IncomingMessage } from 'node:http';

/** One instance of a cluster on one PostgreSQL database (docs/deployment.md "Several instances"). */
export interface RunningInstance {
  url: string;
  endpoints: Record<string, string>;
  tlsUrl?: string;
  /** The planning leader serves; a standby forwards to it and stands ready to take over. */
  role(): 'leader' | 'standby';
  /** The server, once this instance leads (at once if it does). */
  leading(): Promise<RunningServer>;
  close(): Promise<void>;
}

export interface InstanceOptions {
  /** How often a standby tries to take the leadership. Default 1000 ms. */
  pollMs?: number;
  /** How long a forwarded request waits for a leader. Default 15 s. */
  leaderWaitMs?: number;
  /** After the leader lost its database session and stopped planning (`npm start` exits: crash-only). */
  onLeadershipLost?: (error: Error) => void;
}

/**
 * An instance among several sharing one PostgreSQL database. One of them, the planning
 * leader, holds the database's leadership lock and runs the whole server (the plan, the
 * timers, the run time); the others forward every request to it and try the lock every
 * second. When the leader dies its session ends, its lock goes with it, and the first
 * standby to take it starts as a server restarting would (the plan rebuilt from the stored
 * agreements, holds and their expiry, jobs resumed), then announces itself.
 */
export async function startInstance(
  config: ServerConfig,
  parts: ServerParts = {},
  options: InstanceOptions = {},
): Promise<RunningInstance> {
  const databaseUrl = config.databaseUrl;
  if (!databaseUrl) throw new Error('startInstance needs WSAG_DATABASE_URL');
  const logger = parts.logger ?? pino({ level: config.logLevel });
  const pollMs = options.pollMs ?? 1000;
  const front = await Front.open(config);
  const instanceUrl = config.instanceUrl ?? front.url;
  const instance = `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  let session: PgLeadership | undefined;
  let leader: { server: RunningServer; store: PgStore } | undefined;
  let announced: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let becameLeader: (server: RunningServer) => void = () => {};
  let leadingPromise = new Promise<RunningServer>((resolve) => (becameLeader = resolve));
  // The leader as the database last named it: a standby reads it at each try, the leader after announcing.
  let record: LeaderRecord | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const clusterState = (): ClusterState => {
    const role = leader ? 'leader' : 'standby';
    if (!record) return { role, instance };
    const { previous, ...current } = record;
    const gapMs = previous ? Math.max(0, current.since.getTime() - previous.alive.getTime()) : 0;
    return {
      role,
      instance,
      leader: current,
      ...(previous
        ? { lastTakeover: { previous: previous.instance, at: current.since, gapSeconds: gapMs / 1000 } }
        : {}),
    };
  };

  const identify = standbyCaller(config);
  const standby = standbyApp({
    identify,
    leaderUrl: async (fresh) => {
      if (fresh || announced === undefined) announced = (await session?.leader())?.url;
      return announced;
    },
    instanceUrl,
    ...(config.clusterSecret ? { secret: config.clusterSecret } : {}),
    maxBodyBytes: config.maxBodyBytes,
    ...(options.leaderWaitMs !== undefined ? { waitMs: options.leaderWaitMs } : {}),
    soapPaths: Object.values({ ...paths, ...negotiationPaths }),
    now: () => new Date(),
    logger,
    cluster: clusterState,
  });
  front.serve(standby);

  const lead = async (held: PgLeadership): Promise<void> => {
    held.onLost((error) => void stepDown(error));
    const store = await PgStore.open(databaseUrl);
    let server: RunningServer | undefined;
    try {
      server = await startServer(config, { ...parts, logger, front, store, cluster: clusterState });
      // The session may have failed while the server started: then another instance leads.
      if (session !== held) throw new Error('the planning leadership was lost while this instance started');
      const app = front.current;
      // Load balancers and operators see which instance leads.
      front.serve((req, res) =>
        req.url === '/healthz'
          ? res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify(health('leader', instanceUrl, req, identify)))
          : app(req, res),
      );
      const term = await held.announce(instance, instanceUrl, new Date());
      record = await held.leader();
      leader = { server, store };
      beat(held);
      logger.info({ instance, url: instanceUrl, term }, 'this instance is the planning leader');
      becameLeader(server);
    } catch (error) {
      front.serve(standby);
      await server?.close().catch(() => undefined);
      await store.close();
      throw error;
    }
  };

  /** The leader's heartbeat: the next leader measures the takeover's gap from the last one. */
  const beat = (held: PgLeadership): void => {
    heartbeat = setTimeout(() => {
      const now = new Date();
      held
        .heartbeat(instance, now)
        .then(() => {
          if (record?.instance === instance) record.alive = now;
        })
        .catch((error: unknown) => logger.warn({ err: error }, "writing the planning leader's heartbeat failed"))
        .finally(() => {
          if (session === held && leader) beat(held);
        });
    }, pollMs);
    heartbeat.unref();
  };

  const stepDown = async (error: Error): Promise<void> => {
    clearTimeout(heartbeat);
    options.onLeadershipLost?.(error);
    logger.error(
      { err: error, instance },
      'the planning leadership is lost (its database session ended): this instance stops planning and stands by',
    );
    front.serve(standby);
    const was = leader;
    const lost = session;
    leader = undefined;
    session = undefined;
    leadingPromise = new Promise<RunningServer>((resolve) => (becameLeader = resolve));
    await lost?.close();
    await was?.server
      .close()
      .catch((e: unknown) => logger.warn({ err: e }, "stopping the former leader's parts failed"));
    await was?.store.close().catch(() => undefined);
    later();
  };

  /** The next try at the leadership, after `pollMs`; a failed takeover is logged and tried again. */
  const later = (): void => {
    if (closed) return;
    timer = setTimeout(() => {
      attempt().catch((error: unknown) => {
        logger.error({ err: error }, 'taking over the planning leadership failed; trying again');
        later();
      });
    }, pollMs);
  };

  /** One try at the leadership; a standby tries again after `pollMs`. Throws only when taking the lead fails. */
  const attempt = async (): Promise<void> => {
    if (closed) return;
    let held: PgLeadership | undefined;
    try {
      session ??= await PgLeadership.connect(databaseUrl);
      if (await session.tryAcquire()) held = session;
      else record = await session.leader();
    } catch (error) {
      logger.warn({ err: error }, 'the database cannot be reached to try the planning leadership; trying again');
      await session?.close();
      session = undefined;
    }
    if (held) {
      await lead(held).catch(async (error: unknown) => {
        await held.close();
        if (session === held) session = undefined;
        throw error;
      });
      return;
    }
    later();
  };

  await attempt().catch(async (error: unknown) => {
    await front.close();
    throw error;
  });
  if (!leader)
    logger.info({ instance, url: instanceUrl }, 'this instance stands by: requests go to the planning leader');

  const url = config.publicUrl?.replace(/\/$/, '') ?? front.url;
  return {
    url,
    endpoints: endpointsAt(url),
    ...(front.tlsUrl ? { tlsUrl: front.tlsUrl } : {}),
    role: () => (leader ? 'leader' : 'standby'),
    leading: () => leadingPromise,
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(heartbeat);
      const was = leader;
      leader = undefined;
      await was?.server.close();
      await was?.store.close();
      await session?.close();
      await front.close();
    },
  };
}

/**
 * Who calls a standby's own routes (/healthz, /metrics): a TLS client certificate from a trusted CA, or anonymous where
 * the site allows it.
 */
function standbyCaller(config: ServerConfig): (req: IncomingMessage) => Caller {
  const trust = fs.existsSync(config.caFile) ? TrustStore.fromFile(config.caFile) : undefined;
  const identify = authenticator({
    proofs: trust ? [tlsClientCertificate((chain, at) => trust.validate(chain, at))] : [],
    anonymous: config.anonymous,
    admins: config.admins,
  });
  return (req) => identify(req, undefined, new Date());
}

/**
 * What the server writes is for its own user alone (the database, subscriptions, reports,
 * checkpoints, keys): files 0600 and directories 0700, the data directory included.
 */
function keepPrivate(dataDir: string): void {
  process.umask(0o077);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
}

/**
 * The server as `npm start` and `wsag serve` run it: on PostgreSQL an instance of a cluster
 * (a planning leader or a standby), else one server. An instance that loses its leadership
 * exits (code 75): crash-only, its supervisor starts it again as a standby (docs/deployment.md).
 */
export function startConfigured(config: ServerConfig): Promise<RunningServer | RunningInstance> {
  keepPrivate(config.dataDir);
  return config.databaseUrl
    ? startInstance(config, {}, { onLeadershipLost: () => process.exit(75) })
    : startServer(config);
}
