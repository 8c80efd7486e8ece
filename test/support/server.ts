import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig, type ServerConfig } from '../../src/engine/configuration/config.js';
import type { AgreementRepository, Clock, IdSource, NegotiationRepository } from '../../src/engine/ports.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';

export const projectRoot = path.resolve(import.meta.dirname, '../..');

export interface TestServer extends RunningServer {
  repository: AgreementRepository;
  negotiationRepository: NegotiationRepository;
  dataDir: string;
}

/** An in-process server on a free loopback port, with an in-memory store unless one is given. */
export async function startTestServer(
  options: {
    config?: Partial<ServerConfig>;
    repository?: AgreementRepository;
    negotiationRepository?: NegotiationRepository;
    clock?: Clock;
    ids?: IdSource;
  } = {},
): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-test-'));
  const config = loadConfig(
    {},
    {
      port: 0,
      dataDir,
      templatesDir: path.join(projectRoot, 'templates'),
      logLevel: 'silent',
      // Callbacks in tests listen on loopback.
      outboundAllow: ['loopback'],
      ...options.config,
    },
  );
  const repository = options.repository ?? new MemoryAgreementRepository();
  const negotiationRepository = options.negotiationRepository ?? new MemoryNegotiationRepository();
  const server = await startServer(config, {
    repository,
    negotiationRepository,
    clock: options.clock,
    ids: options.ids,
    logger: pino({ level: 'silent' }),
  });
  return { ...server, repository, negotiationRepository, dataDir };
}

/** Stops a test server and removes its data directory (nothing when it never started). */
export async function stopTestServer(server: TestServer | undefined): Promise<void> {
  if (!server) return;
  await server.close();
  fs.rmSync(server.dataDir, { recursive: true, force: true });
}

/** A server on its own SQLite store in `dataDir` (4 nodes, no executor): what survives a restart is what a site keeps. */
export function startSqliteServer(dataDir: string): Promise<RunningServer> {
  return startServer(
    loadConfig(
      {},
      {
        port: 0,
        dataDir,
        templatesDir: path.join(projectRoot, 'templates'),
        logLevel: 'silent',
        clusterNodes: 4,
        executor: 'none',
      },
    ),
    { logger: pino({ level: 'silent' }) },
  );
}
