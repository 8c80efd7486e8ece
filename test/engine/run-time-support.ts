import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadConfig, type ServerConfig } from '../../src/engine/configuration/config.js';
import type { GuaranteeLevel } from '../../src/domain/terms.js';
import { SimulatedClock } from '../../src/runtime/clock.js';
import { SimulatedResourceManager } from '../../src/runtime/simulated-resource-manager.js';
import { startServer, type RunningServer, type ServerParts } from '../../src/server.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { paper } from '../runtime/support.js';
import { T0 } from '../scheduler/support.js';
import { projectRoot } from '../support/server.js';

/** Seconds after T0 as a Date, and back. */
export const at = (seconds: number) => new Date(T0 + seconds * 1000);
export const secondsOf = (iso: string | Date | undefined) =>
  iso === undefined ? undefined : (new Date(iso).getTime() - T0) / 1000;

export interface SimulatedServer extends RunningServer {
  clock: SimulatedClock;
  rm: SimulatedResourceManager;
  client: WsagClient;
  dataDir: string;
  /** Moves the simulated clock, then waits for the run time to store what happened. */
  advanceTo(seconds: number): Promise<void>;
  /** Runs the clock until nothing is left to do, then waits for the run time. */
  runUntilIdle(): Promise<void>;
}

/**
 * A server on a simulated clock standing at T0, with the simulated resource manager, on
 * the scheduler's paper site (test/runtime/support.ts: t_init 30 s, a checkpoint of a 16 GB
 * node 120 s, no deinitialisation): `nodes` nodes n001, n002, ... of 16 GB with InfiniBand.
 * The local user is an operator. In memory, unless `sqlite`.
 */
export async function simulatedServer(
  options: {
    nodes?: number;
    config?: Partial<ServerConfig>;
    parts?: Partial<ServerParts>;
    dataDir?: string;
    sqlite?: boolean;
    startAt?: Date;
  } = {},
): Promise<SimulatedServer> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-runtime-'));
  const clock = new SimulatedClock(options.startAt ?? new Date(T0));
  const rm = new SimulatedResourceManager(clock);
  const config = loadConfig(
    {},
    {
      port: 0,
      dataDir,
      templatesDir: path.join(projectRoot, 'templates'),
      logLevel: 'silent',
      admins: ['anonymous'],
      executor: 'simulated',
      // Callbacks in tests listen on loopback.
      outboundAllow: ['loopback'],
      cluster: {
        nodeGroups: [{ count: options.nodes ?? 8, idPrefix: 'n', memoryGB: 16, cpus: 16, interconnect: 'InfiniBand' }],
        timing: paper,
      },
      ...options.config,
    },
  );
  const server = await startServer(config, {
    ...(options.sqlite
      ? {}
      : { repository: new MemoryAgreementRepository(), negotiationRepository: new MemoryNegotiationRepository() }),
    clock,
    resourceManager: rm,
    logger: pino({ level: 'silent' }),
    ...options.parts,
  });
  const settle = async () => {
    await server.execution.idle();
    await server.notifications.idle();
    await server.accounting.idle();
  };
  return {
    ...server,
    clock,
    rm,
    client: new WsagClient(server.url),
    dataDir,
    async advanceTo(seconds) {
      await clock.advanceTo(at(seconds));
      await settle();
    },
    async runUntilIdle() {
      await settle();
      await clock.runUntilIdle();
      await settle();
    },
  };
}

/** A deadline job from the shipped template: 4 nodes of 16 GB for an hour, one covered outage, by `deadline`. */
export async function deadlineOffer(
  client: WsagClient,
  options: {
    level: GuaranteeLevel;
    deadline: Date;
    nodes?: number;
    runtimeSeconds?: number;
    penalty?: number;
    migration?: 'None' | 'AdministrativeDomain' | 'Grid';
    name?: string;
    resumesFromCheckpointBytes?: number;
  },
): Promise<string> {
  const served = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
  // A migrated job declares the checkpoint it resumes from, last in its service level.
  const template =
    options.resumesFromCheckpointBytes === undefined
      ? served
      : served.replace(
          '</sla:ServiceLevel>',
          `<sla:ResumesFromCheckpoint>${options.resumesFromCheckpointBytes}</sla:ResumesFromCheckpoint></sla:ServiceLevel>`,
        );
  const deadline = options.deadline.toISOString().replace(/\.000Z$/, 'Z');
  return offerFromTemplate(template, [
    { location: 'NodeCount', value: String(options.nodes ?? 4) },
    { location: 'RuntimeEstimate', value: String(options.runtimeSeconds ?? 3600) },
    { location: 'GuaranteeLevel', value: options.level },
    { location: 'MaxCoveredOutages', value: '1' },
    { location: '//jsdl:IndividualPhysicalMemory/jsdl:Exact', value: String(16 * 1024 ** 3) },
    { location: '//sla:ServiceLevel/sla:Deadline', value: deadline },
    { location: '//sla:CompletedBy', value: deadline },
    ...(options.penalty !== undefined ? [{ location: 'PenaltyAmount', value: String(options.penalty) }] : []),
    ...(options.migration ? [{ location: '//sla:MigrationPolicy/@Scope', value: options.migration }] : []),
    ...(options.name ? [{ location: '/wsag:AgreementOffer/wsag:Name', value: options.name }] : []),
  ]);
}

/** A reservation of `nodes` nodes from `start` to `end` (the shipped template, Legacy). */
export async function reservationOffer(client: WsagClient, nodes: number, start: Date, end: Date): Promise<string> {
  const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
  const iso = (d: Date) => d.toISOString().replace(/\.000Z$/, 'Z');
  return offerFromTemplate(template, [
    { location: 'NodeCount', value: String(nodes) },
    { location: '//arp:StartTime', value: iso(start) },
    { location: '//arp:EndTime', value: iso(end) },
    { location: '//sla:NodesAvailable', value: String(nodes) },
  ]);
}

interface PlanBooking {
  id: string;
  nodeIds: string[];
  spareNodeIds: string[];
  start: string;
  end: string;
  segments: Array<{ start: string; end: string; nodeIds: string[] }>;
  problem?: string;
}

/** The plan as operators see it (GET /api/plan). */
export async function planOf(
  server: RunningServer,
): Promise<{ bookings: PlanBooking[]; problematic: Array<{ id: string; reason: string }> }> {
  const response = await fetch(`${server.url}/api/plan`);
  return (await response.json()) as { bookings: PlanBooking[]; problematic: Array<{ id: string; reason: string }> };
}

export async function postJson<T>(url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as T };
}
