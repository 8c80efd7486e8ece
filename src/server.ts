import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { liveStates } from './domain/agreement-state-machine.js';
import { slurmCluster } from './runtime/slurm/slurm-plan-sync.js';
import { SlurmSite } from './runtime/slurm/slurm-site.js';
import { VoUsage } from './engine/accounting/vo-usage.js';
import { accountingParts } from './server-accounting.js';
import { LeaseNotices } from './engine/execution/lease-notices.js';
import { pino, type Logger } from 'pino';
import { loadCredential } from './crypto/credentials.js';
import { TrustStore } from './crypto/trust-store.js';
import { signAgreement, verifyAgreementSignatures } from './crypto/xml-signature.js';
import { authenticator, forwardedClientChain, tlsClientCertificate, wsSecuritySignature, type ChainValidator } from './soap/authentication.js';
import { AgreementFactory } from './engine/agreements/agreement-factory.js';
import { ObservedAgreementRepository } from './engine/agreements/agreement-changes.js';
import { AgreementExpiry } from './engine/agreements/agreement-expiry.js';
import { AgreementService } from './engine/agreements/agreement-service.js';
import { AuditService } from './engine/audit/audit-service.js';
import { clusterDescription, ConfigError, type ServerConfig } from './engine/configuration/config.js';
import { ExecutionService } from './engine/execution/execution-service.js';
import { MigrationController, type MigrationReport } from './engine/migration/migration-controller.js';
import { MigratedJobs } from './engine/migration/migrated-jobs.js';
import { MigrationRunner } from './engine/migration/migration-runner.js';
import { planWhatIf } from './engine/migration/migration-schedule.js';
import { RemoteStandby } from './engine/migration/migration-standby.js';
import { releaseBoundStandby } from './engine/migration/standby-release.js';
import { NegotiationService } from './engine/negotiation/negotiation-service.js';
import { NotificationService, type StateNotification } from './engine/execution/notifications.js';
import { readPeersFile, type PeersConfig } from './engine/migration/peers.js';
import type { AccountStore, UsageRecordStore, AgreementRepository, AgreementSignatureVerifier, AgreementSigner, AuditLog, Clock, IdSource, JobExecutor, NegotiationRepository, PeerProviders } from './engine/ports.js';
import { persistPlanChanges } from './engine/planning/plan-persistence.js';
import { PlanningService } from './engine/planning/planning-service.js';
import { ReservationUse } from './engine/agreements/reservation-use.js';
import { SoapAcceptanceNotifier } from './client/acceptance-notifier.js';
import { WsagPeerProviders } from './client/peer-providers.js';
import { LocalProcessResourceManager, NoExecutor, RuntimeExecutor, SimulatedResourceManager, SystemClock, type ResourceManager, type RuntimeClock } from './runtime/index.js';
import { agreementPorts, paths } from './soap/agreement-ports.js';
import { negotiationPaths, negotiationPorts } from './soap/negotiation-ports.js';
import { ReportFiles } from './store/report-files.js';
import { signUsageRecord } from './crypto/usage-record-signature.js';
import { DataDirLock } from './store/data-dir-lock.js';
import { openServerStore, type ServerStore } from './server-store.js';
import { Front } from './server-front.js';
import { SubscriptionFile } from './store/subscription-file.js';
import { createApp } from './web/app.js';
import { checkpointFileOf, fileCheckpointStore } from './web/checkpoint-upload.js';
import { withXml } from './xml/libxml.js';
import { readOffer } from './xml/offer-reader.js';
import { XmlAgreementWriter } from './xml/agreement-writer.js';
import { XmlNegotiationWriter } from './xml/negotiation-writer.js';
import { SchemaSet } from './xml/schema-set.js';
import { TemplateLibrary } from './xml/template-library.js';
import type { MetricsSources } from './web/metrics.js';
import { Observability } from './server-observability.js';

export const systemClock: Clock = { now: () => new Date() };
export const randomIds: IdSource = { next: () => crypto.randomUUID() };

export interface RunningServer {
  url: string;
  /** The HTTPS base URL, when TLS is on (WSAG_TLS_PORT). */
  tlsUrl?: string;
  endpoints: Record<string, string>;
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

export interface ServerParts {
  /** Both repositories, or neither: by default they share one SQLite file in the data directory. */
  repository?: AgreementRepository;
  negotiationRepository?: NegotiationRepository;
  /** The accounting books and usage records; default the SQLite store's, or memory when the repositories are given. */
  accounts?: AccountStore;
  usageRecords?: UsageRecordStore;
  clock?: Clock;
  ids?: IdSource;
  logger?: Logger;
  /**
   * The clock the run time sets its timers on. Default: `clock` when it has timers (a
   * SimulatedClock), the system clock when no clock is given; a `clock` without timers (a
   * fixed time) turns the run time off.
   */
  runtimeClock?: RuntimeClock;
  /** Runs the jobs (tests hand in a SimulatedResourceManager they inspect). Default: WSAG_EXECUTOR's. */
  resourceManager?: ResourceManager;
  /** Speaks to the peers (default: the WS-Agreement client). */
  peerProviders?: PeerProviders;
  /** Notification delivery: the wait before the second attempt, doubling after. Default 1000 ms. */
  notificationBackoffMs?: number;
  /** Listeners already open (an instance of a cluster that became the planning leader); kept open by `close`. */
  front?: Front;
  /** The database, opened and locked by the caller (the leader of a cluster); kept open by `close`. */
  store?: ServerStore;
}

/** With peers but no configured budget, Full jobs are not limited by the scheduler's count of standby nodes: each holds its own at a peer (RemoteStandby). */
const standbyAtPeersBudget = 1_000_000;

/** How often held preparatory reservations are checked for expiry, and the plan's clock moves on. */
const expiryIntervalMs = 1000;
/** How often peers are asked about the jobs that moved to them. */
const followMigratedIntervalMs = 30_000;

/** The SOAP ports' addresses under a base URL. */
export const endpointsAt = (baseUrl: string): Record<string, string> =>
  Object.fromEntries(Object.entries({ ...paths, ...negotiationPaths }).map(([name, p]) => [name, baseUrl + p]));

/** Assembles the adapters around the engine and listens. */
export async function startServer(config: ServerConfig, parts: ServerParts = {}): Promise<RunningServer> {
  const logger = parts.logger ?? pino({ level: config.logLevel });
  const clock = parts.clock ?? systemClock;
  SchemaSet.get(); // compile once at start-up: a broken schema stops the server here
  const { trust, signer, recordSigner } = securityParts(config);
  const templates = TemplateLibrary.fromDirectory(config.templatesDir);
  const peers = config.peers ?? (config.peersFile ? readPeersFile(config.peersFile) : undefined);
  const ownStore = !(parts.repository && parts.negotiationRepository) && !parts.store;
  // One writer per data directory: a second process would book the same nodes again (a cluster's leader holds the database's lock instead).
  const lock = ownStore ? DataDirLock.acquire(config.dataDir, clock.now()) : undefined;
  const store = parts.store ?? (ownStore ? await openServerStore(config).catch((error: unknown) => { lock?.release(); throw error; }) : undefined);
  const front = parts.front ?? await Front.open(config).catch(async (error: unknown) => { await store?.close(); lock?.release(); throw error; });
  // Every stored change of an agreement reaches the run time and the notifications.
  const observed: Observability = new Observability((): MetricsSources => ({ agreements: repository, plan, now: () => clock.now() }), logger);
  const repository: ObservedAgreementRepository = new ObservedAgreementRepository(observed.timed(parts.repository ?? (store as ServerStore).agreements), (error) =>
    logger.error({ err: error }, 'following an agreement change failed'));
  const negotiationRepository = parts.negotiationRepository ?? (store as ServerStore).negotiations;
  // Agreements stored before the audit trail existed (migration 5) get an entry pinning their document as found.
  if (store) await new AuditService({ audit: store.audit, agreements: repository }).recordUnaudited(clock.now(), await store.agreementsWithoutAudit());
  const ids = parts.ids ?? randomIds;
  const prices = { currency: config.currency, nodeHour: config.nodeHourPrice, preparatoryFeeRate: config.preparatoryFeeRate, curve: config.priceCurve };
  // WSAG_EXECUTOR=slurm: the nodes are Slurm's (docs/operations.md "Slurm").
  const cluster = config.executor === 'slurm' ? await slurmCluster(config.slurm ?? {}, clusterDescription(config)) : clusterDescription(config);
  if (peers && peers.peers.length > 0 && cluster.peerStandbyNodes === 0) cluster.peerStandbyNodes = standbyAtPeersBudget;
  // Under Slurm, agreements may name what they run, among the executables the site allows.
  const applications = config.executor === 'slurm' ? { runsApplications: true, executablePrefixes: config.slurm?.executables ?? [] } : undefined;
  const plan = new PlanningService(cluster, prices, config.planningHorizonDays * 86_400, applications);
  plan.interactiveStartSeconds = config.interactiveStartSeconds;
  plan.onReplan = (cause, seconds, report) => observed.replanned(cause, seconds, report);
  const slurm = config.executor === 'slurm' ? new SlurmSite(config.slurm ?? {}, {
    booked: () => plan.booked(),
    now: () => clock.now(),
    jobsDirectory: path.join(config.checkpointDir, 'jobs'),
    cpuTimeScale: config.cpuTimeScale,
    log: logger,
  }) : undefined;
  const agreements = new AgreementService(repository, plan, clock, new SoapAcceptanceNotifier(), (agreementId, error) =>
    logger.warn({ agreementId, err: error }, 'could not tell the initiator about the decision on its pending agreement'),
  );
  // The books, usage records and VO shares (issue 14): holds where capacity is promised, the ledger following what happens.
  let baseUrl = config.publicUrl?.replace(/\/$/, '') ?? '';
  const accounting = accountingParts({
    config, store, given: parts, repository, negotiationRepository, plan, prices, clock, logger, recordSigner, baseUrl: () => baseUrl, readPolicy: attempt,
  });
  const { charging, shares } = accounting;
  const negotiations = new NegotiationService({
    negotiations: accounting.negotiations,
    charging,
    ...(shares ? { shares } : {}),
    agreements: repository,
    templates,
    documents: new XmlNegotiationWriter(),
    plan,
    clock,
    ids,
    settings: {
      holdSeconds: config.holdSeconds,
      maxRounds: config.negotiationMaxRounds,
      maxSeconds: config.negotiationMaxSeconds,
      advisorySlots: config.advisorySlots,
      prices,
      providerName: config.providerName,
    },
  });
  const reservations = new ReservationUse(repository, agreements);
  // Bookings the scheduler moves are stored again: agreements, and holds in their negotiations.
  persistPlanChanges(plan, agreements, negotiations, (key, error) =>
    logger.error({ booking: key, err: error }, 'storing an allocation the scheduler moved failed; a restart places it again'),
  );
  // Agreements first: a hold whose agreement was stored just before a crash is confirmed, not booked twice.
  // Read once at start-up: the plan is rebuilt from it, and wsag:ExpirationTime is watched on it
  // (agreements that expired while the server was down end at the first tick).
  const stored = await repository.list({ state: liveStates });
  const { restored, lost } = await agreements.restorePlanReport(stored);
  const expiration = new AgreementExpiry(agreements);
  for (const agreement of stored) {
    expiration.watch(agreement);
    shares?.own(agreement.id, VoUsage.ownerOf(agreement.request, agreement.initiator));
  }
  for (const { id, reason } of lost) logger.warn({ agreementId: id, reason }, 'an agreement\'s capacity could not be booked again at start-up');
  const holds = await negotiations.restore();
  await reservations.restore();
  const settled = await accounting.restore();
  if (settled > 0) logger.info({ holds: settled }, 'funds holds settled or released at start-up');
  await plan.settle();
  const runTime = runTimeParts(config, parts, clock, logger, store?.audit, repository, agreements, plan, peers, slurm);
  const { execution, notifications, migration, migrated, providers } = runTime;
  const factory = new AgreementFactory({
    templates,
    repository,
    documents: new XmlAgreementWriter(),
    plan,
    clock,
    ids,
    providerName: config.providerName,
    prices,
    negotiations,
    agreements,
    reservations,
    charging,
    ...(shares ? { shares } : {}),
    ...(signer ? { signer } : {}),
    ...(peers && providers ? { standby: new RemoteStandby({ peers, providers, providerName: config.providerName }) } : {}),
  });
  const services = { factory, agreements, negotiations, templates };
  const validateChain: ChainValidator | undefined = trust && ((chain, at) => trust.validate(chain, at));
  const signatures: AgreementSignatureVerifier | undefined = validateChain && {
    verify: (document, at) => verifyAgreementSignatures(document, { validateChain, at }),
  };
  const identify = authenticator({
    proofs: [forwardedClientChain(validateChain, config.clusterSecret), ...(validateChain ? [tlsClientCertificate(validateChain), wsSecuritySignature(validateChain)] : [])],
    anonymous: config.anonymous,
    admins: config.admins,
  });

  let tlsUrl: string | undefined;
  const app = createApp({
    ports: [...agreementPorts(services), ...negotiationPorts(services)],
    agreements,
    negotiations,
    plan,
    ...(signatures ? { signatures } : {}),
    maxBodyBytes: config.maxBodyBytes,
    maxXmlDepth: config.maxXmlDepth,
    // EPRs name the port the request came in on: HTTPS for TLS callers.
    baseUrl: (req) => (config.publicUrl === undefined && tlsUrl && (req?.socket as { encrypted?: boolean } | undefined)?.encrypted ? tlsUrl : baseUrl),
    identify,
    now: () => clock.now(),
    logger,
    execution,
    notifications,
    accounts: accounting.accounts,
    usage: accounting.recording,
    ...(shares ? { shares } : {}),
    prices,
    metrics: observed.metrics,
    events: observed.events,
    ...(store ? { history: (id: string) => new AuditService({ audit: store.audit, agreements: repository }).history(id) } : {}),
    checkpointUpload: {
      agreement: (id) => repository.get(id),
      store: async (upload) => {
        await fileCheckpointStore(runTime.receivedDir)(upload);
        await execution.checkpointReceived(upload.agreementId, checkpointFileOf(runTime.receivedDir, upload.agreementId), upload);
      },
      maxBytes: config.maxCheckpointBytes,
      tempDir: runTime.receivedDir,
    },
  });
  front.serve(app);
  if (!baseUrl) baseUrl = front.url;
  tlsUrl = front.tlsUrl;
  const endpoints = endpointsAt(baseUrl);
  let advancing = false;
  // Slurm reports node failures and repairs as an operator would through /api/nodes/ID/fail and /repair.
  slurm?.watch({
    down: async (node, reason) => {
      if (!plan.hasNode(node)) return;
      const outcome = await execution.nodeFailed(node, 'slurm');
      logger.warn({ node, reason, moved: outcome.moved, problematic: outcome.problematic }, 'Slurm reports a node failed: re-planned');
    },
    up: async (node) => {
      if (!plan.hasNode(node)) return;
      const outcome = await execution.nodeRepaired(node, 'slurm');
      logger.info({ node, moved: outcome.moved }, 'Slurm reports a node available again: re-planned');
    },
  }, runTime.executorKind === 'slurm');
  // Leases: their holders hear before their windows end.
  const leases = new LeaseNotices(config.leaseNoticeSeconds, (id) => repository.get(id), (agreement, end) => notifications.leaseEnding(agreement, end));
  for (const agreement of stored) leases.watch(agreement);
  const expiry = setInterval(() => {
    negotiations.expireDue().then(
      (expired) => expired > 0 && logger.info({ expired }, 'preparatory reservations expired; fees charged'),
      (error: unknown) => logger.error({ err: error }, 'releasing expired holds failed'),
    );
    expiration.expireDue(clock.now()).then(
      (ended) => ended.length > 0 && logger.info({ agreements: ended }, 'agreements reached their wsag:ExpirationTime: ended, capacity released'),
      (error: unknown) => logger.error({ err: error }, 'ending expired agreements failed'),
    );
    if (!advancing) {
      advancing = true;
      execution.advance(clock.now()).then(
        (report) => report && logger.warn({ report }, 'a node is still failed after the problem horizon: re-planned'),
        (error: unknown) => logger.error({ err: error }, 'moving the plan\'s clock failed'),
      ).finally(() => {
        advancing = false;
      });
    }
    void plan.settle();
    slurm?.tick();
    void leases.noticeDue(clock.now()).catch((error: unknown) => logger.error({ err: error }, 'sending lease notices failed'));
  }, expiryIntervalMs);
  expiry.unref();
  // Jobs that moved to peers: their agreements here complete once the peers' are over.
  const following = migrated && setInterval(() => {
    migrated.check().then(
      (completed) => completed.length > 0 && logger.info({ completed }, 'migrated jobs ended at their peers'),
      (error: unknown) => logger.error({ err: error }, 'following migrated jobs failed'),
    );
  }, followMigratedIntervalMs);
  following?.unref();
  // Agreements follow their jobs from here on; those live at start-up start, or resume where they were.
  repository.onChange((change) => {
    observed.agreementChanged(change);
    leases.watch(change.after);
    execution.agreementChanged(change);
    notifications.agreementChanged(change);
    accounting.agreementChanged(change);
    expiration.watch(change.after);
  });
  const resumed = await execution.resume();
  accounting.afterStart();
  // Slurm jobs an earlier run of the server left that no agreement runs any more.
  if (runTime.executorKind === 'slurm' && slurm) {
    const cancelled = await slurm.resourceManager.cancelOrphans((id) => runTime.executor.has(id));
    if (cancelled.length > 0) logger.warn({ slurmJobs: cancelled }, 'cancelled Slurm jobs no agreement runs');
  }
  for (const { id, reason } of resumed.notExecuted) logger.info({ agreementId: id, reason }, 'an agreement\'s job is not executed');
  logger.info({ url: baseUrl, tlsUrl, anonymous: config.anonymous, templates: templates.list().length, clusterNodes: plan.clusterNodes, restoredBookings: restored, holds,
    executor: runTime.executorKind, jobsStarted: resumed.started.length, jobsResumed: resumed.resumed.length, peers: peers?.peers.length ?? 0 }, 'wsag-server listening');
  return {
    url: baseUrl,
    ...(tlsUrl ? { tlsUrl } : {}),
    endpoints,
    execution,
    notifications,
    accounting: accounting.settlement,
    ...(migration ? { migration } : {}),
    ...(migrated ? { migrated } : {}),
    async close() {
      clearInterval(expiry);
      if (following) clearInterval(following);
      await runTime.executor.close();
      await execution.idle();
      await plan.settle();
      await accounting.settlement.idle();
      await slurm?.idle();
      if (!parts.front) await front.close();
      if (!parts.store) await store?.close();
      lock?.release();
    },
  };
}

/**
 * The run time and what hangs on it: the executor (WSAG_EXECUTOR) on its clock, the
 * execution service with its reports, notifications, and with peers the Migration
 * Controller (docs/operations.md "Running with a real executor", "Peers and migration").
 */
function runTimeParts(
  config: ServerConfig,
  parts: ServerParts,
  clock: Clock,
  logger: Logger,
  audit: AuditLog | undefined,
  repository: AgreementRepository,
  agreements: AgreementService,
  plan: PlanningService,
  peers: PeersConfig | undefined,
  slurm: SlurmSite | undefined,
) {
  const onError = (error: unknown) => logger.error({ err: error }, 'the run time failed');
  const hasTimers = (c: Clock | undefined): c is RuntimeClock => typeof (c as Partial<RuntimeClock> | undefined)?.at === 'function';
  const runtimeClock = parts.runtimeClock ?? (hasTimers(parts.clock) ? parts.clock : parts.clock ? undefined : new SystemClock(onError));
  const executorKind = runtimeClock ? config.executor : 'none';
  if (config.executor !== 'none' && !runtimeClock) logger.info('the run time is off: the server was given a clock without timers');
  fs.mkdirSync(config.checkpointDir, { recursive: true });
  const receivedDir = path.join(config.checkpointDir, 'received');
  fs.mkdirSync(receivedDir, { recursive: true });
  let executor: JobExecutor = new NoExecutor();
  if (runtimeClock && executorKind !== 'none') {
    const resourceManager = parts.resourceManager ?? (executorKind === 'simulated'
      ? new SimulatedResourceManager(runtimeClock)
      : executorKind === 'slurm' && slurm ? slurm.resourceManager
      : new LocalProcessResourceManager({ directory: path.join(config.checkpointDir, 'jobs'), cpuTimeScale: config.cpuTimeScale }));
    executor = new RuntimeExecutor({ clock: runtimeClock, resourceManager, onError });
  }
  const termsOf = (agreement: { document: string }) => withXml(agreement.document, 'agreement', (doc) => readOffer(doc.root).guaranteeTerms);
  const onProblem = (message: string, details: { agreementId?: string; error?: unknown }) =>
    logger.warn({ agreementId: details.agreementId, ...(details.error !== undefined ? { err: details.error } : {}) }, message);
  const providers = peers ? parts.peerProviders ?? new WsagPeerProviders() : undefined;
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
    ...(audit && peers && providers ? { afterRun: (agreement) => releaseBoundStandby(agreement, { audit, peers, providers }) } : {}),
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
      controller, repository, agreements, plan, termsOf, onProblem,
      onReport: (report: MigrationReport) => {
        if (report.problematicBefore.length === 0) return;
        logger.info({ migrated: report.jobs.filter((j) => j.migrated).map((j) => ({ id: j.agreementId, peer: j.peer, remote: j.remoteAgreementId })), violations: report.violations }, 'migration run');
      },
    });
  }
  const notifications = new NotificationService({
    agreements,
    subscriptions: new SubscriptionFile(path.join(config.dataDir, 'subscriptions.json')),
    ids: parts.ids ?? randomIds,
    clock,
    send: postNotification,
    wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
    ...(parts.notificationBackoffMs !== undefined ? { backoffMs: parts.notificationBackoffMs } : {}),
    onFailure: (subscription, error, final) => logger.warn({ agreementId: subscription.agreementId, url: subscription.url, err: error, final },
      final ? 'a notification could not be delivered; given up' : 'a notification could not be delivered; trying again'),
    onError: (error) => logger.error({ err: error }, 'sending notifications failed'),
  });
  return { execution, notifications, migration, migrated, providers, executor, executorKind, receivedDir };
}

/** POSTs one notification as JSON; anything but a 2xx answer within 10 s is a failure. */
async function postNotification(url: string, notification: StateNotification): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(notification),
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
}

/** The trusted CAs (when the CA file exists) and the provider's agreement signer (when signing is on). */
function securityParts(config: ServerConfig): { trust?: TrustStore; signer?: AgreementSigner; recordSigner?: AgreementSigner } {
  const trust = fs.existsSync(config.caFile) ? attempt('WSAG_CA_FILE', () => TrustStore.fromFile(config.caFile)) : undefined;
  if (!config.signAgreements) return trust ? { trust } : {};
  const credential = attempt('WSAG_TLS_CERT / WSAG_TLS_KEY', () => loadCredential(config.tlsCertFile, config.tlsKeyFile));
  const chain = [credential.certificate, ...credential.chain];
  const signer: AgreementSigner = { sign: (document) => signAgreement(document, { key: credential.privateKey, chain }) };
  // Usage records are signed by the same key, the same way (src/crypto/usage-record-signature.ts).
  const recordSigner: AgreementSigner = { sign: (record) => signUsageRecord(record, { key: credential.privateKey, chain }) };
  return trust ? { trust, signer, recordSigner } : { signer, recordSigner };
}

function attempt<T>(setting: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw new ConfigError(`${setting}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

