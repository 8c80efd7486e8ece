import { ConfigError } from '../engine/configuration/index.js';
import { parsePeersFile, type PeersConfig } from '../engine/migration/index.js';
import { WorkloadError } from './input-fields.js';

/**
 * The peers `wsag sim --peers FILE` migrates to: a peers file as the server reads it
 * (src/engine/migration/peers.ts, docs/operations.md "Peers and migration"), where each peer also
 * has a `simulation` block saying what it would answer: how many nodes it can give
 * migrated jobs at once and what it charges. The server does not take `simulation`
 * (its file check refuses unknown settings): a peers file for the simulator is its own.
 */
export interface SimulatedPeerTerms {
  /** Nodes the peer can give migrated jobs at any one time. */
  nodes: number;
  /** Price per node and hour of the work it takes on. */
  pricePerNodeHour: number;
  /** A fixed charge per migrated job (default 0). */
  pricePerJob: number;
  /** Currency of its prices; default: the workload's. */
  currency?: string;
}

export interface SimulatedPeersConfig {
  peers: PeersConfig;
  /** By peer name. */
  terms: Map<string, SimulatedPeerTerms>;
}

const simulationFields = ['nodes', 'pricePerNodeHour', 'pricePerJob', 'currency'];

/** Checks a parsed peers file for the simulator; every message starts with `where` (the file). */
export function parseSimulatedPeers(json: unknown, where: string): SimulatedPeersConfig {
  const fail = (message: string): never => {
    throw new WorkloadError(`${where}: ${message}`);
  };
  if (!isObject(json) || !Array.isArray(json.peers))
    return fail('a peers file is an object with "peers" (and optionally "local" and "policy"), see docs/operations.md');
  const terms = new Map<string, SimulatedPeerTerms>();
  const simulations: unknown[] = [];
  const peers = json.peers.map((raw: unknown) => {
    if (!isObject(raw)) {
      simulations.push(undefined);
      return raw;
    }
    const { simulation, ...rest } = raw;
    simulations.push(simulation);
    return rest;
  });
  let config: PeersConfig;
  try {
    config = parsePeersFile({ ...json, peers }, where);
  } catch (error) {
    if (error instanceof ConfigError) throw new WorkloadError(error.message);
    throw error;
  }
  if (config.peers.length === 0) fail('"peers" is empty: the simulator needs at least one peer to migrate to');
  config.peers.forEach((peer, i) => {
    const at = `peers[${i}] (${peer.name}).simulation`;
    const raw = simulations[i];
    if (raw === undefined)
      fail(`${at} is required by wsag sim: { "nodes": N, "pricePerNodeHour": P } (see docs/operations.md)`);
    if (!isObject(raw)) fail(`${at} must be an object, got ${JSON.stringify(raw)}`);
    const block = raw as Record<string, unknown>;
    for (const key of Object.keys(block))
      if (!simulationFields.includes(key))
        fail(`${at} has an unknown field "${key}" (allowed: ${simulationFields.join(', ')})`);
    const number = (key: string, whole: boolean, required: boolean): number | undefined => {
      const value = block[key];
      if (value === undefined) return required ? fail(`${at}.${key} is required`) : undefined;
      const ok =
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (whole ? Number.isInteger(value) && value >= 1 : value >= 0);
      return ok
        ? (value as number)
        : fail(
            `${at}.${key} must be ${whole ? 'a whole number, 1 or more' : 'a number, 0 or more'}, got ` +
              `${JSON.stringify(value)}`,
          );
    };
    const currency = block.currency;
    if (currency !== undefined && (typeof currency !== 'string' || currency.trim() === ''))
      fail(`${at}.currency must be a non-empty string, got ${JSON.stringify(currency)}`);
    terms.set(peer.name, {
      nodes: number('nodes', true, true) as number,
      pricePerNodeHour: number('pricePerNodeHour', false, true) as number,
      pricePerJob: number('pricePerJob', false, false) ?? 0,
      ...(typeof currency === 'string' ? { currency: currency.trim() } : {}),
    });
  });
  return { peers: config, terms };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
