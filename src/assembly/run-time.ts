import { receivedDirOf } from '../web/checkpoint-upload.js';
import fs from 'node:fs';
import path from 'node:path';
import { WsagPeerProviders } from '../client/peer-providers.js';
import { ExecutionService } from '../engine/execution/index.js';
import { NotificationService, type StateNotification } from '../engine/execution/index.js';
import { MigratedJobs } from '../engine/migration/index.js';
import { MigrationController, type MigrationReport } from '../engine/migration/index.js';
import { MigrationRunner } from '../engine/migration/index.js';
import { planWhatIf } from '../engine/migration/index.js';
import { releaseBoundStandby } from '../engine/migration/index.js';
import type { Clock } from '../engine/ports.js';
import type { JobExecutor } from '../engine/execution/index.js';
import type { PeerProviders } from '../engine/migration/index.js';
import {
  LocalProcessResourceManager,
  NoExecutor,
  RuntimeExecutor,
  SimulatedResourceManager,
  SystemClock,
  type RuntimeClock,
} from '../runtime/index.js';
import { OutboundPolicy } from '../client/outbound.js';
import { ReportFiles } from '../store/report-files.js';
import { SubscriptionFile } from '../store/subscription-file.js';
import { withXml } from '../xml/libxml.js';
import { readOffer } from '../xml/offer-reader.js';
import { randomIds, type Foundations } from './foundations.js';
import type { Scheduling } from './scheduling.js';
import type { Services } from './services.js';

/** Who runs the jobs, and what follows them: the execution service, notifications, migration to peers. */
export interface RunTime {
  execution: ExecutionService;
  notifications: NotificationService;
  /** The Migration Controller's runs, when peers are configured. */
  migration?: MigrationRunner;
  /** Jobs that moved to peers, followed until the peers' agreements are over. */
  migrated?: MigratedJobs;
  providers?: PeerProviders;
  executor: JobExecutor;
  executorKind: string;
  /** Where checkpoints received from peers land. */
  receivedDir: string;
}

/**
 * The run time and what hangs on it: the executor (WSAG_EXECUTOR) on its clock, the
 * execution service with its reports, notifications, and with peers the Migration
 * Controller (docs/operations.md "Running with a real executor", "Peers and migration").
 */
export function runTimeParts(base: Foundations & Scheduling & Services): RunTime {
  const { config, parts, clock, logger, repository, agreements, plan, peers, slurm } = base;
  const audit = base.store?.audit;
  const onError = (error: unknown) => logger.error({ err: error }, 'the run time failed');
  const hasTimers = (c: Clock | undefined): c is RuntimeClock =>
    typeof (c as Partial<RuntimeClock> | undefined)?.at === 'function';
  const runtimeClock =
    parts.runtimeClock ?? (hasTimers(parts.clock) ? parts.clock : parts.clock ? undefined : new SystemClock(onError));
  const executorKind = runtimeClock ? config.executor : 'none';
  if (config.executor !== 'none' && !runtimeClock)
    logger.info('the run time is off: the server was given a clock without timers');
  fs.mkdirSync(config.checkpointDir, { recursive: true });
  const receivedDir = receivedDirOf(config.checkpointDir);
  fs.mkdirSync(receivedDir, { recursive: true });
  let executor: JobExecutor = new NoExecutor();
  if (runtimeClock && executorKind !== 'none') {
    const resourceManager =
      parts.resourceManager ??
      (executorKind === 'simulated'
        ? new SimulatedResourceManager(runtimeClock)
        : executorKind === 'slurm' && slurm
          ? slurm.resourceManager
          : new LocalProcessResourceManager({
              directory: path.join(config.checkpointDir, 'jobs'),
              cpuTimeScale: config.cpuTimeScale,
            }));
    executor = new RuntimeExecutor({ clock: runtimeClock, resourceManager, onError });
  }
  const termsOf = (agreement: { document: string }) =>
    withXml(agreement.document, 'agreement', (doc) => readOffer(doc.root).guaranteeTerms);
  const onProblem = (message: string, details: { agreementId?: string; error?: unknown }) =>
    logger.warn(
      { agreementId: details.agreementId, ...(details.error !== undefined ? { err: details.error } : {}) },
      message,
    );
  const providers = peers ? (parts.peerProviders ?? new WsagPeerProviders()) : undefined;
  let migration: MigrationRunner | undefined;
  let migrated: MigratedJobs | undefined;
  const execution: ExecutionService = new ExecutionService({
    repository,
    agreements,
    plan,
    executor,
    clock,
    reports: new ReportFiles(path.join(config.dataDir, 'reports')),
    termsOf,
    ...(audit ? { audit } : {}),
    // Standby capacity this server holds for another provider's Full job runs only once the job's checkpoint arrives.
    waitsForCheckpoint: (agreement) => agreement.name?.startsWith('standby ') ?? false,
    onProblems: async (now) => migration?.run(now),
    ...(audit && peers && providers
      ? { afterRun: (agreement) => releaseBoundStandby(agreement, { audit, peers, providers }) }
      : {}),
    onProblem,
  });
  if (peers && providers) {
    const controller = new MigrationController({
      peers,
      providers,
      timing: plan.cluster.timing,
      schedule: planWhatIf(plan.manager, () => clock.now()),
      currency: config.currency,
      providerName: config.providerName,
      checkpointOf: (id) => execution.checkpointOf(id),
      release: (id) => execution.releaseMigrated(id),
      record: (id, record) => (migration as MigrationRunner).record(id, record),
    });
    migrated = new MigratedJobs({ repository, agreements, peers, providers, clock, onProblem });
    migration = new MigrationRunner({
      controller,
      repository,
      agreements,
      plan,
      termsOf,
      onProblem,
      onReport: (report: MigrationReport) => {
        if (report.problematicBefore.length === 0) return;
        logger.info(
          {
            migrated: report.jobs
              .filter((j) => j.migrated)
              .map((j) => ({ id: j.agreementId, peer: j.peer, remote: j.remoteAgreementId })),
            violations: report.violations,
          },
          'migration run',
        );
      },
    });
  }
  const outbound = new OutboundPolicy(config.outboundAllow);
  const notifications = new NotificationService({
    agreements,
    subscriptions: new SubscriptionFile(path.join(config.dataDir, 'subscriptions.json')),
    ids: parts.ids ?? randomIds,
    clock,
    checkUrl: (url) => outbound.check(url, 'the callback'),
    send: async (url, notification) => {
      await outbound.check(url, 'the callback');
      await postNotification(url, notification);
    },
    wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
    ...(parts.notificationBackoffMs !== undefined ? { backoffMs: parts.notificationBackoffMs } : {}),
    onFailure: (subscription, error, final) =>
      logger.warn(
        { agreementId: subscription.agreementId, url: subscription.url, err: error, final },
        final
          ? 'a notification could not be delivered; given up'
          : 'a notification could not be delivered; trying again',
      ),
    onError: (error) => logger.error({ err: error }, 'sending notifications failed'),
  });
  return {
    execution,
    notifications,
    ...(migration ? { migration } : {}),
    ...(migrated ? { migrated } : {}),
    ...(providers ? { providers } : {}),
    executor,
    executorKind,
    receivedDir,
  };
}

/** POSTs one notification as JSON; anything but a 2xx answer within 10 s is a failure. */
async function postNotification(url: string, notification: StateNotification): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(notification),
    signal: AbortSignal.timeout(10_000),
    redirect: 'manual', // not followed: the next address would not have been checked
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
}

/**
 * Once serving: the jobs of agreements live at start-up start, or resume where they were;
 * Slurm jobs an earlier run of the server left that no agreement runs any more are cancelled.
 */
export async function resumeWork(
  base: Foundations & Scheduling & Services & RunTime,
): Promise<{ started: number; resumed: number }> {
  const { logger, execution, slurm } = base;
  const resumed = await execution.resume();
  base.accounting.afterStart();
  if (base.executorKind === 'slurm' && slurm) {
    const cancelled = await slurm.resourceManager.cancelOrphans((id) => base.executor.has(id));
    if (cancelled.length > 0) logger.warn({ slurmJobs: cancelled }, 'cancelled Slurm jobs no agreement runs');
  }
  for (const { id, reason } of resumed.notExecuted)
    logger.info({ agreementId: id, reason }, "an agreement's job is not executed");
  return { started: resumed.started.length, resumed: resumed.resumed.length };
}
