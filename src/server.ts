import type { ServerConfig } from './engine/configuration/index.js';
import type { ExecutionService } from './engine/execution/index.js';
import type { NotificationService } from './engine/execution/index.js';
import type { MigratedJobs } from './engine/migration/index.js';
import type { MigrationRunner } from './engine/migration/index.js';
import { openFoundations, type ServerParts } from './assembly/foundations.js';
import { resumeWork, runTimeParts } from './assembly/run-time.js';
import { schedulingParts } from './assembly/scheduling.js';
import { restoreState, serviceParts } from './assembly/services.js';
import { followChanges, leaseNotices, startTimers } from './assembly/timers.js';
import { serveWeb } from './assembly/web.js';
import type { Route } from './web/route-list.js';
import { collectStartUpGarbage } from './assembly/start-up-garbage.js';

export { randomIds, systemClock, type ServerParts } from './assembly/foundations.js';
export { endpointsAt } from './assembly/web.js';

export interface RunningServer {
  url: string;
  /** The HTTPS base URL, when TLS is on (WSAG_TLS_PORT). */
  tlsUrl?: string;
  endpoints: Record<string, string>;
  /** The HTTP routes and SOAP operations served (what the authorisation matrix gives a rule to). */
  routes(): Route[];
  /** The run time (tests wait for it: `execution.idle()`). */
  execution: ExecutionService;
  notifications: NotificationService;
  /** The books follow agreements and negotiations (tests wait for them: `accounting.idle()`). */
  accounting: { idle(): Promise<void> };
  /** The Migration Controller's runs, when peers are configured. */
  migration?: MigrationRunner;
  /** Jobs that moved to peers, followed until the peers' agreements are over. */
  migrated?: MigratedJobs;
  close(): Promise<void>;
}

/**
 * Assembles the adapters around the engine and serves, part by part (src/assembly/): each
 * part stands on the ones before it, and the order is the order of start-up.
 */
export async function startServer(config: ServerConfig, parts: ServerParts = {}): Promise<RunningServer> {
  // Settings, logging, security, templates, the store and its observed repositories, the listeners.
  const base = await openFoundations(config, parts);
  // The planning scheduler over the site's nodes (and Slurm's, under Slurm).
  const scheduled = { ...base, ...(await schedulingParts(base)) };
  // Agreements, negotiations, reservations, the books.
  const served = { ...scheduled, ...serviceParts(scheduled) };
  // What was stored, put back: the plan, holds, reservations, funds holds.
  const restored = { ...served, ...(await restoreState(served)) };
  // Who runs the jobs, notifications, migration to peers.
  const assembled = { ...restored, ...runTimeParts(restored) };
  // The SOAP ports, the API and the dashboard answer from here on.
  const { endpoints, routes } = serveWeb(assembled);
  const leases = leaseNotices(assembled);
  restored.leaseEnds.length = 0; // watched now
  const stopTimers = startTimers(assembled, leases);
  followChanges(assembled, leases);
  const jobs = await resumeWork(assembled);
  collectStartUpGarbage(restored.counts.bookings);

  const { logger, urls, execution, notifications, accounting, migration, migrated } = assembled;
  logger.info(
    {
      url: urls.base,
      tlsUrl: urls.tls,
      anonymous: config.anonymous,
      templates: base.templates.list().length,
      clusterNodes: assembled.plan.clusterNodes,
      restoredBookings: restored.counts.bookings,
      holds: restored.counts.holds,
      executor: assembled.executorKind,
      jobsStarted: jobs.started,
      jobsResumed: jobs.resumed,
      peers: base.peers?.peers.length ?? 0,
    },
    'wsag-server listening',
  );
  return {
    url: urls.base,
    ...(urls.tls ? { tlsUrl: urls.tls } : {}),
    endpoints,
    routes,
    execution,
    notifications,
    accounting: accounting.settlement,
    ...(migration ? { migration } : {}),
    ...(migrated ? { migrated } : {}),
    async close() {
      stopTimers();
      await assembled.executor.close();
      await execution.idle();
      await assembled.plan.settle();
      await accounting.settlement.idle();
      await assembled.slurm?.idle();
      if (!parts.front) await base.front.close();
      await base.documents.close();
      if (!parts.store) await base.store?.close();
      base.lock?.release();
    },
  };
}
