import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { loadCredential } from './crypto/credentials.js';
import { TrustStore } from './crypto/trust-store.js';
import { signAgreement, verifyAgreementSignatures } from './crypto/xml-signature.js';
import { authenticator, tlsClientCertificate, wsSecuritySignature, type ChainValidator } from './soap/authentication.js';
import { AgreementFactory } from './engine/agreement-factory.js';
import { AgreementService } from './engine/agreement-service.js';
import { AuditService } from './engine/audit-service.js';
import { clusterDescription, ConfigError, type ServerConfig } from './engine/config.js';
import { NegotiationService } from './engine/negotiation-service.js';
import type { AgreementRepository, AgreementSignatureVerifier, AgreementSigner, Clock, IdSource, NegotiationRepository } from './engine/ports.js';
import { persistPlanChanges } from './engine/plan-persistence.js';
import { PlanningService } from './engine/planning-service.js';
import { ReservationUse } from './engine/reservation-use.js';
import { SoapAcceptanceNotifier } from './client/acceptance-notifier.js';
import { agreementPorts, paths } from './soap/agreement-ports.js';
import { negotiationPaths, negotiationPorts } from './soap/negotiation-ports.js';
import { SqliteStore } from './store/sqlite-store.js';
import { createApp } from './web/app.js';
import { XmlAgreementWriter } from './xml/agreement-writer.js';
import { XmlNegotiationWriter } from './xml/negotiation-writer.js';
import { SchemaSet } from './xml/schema-set.js';
import { TemplateLibrary } from './xml/template-library.js';

export const systemClock: Clock = { now: () => new Date() };
export const randomIds: IdSource = { next: () => crypto.randomUUID() };

export interface RunningServer {
  url: string;
  /** The HTTPS base URL, when TLS is on (WSAG_TLS_PORT). */
  tlsUrl?: string;
  endpoints: Record<string, string>;
  close(): Promise<void>;
}

export interface ServerParts {
  /** Both repositories, or neither: by default they share one SQLite file in the data directory. */
  repository?: AgreementRepository;
  negotiationRepository?: NegotiationRepository;
  clock?: Clock;
  ids?: IdSource;
  logger?: Logger;
}

/** How often held preparatory reservations are checked for expiry, and the plan's clock moves on. */
const expiryIntervalMs = 1000;

/** Assembles the adapters around the engine and listens. */
export async function startServer(config: ServerConfig, parts: ServerParts = {}): Promise<RunningServer> {
  const logger = parts.logger ?? pino({ level: config.logLevel });
  const clock = parts.clock ?? systemClock;
  SchemaSet.get(); // compile once at start-up: a broken schema stops the server here
  const { trust, signer } = securityParts(config);
  const templates = TemplateLibrary.fromDirectory(config.templatesDir);
  const store = parts.repository && parts.negotiationRepository ? undefined : SqliteStore.open(path.join(config.dataDir, 'wsag.db'));
  const repository = parts.repository ?? (store as SqliteStore).agreements;
  const negotiationRepository = parts.negotiationRepository ?? (store as SqliteStore).negotiations;
  // Agreements stored before the audit trail existed (migration 5) get an entry pinning their document as found.
  if (store) await new AuditService({ audit: store.audit, agreements: repository }).recordUnaudited(clock.now());
  const ids = parts.ids ?? randomIds;
  const prices = { currency: config.currency, nodeHour: config.nodeHourPrice, preparatoryFeeRate: config.preparatoryFeeRate };
  const plan = new PlanningService(clusterDescription(config), prices);
  const agreements = new AgreementService(repository, plan, clock, new SoapAcceptanceNotifier(), (agreementId, error) =>
    logger.warn({ agreementId, err: error }, 'could not tell the initiator about the decision on its pending agreement'),
  );
  const negotiations = new NegotiationService({
    negotiations: negotiationRepository,
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
  const { restored, lost } = await agreements.restorePlanReport();
  for (const { id, reason } of lost) logger.warn({ agreementId: id, reason }, 'an agreement\'s capacity could not be booked again at start-up');
  const holds = await negotiations.restore();
  await reservations.restore();
  await plan.settle();
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
    ...(signer ? { signer } : {}),
  });
  const services = { factory, agreements, negotiations, templates };
  const validateChain: ChainValidator | undefined = trust && ((chain, at) => trust.validate(chain, at));
  const signatures: AgreementSignatureVerifier | undefined = validateChain && {
    verify: (document, at) => verifyAgreementSignatures(document, { validateChain, at }),
  };
  const identify = authenticator({
    proofs: validateChain ? [tlsClientCertificate(validateChain), wsSecuritySignature(validateChain)] : [],
    anonymous: config.anonymous,
    admins: config.admins,
  });

  let baseUrl = config.publicUrl?.replace(/\/$/, '') ?? '';
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
  });
  const server = await listen(http.createServer(app), config.port, config.host);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  if (!baseUrl) baseUrl = `http://${host}:${address.port}`;
  // TLS with client certificates; Node does not verify them (OpenSSL refuses RFC 3820 proxies
  // by default): every request's chain is validated by the trust store instead.
  const tlsServer = config.tlsPort === undefined ? undefined : await listen(https.createServer({
    cert: fs.readFileSync(config.tlsCertFile),
    key: fs.readFileSync(config.tlsKeyFile),
    ca: fs.readFileSync(config.caFile),
    requestCert: true,
    rejectUnauthorized: false,
  }, app), config.tlsPort, config.host);
  tlsUrl = tlsServer && `https://${host}:${(tlsServer.address() as AddressInfo).port}`;
  const endpoints = Object.fromEntries(Object.entries({ ...paths, ...negotiationPaths }).map(([name, p]) => [name, baseUrl + p]));
  const expiry = setInterval(() => {
    negotiations.expireDue().then(
      (expired) => expired > 0 && logger.info({ expired }, 'preparatory reservations expired; fees charged'),
      (error: unknown) => logger.error({ err: error }, 'releasing expired holds failed'),
    );
    try {
      const report = plan.advance(clock.now());
      if (report) logger.warn({ report }, 'a node is still failed after the problem horizon: re-planned');
    } catch (error) {
      logger.error({ err: error }, 'moving the plan\'s clock failed');
    }
    void plan.settle();
  }, expiryIntervalMs);
  expiry.unref();
  logger.info({ url: baseUrl, tlsUrl, anonymous: config.anonymous, templates: templates.list().length, clusterNodes: plan.clusterNodes, restoredBookings: restored, holds }, 'wsag-server listening');
  return {
    url: baseUrl,
    ...(tlsUrl ? { tlsUrl } : {}),
    endpoints,
    async close() {
      clearInterval(expiry);
      await plan.settle();
      await Promise.all([server, tlsServer].map((s) => s && new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      })));
      await store?.close();
    },
  };
}

function listen<S extends http.Server | https.Server>(server: S, port: number, host: string): Promise<S> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** The trusted CAs (when the CA file exists) and the provider's agreement signer (when signing is on). */
function securityParts(config: ServerConfig): { trust?: TrustStore; signer?: AgreementSigner } {
  const trust = fs.existsSync(config.caFile) ? attempt('WSAG_CA_FILE', () => TrustStore.fromFile(config.caFile)) : undefined;
  if (!config.signAgreements) return trust ? { trust } : {};
  const credential = attempt('WSAG_TLS_CERT / WSAG_TLS_KEY', () => loadCredential(config.tlsCertFile, config.tlsKeyFile));
  const chain = [credential.certificate, ...credential.chain];
  const signer: AgreementSigner = { sign: (document) => signAgreement(document, { key: credential.privateKey, chain }) };
  return trust ? { trust, signer } : { signer };
}

function attempt<T>(setting: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw new ConfigError(`${setting}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
