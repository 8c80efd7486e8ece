import crypto from 'node:crypto';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { anonymousCaller } from './domain/identity.js';
import { AgreementFactory } from './engine/agreement-factory.js';
import { AgreementService } from './engine/agreement-service.js';
import { CapacityPlan } from './engine/capacity-plan.js';
import type { ServerConfig } from './engine/config.js';
import type { AgreementRepository, Clock, IdSource } from './engine/ports.js';
import { agreementPorts, paths } from './soap/agreement-ports.js';
import { SqliteAgreementRepository } from './store/sqlite-agreement-repository.js';
import { createApp } from './web/app.js';
import { XmlAgreementWriter } from './xml/agreement-writer.js';
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
  repository?: AgreementRepository;
  clock?: Clock;
  ids?: IdSource;
  logger?: Logger;
}

/** Assembles the adapters around the engine and listens. */
export async function startServer(config: ServerConfig, parts: ServerParts = {}): Promise<RunningServer> {
  const logger = parts.logger ?? pino({ level: config.logLevel });
  const clock = parts.clock ?? systemClock;
  SchemaSet.get(); // compile once at start-up: a broken schema stops the server here
  const templates = TemplateLibrary.fromDirectory(config.templatesDir);
  const repository = parts.repository ?? SqliteAgreementRepository.open(path.join(config.dataDir, 'wsag.db'));
  const plan = new CapacityPlan(config.clusterNodes);
  const agreements = new AgreementService(repository, plan, clock);
  const restored = await agreements.restorePlan();
  const factory = new AgreementFactory({
    templates,
    repository,
    documents: new XmlAgreementWriter(),
    plan,
    clock,
    ids: parts.ids ?? randomIds,
    providerName: config.providerName,
  });

  let baseUrl = config.publicUrl?.replace(/\/$/, '') ?? '';
  const app = createApp({
    ports: agreementPorts({ factory, agreements, templates }),
    agreements,
    maxBodyBytes: config.maxBodyBytes,
    maxXmlDepth: config.maxXmlDepth,
    baseUrl: () => baseUrl,
    identify: () => anonymousCaller,
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
  const endpoints = Object.fromEntries(Object.entries(paths).map(([name, p]) => [name, baseUrl + p]));
  logger.info({ url: baseUrl, templates: templates.list().length, restoredBookings: restored }, 'wsag-server listening');
  return {
    url: baseUrl,
    endpoints,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (!parts.repository) await repository.close();
    },
  };
}
