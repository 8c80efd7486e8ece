/**
 * Server configuration: one validated object with documented defaults. Environment
 * variables override defaults; `loadConfig` fails fast with exact messages.
 */
import { dropUndefined } from '../../domain/drop-undefined.js';
import fs from 'node:fs';
import path from 'node:path';
import { parsePriceCurve, type PriceCurve } from '../../domain/pricing.js';
export { ConfigError, readJsonFile } from './config-error.js';
import { ConfigError } from './config-error.js';
import { readClusterFile } from './cluster-file.js';
import { choice, integer, decimal, fairUse, databaseUrl, outboundAllow, trustedProxyList } from './env-values.js';
import { warmNodesOf } from './cluster-description.js';
export type { ClusterFile, NodeGroup } from './cluster-file.js';

export { cpuSchedulings, defaultConfig, executorKinds } from './server-config.js';
export type { CpuScheduling, ExecutorKind, ServerConfig, SlurmConfig } from './server-config.js';
import { cpuSchedulings, defaultConfig, executorKinds, type ServerConfig, type SlurmConfig } from './server-config.js';

export function loadConfig(env: NodeJS.ProcessEnv, overrides: Partial<ServerConfig> = {}): ServerConfig {
  const clusterFile = overrides.clusterFile ?? (env.WSAG_CLUSTER_FILE || undefined);
  // WSAG_SIGNING_THREADS is the earlier name of WSAG_DOCUMENT_THREADS.
  const threadsVariable = env.WSAG_DOCUMENT_THREADS
    ? 'WSAG_DOCUMENT_THREADS'
    : env.WSAG_SIGNING_THREADS
      ? 'WSAG_SIGNING_THREADS'
      : undefined;
  if (clusterFile !== undefined && env.WSAG_CLUSTER_NODES) {
    throw new ConfigError(
      'WSAG_CLUSTER_NODES and WSAG_CLUSTER_FILE are both set: the cluster file lists the nodes; unset one of them',
    );
  }
  if (clusterFile !== undefined && env.WSAG_WARM_NODES) {
    throw new ConfigError(
      'WSAG_WARM_NODES applies to the identical nodes of WSAG_CLUSTER_NODES; with WSAG_CLUSTER_FILE mark node ' +
        'groups "warm": true',
    );
  }
  if (clusterFile !== undefined && env.WSAG_BUFFER_NODES) {
    throw new ConfigError(
      'WSAG_BUFFER_NODES applies to the identical nodes of WSAG_CLUSTER_NODES; with WSAG_CLUSTER_FILE mark ' +
        'node groups "buffer": true',
    );
  }
  const cluster =
    overrides.cluster ?? (clusterFile !== undefined ? readClusterFile(path.resolve(clusterFile)) : undefined);
  const config: ServerConfig = {
    host: env.HOST ?? defaultConfig.host,
    port: integer(env, 'PORT', defaultConfig.port, 0, 65535),
    dataDir: path.resolve(env.WSAG_DATA_DIR ?? defaultConfig.dataDir),
    publicUrl: env.WSAG_PUBLIC_URL,
    trustedProxies: trustedProxyList(env.WSAG_TRUSTED_PROXIES ?? ''),
    templatesDir: path.resolve(env.WSAG_TEMPLATES_DIR ?? defaultConfig.templatesDir),
    clusterNodes: integer(env, 'WSAG_CLUSTER_NODES', defaultConfig.clusterNodes, 1, 10_000_000),
    bufferNodes: integer(env, 'WSAG_BUFFER_NODES', defaultConfig.bufferNodes, 0, 10_000_000),
    ...(env.WSAG_WARM_NODES ? { warmNodes: integer(env, 'WSAG_WARM_NODES', 0, 0, 10_000_000) } : {}),
    ...(clusterFile !== undefined ? { clusterFile: path.resolve(clusterFile) } : {}),
    ...(cluster !== undefined ? { cluster } : {}),
    problemHorizonSeconds: integer(
      env,
      'WSAG_PROBLEM_HORIZON_SECONDS',
      cluster?.timing?.problemHorizonSeconds ?? defaultConfig.problemHorizonSeconds,
      1,
      365 * 24 * 3600,
    ),
    planningHorizonDays: integer(env, 'WSAG_PLANNING_HORIZON_DAYS', defaultConfig.planningHorizonDays, 1, 3650),
    peerStandbyNodes: integer(
      env,
      'WSAG_PEER_STANDBY_NODES',
      cluster?.peerStandbyNodes ?? defaultConfig.peerStandbyNodes,
      0,
      10_000_000,
    ),
    maxBodyBytes: integer(env, 'WSAG_MAX_BODY_BYTES', defaultConfig.maxBodyBytes, 1024, 1024 * 1024 * 1024),
    maxXmlDepth: integer(env, 'WSAG_MAX_XML_DEPTH', defaultConfig.maxXmlDepth, 8, 10_000),
    requestTimeoutSeconds: integer(env, 'WSAG_REQUEST_TIMEOUT_SECONDS', defaultConfig.requestTimeoutSeconds, 1, 3600),
    providerName: env.WSAG_PROVIDER_NAME ?? defaultConfig.providerName,
    logLevel: env.LOG_LEVEL ?? defaultConfig.logLevel,
    holdSeconds: integer(env, 'WSAG_HOLD_SECONDS', defaultConfig.holdSeconds, 1, 7 * 24 * 3600),
    leaseNoticeSeconds: integer(env, 'WSAG_LEASE_NOTICE_SECONDS', defaultConfig.leaseNoticeSeconds, 1, 7 * 24 * 3600),
    negotiationMaxRounds: integer(env, 'WSAG_NEGOTIATION_MAX_ROUNDS', defaultConfig.negotiationMaxRounds, 1, 10_000),
    negotiationMaxSeconds: integer(
      env,
      'WSAG_NEGOTIATION_MAX_SECONDS',
      defaultConfig.negotiationMaxSeconds,
      1,
      30 * 24 * 3600,
    ),
    advisorySlots: integer(env, 'WSAG_ADVISORY_SLOTS', defaultConfig.advisorySlots, 1, 100),
    interactiveStartSeconds: integer(
      env,
      'WSAG_INTERACTIVE_START_SECONDS',
      defaultConfig.interactiveStartSeconds,
      0,
      3600,
    ),
    currency: env.WSAG_CURRENCY ?? defaultConfig.currency,
    ...(env.WSAG_DATABASE_URL?.trim() ? { databaseUrl: databaseUrl(env.WSAG_DATABASE_URL.trim()) } : {}),
    ...(env.WSAG_INSTANCE_URL?.trim() ? { instanceUrl: env.WSAG_INSTANCE_URL.trim().replace(/\/$/, '') } : {}),
    ...(env.WSAG_CLUSTER_SECRET ? { clusterSecret: env.WSAG_CLUSTER_SECRET } : {}),
    ...(threadsVariable ? { documentThreads: integer(env, threadsVariable, 0, 0, 64) } : {}),
    nodeHourPrice: decimal(env, 'WSAG_NODE_HOUR_PRICE', defaultConfig.nodeHourPrice, 0, 1e9),
    preparatoryFeeRate: decimal(env, 'WSAG_PREPARATORY_FEE_RATE', defaultConfig.preparatoryFeeRate, 0, 1),
    priceCurve: priceCurve(env),
    admins: (env.WSAG_ADMINS ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    outboundAllow: outboundAllow(env.WSAG_OUTBOUND_ALLOW ?? ''),
    ...(env.WSAG_FAIR_USE?.trim() ? { fairUse: fairUse(env.WSAG_FAIR_USE.trim()) } : {}),
    ...security(env, overrides.dataDir ?? path.resolve(env.WSAG_DATA_DIR ?? defaultConfig.dataDir), overrides),
    ...runTime(env, overrides.dataDir ?? path.resolve(env.WSAG_DATA_DIR ?? defaultConfig.dataDir)),
    ...overrides,
  };
  if (config.publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(config.publicUrl)) {
    throw new ConfigError(`WSAG_PUBLIC_URL must be an http(s) URL, got "${config.publicUrl}"`);
  }
  if (config.instanceUrl !== undefined && !/^https?:\/\/[^/]+$/.test(config.instanceUrl)) {
    throw new ConfigError(`WSAG_INSTANCE_URL must be an http(s) URL without a path, got "${config.instanceUrl}"`);
  }
  if (config.databaseUrl && config.tlsPort !== undefined && (config.clusterSecret ?? '').length < 16) {
    throw new ConfigError(
      'WSAG_CLUSTER_SECRET (16 characters or more, the same on every instance) is needed with ' +
        "WSAG_DATABASE_URL and WSAG_TLS_PORT: a standby forwards its TLS callers' certificates to the " +
        'planning leader with it',
    );
  }
  if (!config.cluster && config.bufferNodes >= config.clusterNodes) {
    throw new ConfigError(
      `WSAG_BUFFER_NODES must be less than WSAG_CLUSTER_NODES (${config.clusterNodes}): SLA jobs need at ` +
        `least one node that is not a buffer node, got ${config.bufferNodes}`,
    );
  }
  if (!config.cluster && warmNodesOf(config) > 0 && config.bufferNodes + warmNodesOf(config) >= config.clusterNodes) {
    throw new ConfigError(
      `WSAG_WARM_NODES and WSAG_BUFFER_NODES together must be less than WSAG_CLUSTER_NODES ` +
        `(${config.clusterNodes}): SLA jobs need at least one node of their own, got ${warmNodesOf(config)} ` +
        `warm and ${config.bufferNodes} buffer node(s)`,
    );
  }
  if (!/^[A-Z]{3}$/.test(config.currency))
    throw new ConfigError(`WSAG_CURRENCY must be a three-letter ISO 4217 code such as EUR, got "${config.currency}"`);
  return config;
}

function priceCurve(env: NodeJS.ProcessEnv): PriceCurve {
  const text = env.WSAG_PRICE_CURVE?.trim();
  if (!text) return defaultConfig.priceCurve;
  const curve = parsePriceCurve(text);
  if ('error' in curve) throw new ConfigError(`WSAG_PRICE_CURVE: ${curve.error}`);
  return curve;
}

/**
 * Run-time settings: the executor, the threads' scheduling, the demo job's speed, where checkpoints live, the peers
 * file.
 */
function runTime(
  env: NodeJS.ProcessEnv,
  dataDir: string,
): Pick<
  ServerConfig,
  | 'executor'
  | 'cpuScheduling'
  | 'slurm'
  | 'cpuTimeScale'
  | 'checkpointDir'
  | 'maxCheckpointBytes'
  | 'peersFile'
  | 'voPolicyFile'
> {
  const cpuTimeScale = decimal(env, 'WSAG_CPU_TIME_SCALE', defaultConfig.cpuTimeScale, 0, 1000);
  if (!(cpuTimeScale > 0))
    throw new ConfigError(
      `WSAG_CPU_TIME_SCALE must be greater than 0 (0.001 runs an hour of runtime estimate in 3.6 s), got ` +
        `${env.WSAG_CPU_TIME_SCALE}`,
    );
  return {
    executor: choice(env, 'WSAG_EXECUTOR', executorKinds, defaultConfig.executor),
    cpuScheduling: choice(env, 'WSAG_CPU_SCHEDULING', cpuSchedulings, defaultConfig.cpuScheduling),
    slurm: slurmConfig(env),
    cpuTimeScale,
    checkpointDir: path.resolve(env.WSAG_CHECKPOINT_DIR || path.join(dataDir, 'checkpoints')),
    maxCheckpointBytes: integer(env, 'WSAG_MAX_CHECKPOINT_BYTES', defaultConfig.maxCheckpointBytes, 1024, 1024 ** 4),
    ...(env.WSAG_PEERS_FILE ? { peersFile: path.resolve(env.WSAG_PEERS_FILE) } : {}),
    ...(env.WSAG_VO_POLICY_FILE ? { voPolicyFile: path.resolve(env.WSAG_VO_POLICY_FILE) } : {}),
  };
}

function slurmConfig(env: NodeJS.ProcessEnv): SlurmConfig {
  const executables = (env.WSAG_SLURM_EXECUTABLES ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const prefix of executables) {
    if (!prefix.startsWith('/'))
      throw new ConfigError(
        `WSAG_SLURM_EXECUTABLES lists absolute path prefixes (such as /opt/apps/), got "${prefix}"`,
      );
  }
  const signal = env.WSAG_SLURM_CHECKPOINT_SIGNAL?.trim().replace(/^SIG/i, '').toUpperCase();
  if (signal !== undefined && signal !== '' && !/^(USR1|USR2|HUP|INT|URG|WINCH|[0-9]{1,2})$/.test(signal)) {
    throw new ConfigError(
      `WSAG_SLURM_CHECKPOINT_SIGNAL must be a signal a job can catch without stopping, such as USR1, USR2 or ` +
        `a number; got "${env.WSAG_SLURM_CHECKPOINT_SIGNAL}"`,
    );
  }
  return dropUndefined({
    conf: env.WSAG_SLURM_CONF?.trim() || undefined,
    partition: env.WSAG_SLURM_PARTITION?.trim() || undefined,
    user: env.WSAG_SLURM_USER?.trim() || undefined,
    executables: executables.length > 0 ? executables : undefined,
    checkpointSignal: signal || undefined,
    checkpointTimeoutSeconds: env.WSAG_SLURM_CHECKPOINT_TIMEOUT_SECONDS
      ? integer(env, 'WSAG_SLURM_CHECKPOINT_TIMEOUT_SECONDS', 60, 1, 3600)
      : undefined,
  });
}

/** TLS, trust and signing settings; the files default to the demo PKI of `wsag cert demo` in the data directory. */
function security(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  overrides: Partial<ServerConfig>,
): Pick<ServerConfig, 'tlsPort' | 'tlsCertFile' | 'tlsKeyFile' | 'caFile' | 'anonymous' | 'signAgreements'> {
  const pki = path.join(dataDir, 'pki');
  const tlsPort = env.WSAG_TLS_PORT ? integer(env, 'WSAG_TLS_PORT', 0, 0, 65535) : undefined;
  const tlsCertFile = path.resolve(env.WSAG_TLS_CERT ?? path.join(pki, 'server.pem'));
  const tlsKeyFile = path.resolve(env.WSAG_TLS_KEY ?? path.join(pki, 'server.key'));
  const caFile = path.resolve(env.WSAG_CA_FILE ?? path.join(pki, 'ca.pem'));
  const tlsOn = (overrides.tlsPort ?? tlsPort) !== undefined;
  const anonymous = choice(env, 'WSAG_ANONYMOUS', ['allow', 'deny'] as const, tlsOn ? 'deny' : 'allow');
  const haveSigningKey = fs.existsSync(tlsCertFile) && fs.existsSync(tlsKeyFile);
  const signAgreements =
    choice(env, 'WSAG_SIGN_AGREEMENTS', ['on', 'off'] as const, haveSigningKey ? 'on' : 'off') === 'on';
  if (tlsOn || anonymous === 'deny' || signAgreements) {
    const needed: [string, string][] = [[caFile, 'WSAG_CA_FILE']];
    if (tlsOn || signAgreements) needed.push([tlsCertFile, 'WSAG_TLS_CERT'], [tlsKeyFile, 'WSAG_TLS_KEY']);
    for (const [file, name] of needed) {
      if (!fs.existsSync(file))
        throw new ConfigError(
          `${name}: no file ${file}; run \`wsag cert demo\` for a demo PKI, or point ${name} at your own`,
        );
    }
  }
  return { ...(tlsPort !== undefined ? { tlsPort } : {}), tlsCertFile, tlsKeyFile, caFile, anonymous, signAgreements };
}

// --- the cluster ------------------------------------------------------------------------
