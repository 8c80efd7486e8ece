import crypto from 'node:crypto';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { anonymousCaller, type Caller } from './domain/identity.js';
import { AgreementFactory } from './engine/agreement-factory.js';
import { AgreementService } from './engine/agreement-service.js';
import { clusterDescription, type ServerConfig } from './engine/config.js';
import { NegotiationService } from './engine/negotiation-service.js';
import type { AgreementRepository, Clock, IdSource, NegotiationRepository } from './engine/ports.js';
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
  const templates = TemplateLibrary.fromDirectory(config.templatesDir);
  const store = parts.repository && parts.negotiationRepository ? undefined : SqliteStore.open(path.join(config.dataDir, 'wsag.db'));
  const repository = parts.repository ?? (store as SqliteStore).agreements;
  const negotiationRepository = parts.negotiationRepository ?? (store as SqliteStore).negotiations;
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
  });
  const services = { factory, agreements, negotiations, templates };
  const identify = (): Caller => ({ identity: anonymousCaller.identity, isAdmin: config.admins.includes(anonymousCaller.identity) });

  let baseUrl = config.publicUrl?.replace(/\/$/, '') ?? '';
  const app = createApp({
    ports: [...agreementPorts(services), ...negotiationPorts(services)],
    agreements,
    negotiations,
    plan,
    maxBodyBytes: config.maxBodyBytes,
    maxXmlDepth: config.maxXmlDepth,
    baseUrl: () => baseUrl,
    identify,
    now: () => clock.now(),
    logger,
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  if (!baseUrl) baseUrl = `http://${host}:${address.port}`;
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
  logger.info({ url: baseUrl, templates: templates.list().length, clusterNodes: plan.clusterNodes, restoredBookings: restored, holds }, 'wsag-server listening');
  return {
    url: baseUrl,
    endpoints,
    async close() {
      clearInterval(expiry);
      await plan.settle();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store?.close();
    },
  };
}
