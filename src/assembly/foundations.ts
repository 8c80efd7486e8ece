import type { ClusterState } from '../web/cluster-state.js';
import fs from 'node:fs';
import os from 'node:os';
import { pino, type Logger } from 'pino';
import { v7 as uuidV7 } from 'uuid';
import { loadCredential } from '../crypto/credentials.js';
import { TrustStore } from '../crypto/trust-store.js';
import type { SigningCredentials } from '../crypto/xml-signature.js';
import { signUsageRecord } from '../crypto/usage-record-signature.js';
import type { PriceList } from '../domain/pricing.js';
import { ObservedAgreementRepository } from '../engine/agreements/index.js';
import { AuditService } from '../engine/audit/index.js';
import { ConfigError, type ServerConfig } from '../engine/configuration/index.js';
import { readPeersFile, type PeersConfig } from '../engine/migration/index.js';
import type { PlanningService } from '../engine/planning/index.js';
import type { AgreementRepository, AgreementSigner, Clock, IdSource, NegotiationRepository } from '../engine/ports.js';
import type { AccountStore, UsageRecordStore } from '../engine/accounting/index.js';
import type { PeerProviders } from '../engine/migration/index.js';
import type { ResourceManager, RuntimeClock } from '../runtime/index.js';
import { requestsInProgress } from '../soap/requests-in-progress.js';
import { DataDirLock } from '../store/data-dir-lock.js';
import { DocumentThreads } from '../workers/document-threads.js';
import { SchemaSet } from '../xml/schema-set.js';
import { TemplateLibrary } from '../xml/template-library.js';
import { Front } from './front.js';
import { Observability } from './observability.js';
import { openServerStore, type ServerStore } from './store.js';

export const systemClock: Clock = { now: () => new Date() };
/**
 * Agreement and negotiation ids: UUIDs of version 7 (RFC 9562), which begin with their
 * creation time in milliseconds and end in 74 random bits. Ids made one after another
 * sort one after another, so the store's indexes on them (primary keys, the audit log by
 * subject) grow at their end, as a log does, rather than at a random page each: a
 * negotiated agreement wrote a third fewer bytes to disk than with random (version 4)
 * UUIDs (docs/benchmarks.md).
 */
export const randomIds: IdSource = { next: () => uuidV7() };

/** What a caller (a test, a cluster instance) may hand the server instead of its defaults. */
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
  /** Who plans, when this server is the planning leader of a cluster (/api/cluster, /metrics). */
  cluster?: () => ClusterState;
  /** The database, opened and locked by the caller (the leader of a cluster); kept open by `close`. */
  store?: ServerStore;
}

/** The base URLs answers name (EPRs): known once the listeners are up, unless WSAG_PUBLIC_URL fixes them. */
export interface Urls {
  base: string;
  tls?: string;
}

/**
 * What every later part stands on: settings, logging, time, security, templates, the store and its observed
 * repositories, the listeners.
 */
export interface Foundations {
  config: ServerConfig;
  parts: ServerParts;
  logger: Logger;
  clock: Clock;
  ids: IdSource;
  prices: PriceList;
  urls: Urls;
  trust?: TrustStore;
  /**
   * Reads CreateAgreement offers and signs agreements (on worker threads: WSAG_DOCUMENT_THREADS); closed with the
   * server.
   */
  documents: DocumentThreads;
  /** Signs agreements as the provider, when signing is on (the documents' signer). */
  signer?: AgreementSigner;
  recordSigner?: RecordSigner;
  templates: TemplateLibrary;
  peers?: PeersConfig;
  store?: ServerStore;
  lock?: DataDirLock;
  front: Front;
  observed: Observability;
  /** Every stored change of an agreement reaches the run time, the notifications and the books. */
  repository: ObservedAgreementRepository;
  negotiationRepository: NegotiationRepository;
  /** The plan, once the scheduling part has made it (the metrics read it at each scrape). */
  late: { plan?: PlanningService };
}

export async function openFoundations(config: ServerConfig, parts: ServerParts): Promise<Foundations> {
  const logger = parts.logger ?? pino({ level: config.logLevel });
  const clock = parts.clock ?? systemClock;
  SchemaSet.get(); // compile once at start-up: a broken schema stops the server here
  const { credentials, ...security } = securityParts(config);
  const templates = TemplateLibrary.fromDirectory(config.templatesDir);
  const documents = DocumentThreads.start(
    config.documentThreads ?? DocumentThreads.defaultCount(os.availableParallelism()),
    {
      ...(credentials ? { credentials } : {}),
      busy: () => requestsInProgress.others(),
      templates: templates.sources(),
      // Called only while requests are served, after `observed` below exists.
      observe: (done) => observed.metrics.documentWorkDone(done),
    },
  );
  const peers = config.peers ?? (config.peersFile ? readPeersFile(config.peersFile) : undefined);
  const ownStore = !(parts.repository && parts.negotiationRepository) && !parts.store;
  // One writer per data directory: a second process would book the same nodes again (a cluster's leader holds the
  // database's lock instead).
  const lock = ownStore ? DataDirLock.acquire(config.dataDir, clock.now()) : undefined;
  const store =
    parts.store ??
    (ownStore
      ? await openServerStore(config).catch((error: unknown) => {
          lock?.release();
          throw error;
        })
      : undefined);
  const front =
    parts.front ??
    (await Front.open(config).catch(async (error: unknown) => {
      await store?.close();
      lock?.release();
      throw error;
    }));
  const late: Foundations['late'] = {};
  const observed: Observability = new Observability(
    () => ({
      agreements: repository,
      plan: late.plan as PlanningService,
      now: () => clock.now(),
      ...(parts.cluster ? { cluster: parts.cluster } : {}),
    }),
    logger,
  );
  const repository: ObservedAgreementRepository = new ObservedAgreementRepository(
    observed.timed(parts.repository ?? (store as ServerStore).agreements),
    (error) => logger.error({ err: error }, 'following an agreement change failed'),
  );
  // Agreements stored before the audit trail existed (migration 5) get an entry pinning their document as found.
  if (store)
    await new AuditService({ audit: store.audit, agreements: repository }).recordUnaudited(
      clock.now(),
      await store.agreementsWithoutAudit(),
    );
  return {
    config,
    parts,
    logger,
    clock,
    ids: parts.ids ?? randomIds,
    prices: {
      currency: config.currency,
      nodeHour: config.nodeHourPrice,
      preparatoryFeeRate: config.preparatoryFeeRate,
      curve: config.priceCurve,
    },
    urls: { base: config.publicUrl?.replace(/\/$/, '') ?? '' },
    ...security,
    documents,
    ...(documents.signer ? { signer: documents.signer } : {}),
    templates,
    ...(peers ? { peers } : {}),
    ...(store ? { store } : {}),
    ...(lock ? { lock } : {}),
    front,
    observed,
    repository,
    negotiationRepository: parts.negotiationRepository ?? (store as ServerStore).negotiations,
    late,
  };
}

/** Signs usage records on the calling thread. */
export interface RecordSigner {
  sign(record: string): string;
}

/** The trusted CAs (when the CA file exists) and the provider's signing credentials (when signing is on). */
function securityParts(config: ServerConfig): {
  trust?: TrustStore;
  credentials?: SigningCredentials;
  recordSigner?: RecordSigner;
} {
  const trust = fs.existsSync(config.caFile)
    ? attempt('WSAG_CA_FILE', () => TrustStore.fromFile(config.caFile))
    : undefined;
  if (!config.signAgreements) return trust ? { trust } : {};
  const credential = attempt('WSAG_TLS_CERT / WSAG_TLS_KEY', () =>
    loadCredential(config.tlsCertFile, config.tlsKeyFile),
  );
  const credentials = { key: credential.privateKey, chain: [credential.certificate, ...credential.chain] };
  // Usage records are signed by the same key, the same way (src/crypto/usage-record-signature.ts).
  const recordSigner: RecordSigner = { sign: (record) => signUsageRecord(record, credentials) };
  return trust ? { trust, credentials, recordSigner } : { credentials, recordSigner };
}

/** Runs `load`; a failure is a ConfigError naming the setting. */
export function attempt<T>(setting: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw new ConfigError(`${setting}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
