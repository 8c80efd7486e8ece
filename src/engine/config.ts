/**
 * Server configuration: one validated object with documented defaults. Environment
 * variables override defaults; `loadConfig` fails fast with exact messages.
 */
import path from 'node:path';

export interface ServerConfig {
  /** Interface to listen on. Env HOST. Default 127.0.0.1 (loopback only). */
  host: string;
  /** TCP port. Env PORT. Default 8080; 0 picks a free port. */
  port: number;
  /** Where the SQLite database lives. Env WSAG_DATA_DIR. Default ./data. */
  dataDir: string;
  /** Public base URL used in EPRs and WSDL addresses. Env WSAG_PUBLIC_URL. Default http://HOST:PORT. */
  publicUrl?: string;
  /** Directory of agreement templates. Env WSAG_TEMPLATES_DIR. Default ./templates. */
  templatesDir: string;
  /** Nodes in the cluster the capacity check plans against. Env WSAG_CLUSTER_NODES. Default 64. */
  clusterNodes: number;
  /** Largest request body accepted, bytes. Env WSAG_MAX_BODY_BYTES. Default 1 MiB. */
  maxBodyBytes: number;
  /** Deepest element nesting accepted in a request. Env WSAG_MAX_XML_DEPTH. Default 64. */
  maxXmlDepth: number;
  /** Name of the provider in agreement contexts. Env WSAG_PROVIDER_NAME. Default wsag-server. */
  providerName: string;
  /** Log level (pino). Env LOG_LEVEL. Default info; `silent` turns logging off. */
  logLevel: string;
  /** How long a preparatory reservation (an Acceptable counter-offer) is held, seconds. Env WSAG_HOLD_SECONDS. Default 300. */
  holdSeconds: number;
  /** Negotiate calls answered per negotiation before it is closed. Env WSAG_NEGOTIATION_MAX_ROUNDS. Default 20. */
  negotiationMaxRounds: number;
  /** Longest a negotiation stays open, seconds. Env WSAG_NEGOTIATION_MAX_SECONDS. Default 3600. */
  negotiationMaxSeconds: number;
  /** Start slots offered in answer to an Advisory offer. Env WSAG_ADVISORY_SLOTS. Default 3. */
  advisorySlots: number;
  /** Currency of prices and fees (ISO 4217). Env WSAG_CURRENCY. Default EUR. */
  currency: string;
  /** Price of one node-hour at guarantee level Legacy. Env WSAG_NODE_HOUR_PRICE. Default 1.00. */
  nodeHourPrice: number;
  /** Preparatory fee as a fraction of the regular price. Env WSAG_PREPARATORY_FEE_RATE. Default 0.05. */
  preparatoryFeeRate: number;
  /** Identities with the operator (admin) role, comma-separated. Env WSAG_ADMINS. Default none. */
  admins: string[];
}

export const defaultConfig: ServerConfig = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: path.resolve('data'),
  templatesDir: path.resolve('templates'),
  clusterNodes: 64,
  maxBodyBytes: 1024 * 1024,
  maxXmlDepth: 64,
  providerName: 'wsag-server',
  logLevel: 'info',
  holdSeconds: 300,
  negotiationMaxRounds: 20,
  negotiationMaxSeconds: 3600,
  advisorySlots: 3,
  currency: 'EUR',
  nodeHourPrice: 1,
  preparatoryFeeRate: 0.05,
  admins: [],
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv, overrides: Partial<ServerConfig> = {}): ServerConfig {
  const config: ServerConfig = {
    host: env.HOST ?? defaultConfig.host,
    port: integer(env, 'PORT', defaultConfig.port, 0, 65535),
    dataDir: path.resolve(env.WSAG_DATA_DIR ?? defaultConfig.dataDir),
    publicUrl: env.WSAG_PUBLIC_URL,
    templatesDir: path.resolve(env.WSAG_TEMPLATES_DIR ?? defaultConfig.templatesDir),
    clusterNodes: integer(env, 'WSAG_CLUSTER_NODES', defaultConfig.clusterNodes, 1, 10_000_000),
    maxBodyBytes: integer(env, 'WSAG_MAX_BODY_BYTES', defaultConfig.maxBodyBytes, 1024, 1024 * 1024 * 1024),
    maxXmlDepth: integer(env, 'WSAG_MAX_XML_DEPTH', defaultConfig.maxXmlDepth, 8, 10_000),
    providerName: env.WSAG_PROVIDER_NAME ?? defaultConfig.providerName,
    logLevel: env.LOG_LEVEL ?? defaultConfig.logLevel,
    holdSeconds: integer(env, 'WSAG_HOLD_SECONDS', defaultConfig.holdSeconds, 1, 7 * 24 * 3600),
    negotiationMaxRounds: integer(env, 'WSAG_NEGOTIATION_MAX_ROUNDS', defaultConfig.negotiationMaxRounds, 1, 10_000),
    negotiationMaxSeconds: integer(env, 'WSAG_NEGOTIATION_MAX_SECONDS', defaultConfig.negotiationMaxSeconds, 1, 30 * 24 * 3600),
    advisorySlots: integer(env, 'WSAG_ADVISORY_SLOTS', defaultConfig.advisorySlots, 1, 100),
    currency: env.WSAG_CURRENCY ?? defaultConfig.currency,
    nodeHourPrice: decimal(env, 'WSAG_NODE_HOUR_PRICE', defaultConfig.nodeHourPrice, 0, 1e9),
    preparatoryFeeRate: decimal(env, 'WSAG_PREPARATORY_FEE_RATE', defaultConfig.preparatoryFeeRate, 0, 1),
    admins: (env.WSAG_ADMINS ?? '').split(',').map((a) => a.trim()).filter(Boolean),
    ...overrides,
  };
  if (config.publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(config.publicUrl)) {
    throw new ConfigError(`WSAG_PUBLIC_URL must be an http(s) URL, got "${config.publicUrl}"`);
  }
  if (!/^[A-Z]{3}$/.test(config.currency)) throw new ConfigError(`WSAG_CURRENCY must be a three-letter ISO 4217 code such as EUR, got "${config.currency}"`);
  return config;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function decimal(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a decimal number such as 0.05, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}
