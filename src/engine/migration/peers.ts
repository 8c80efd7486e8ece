/**
 * Peer providers for cross-border migration (Hovestadt 2006, sections 3.6 and 4.2.4): other
 * WS-Agreement servers this provider may move jobs to, or reserve standby capacity at for
 * Full service. Read from a JSON file (env WSAG_PEERS_FILE, see examples/peers.json and
 * docs/operations.md "Peers and migration"), checked at start-up with exact messages.
 */
import path from 'node:path';
import type { GuaranteeLevel, MigrationScope } from '../../domain/terms.js';
import { guaranteeLevels } from '../../domain/terms.js';
import { ConfigError, readJsonFile } from '../configuration/config-error.js';

/**
 * `wsag-server`: another instance of this server; `factoryUrl` is its base URL and
 * checkpoints go to its upload endpoint. `ws-agreement`: any WS-Agreement server;
 * `factoryUrl` is its AgreementFactory endpoint and the Negotiation ports are its siblings.
 */
export type PeerKind = 'wsag-server' | 'ws-agreement';
export const peerKinds: readonly PeerKind[] = ['wsag-server', 'ws-agreement'];

export interface PeerLibrary {
  name: string;
  version: string;
}

/** What a peer's nodes offer for restarting a checkpoint (Hovestadt 2006, section 4.4). */
export interface PeerProfile {
  /** As JSDL names them (LINUX, ...); compared without regard to case. */
  operatingSystems: string[];
  /** As JSDL names them (x86_64, ...); compared without regard to case. */
  architectures: string[];
  /**
   * Checkpoint systems with their version, e.g. "BLCR 0.8.5": a checkpoint restarts only under the identical one
   * (4.4.1.2).
   */
  checkpointSystems: string[];
  /** Installed libraries and their versions. */
  libraries: PeerLibrary[];
}

export interface Peer {
  /** Unique; customer include/exclude lists and reports name peers by it. */
  name: string;
  factoryUrl: string;
  kind: PeerKind;
  /** Bandwidth to the peer for moving checkpoints (t_migr = size / bandwidth, 002 formula 3.5), MB/s. */
  bandwidthMBps: number;
  /**
   * The peer's administrative domain: a peer in ours is a target for MigrationScope AdministrativeDomain; any peer is
   * one for Grid.
   */
  domain?: string;
  profile: PeerProfile;
  /**
   * The peer's template to build offers from; by default the first served template that fits the job (window or
   * deadline).
   */
  templateName?: string;
  /**
   * Where checkpoints are uploaded (HTTP PUT), `{agreementId}` standing for the peer's
   * agreement id. Default for wsag-server peers: {factoryUrl}/api/agreements/{agreementId}/checkpoint.
   * A ws-agreement peer without it cannot receive checkpoints: it takes only jobs that have not run yet.
   */
  checkpointUrl?: string;
}

/** This provider as the compatibility profile of its jobs sees it (Hovestadt 2006, section 3.6.3). */
export interface LocalSite {
  /** Our administrative domain; without it no peer counts as inside it. */
  domain?: string;
  /** What the nodes run when the SLA names none. */
  operatingSystem?: string;
  architecture?: string;
  /** The checkpoint system (and version) our checkpoints are written with, e.g. "BLCR 0.8.5". */
  checkpointSystem?: string;
}

/** The provider's migration policy (Hovestadt 2006, section 3.6.1): which jobs may leave, and to whom. */
export interface ProviderMigrationPolicy {
  /** `problematic`: only jobs in P move; `all`: other jobs may also move to make room for P (002 section 3.6.8). */
  candidates: 'problematic' | 'all';
  /** Guarantee levels whose jobs may move. */
  levels: GuaranteeLevel[];
  /** Farthest the provider lets jobs go: None turns migration off. */
  scope: MigrationScope;
  /** If set, only these agreements may move. */
  includeAgreements?: string[];
  excludeAgreements: string[];
  /** If set, only agreements made from these templates (by name) may move. */
  includeTemplates?: string[];
  excludeTemplates: string[];
  /** Largest checkpoint sent to a peer outside our administrative domain, MB; none when absent. */
  maxGridCheckpointMB?: number;
  /** If set, only these peers (by name) are used. */
  includePeers?: string[];
  excludePeers: string[];
}

export interface PeersConfig {
  local: LocalSite;
  policy: ProviderMigrationPolicy;
  peers: Peer[];
}

/**
 * Whether a checkpoint can be sent to the peer: a wsag-server takes uploads; another WS-Agreement server only where
 * checkpointUrl says.
 */
export function receivesCheckpoints(peer: Peer): boolean {
  return peer.kind === 'wsag-server' || peer.checkpointUrl !== undefined;
}

/** The policy when the file says nothing: every fault-tolerant job may move anywhere. */
export const defaultMigrationPolicy: ProviderMigrationPolicy = {
  candidates: 'all',
  levels: ['Standard', 'Enhanced', 'Full'],
  scope: 'Grid',
  excludeAgreements: [],
  excludeTemplates: [],
  excludePeers: [],
};

/** The peers configuration named by WSAG_PEERS_FILE, or undefined when it is not set (no migration). */
export function peersFromEnv(env: NodeJS.ProcessEnv): PeersConfig | undefined {
  const file = env.WSAG_PEERS_FILE;
  return file ? readPeersFile(path.resolve(file)) : undefined;
}

/** Reads and checks a peers file; every problem is a ConfigError naming the file and the setting. */
export function readPeersFile(file: string): PeersConfig {
  const where = `WSAG_PEERS_FILE ${file}`;
  return parsePeersFile(readJsonFile(file, where), where);
}

const topKeys = ['local', 'policy', 'peers'];
const localKeys = ['domain', 'operatingSystem', 'architecture', 'checkpointSystem'];
const policyKeys = [
  'candidates',
  'levels',
  'scope',
  'includeAgreements',
  'excludeAgreements',
  'includeTemplates',
  'excludeTemplates',
  'maxGridCheckpointMB',
  'includePeers',
  'excludePeers',
];
const peerKeys = ['name', 'factoryUrl', 'kind', 'bandwidthMBps', 'domain', 'profile', 'templateName', 'checkpointUrl'];
const profileKeys = ['operatingSystems', 'architectures', 'checkpointSystems', 'libraries'];
const scopes: readonly MigrationScope[] = ['None', 'AdministrativeDomain', 'Grid'];

/** Checks the parsed JSON of a peers file; `where` starts every message. */
export function parsePeersFile(json: unknown, where: string): PeersConfig {
  const check = new Checker(where);
  if (!isObject(json))
    return check.fail('the top level must be an object with "peers" (and optionally "local" and "policy")');
  check.knownKeys(json, topKeys, 'the file');
  const local = json.local === undefined ? {} : parseLocal(json.local, check);
  const policy = json.policy === undefined ? structuredClone(defaultMigrationPolicy) : parsePolicy(json.policy, check);
  if (!Array.isArray(json.peers)) return check.fail(`"peers" must be a list of peers, got ${show(json.peers)}`);
  const peers = json.peers.map((raw: unknown, i: number) => parsePeer(raw, `peers[${i}]`, check));
  const seen = new Map<string, number>();
  peers.forEach((peer, i) => {
    const earlier = seen.get(peer.name);
    if (earlier !== undefined)
      check.fail(`peers[${i}].name "${peer.name}" is also the name of peers[${earlier}]: peer names must be unique`);
    seen.set(peer.name, i);
  });
  for (const [key, list] of [
    ['includePeers', policy.includePeers],
    ['excludePeers', policy.excludePeers],
  ] as const) {
    for (const name of list ?? []) {
      if (!seen.has(name))
        check.fail(
          `policy.${key} names "${name}", which is not a peer in "peers"; known: ` +
            `${[...seen.keys()].join(', ') || 'none'}`,
        );
    }
  }
  return { local, policy, peers };
}

function parseLocal(raw: unknown, check: Checker): LocalSite {
  if (!isObject(raw)) return check.fail(`"local" must be an object, got ${show(raw)}`);
  check.knownKeys(raw, localKeys, 'local');
  const local: LocalSite = {};
  for (const key of localKeys as Array<keyof LocalSite>) {
    const value = check.text(raw, key, 'local', false);
    if (value !== undefined) local[key] = value;
  }
  return local;
}

function parsePolicy(raw: unknown, check: Checker): ProviderMigrationPolicy {
  if (!isObject(raw)) return check.fail(`"policy" must be an object, got ${show(raw)}`);
  check.knownKeys(raw, policyKeys, 'policy');
  const policy: ProviderMigrationPolicy = structuredClone(defaultMigrationPolicy);
  if (raw.candidates !== undefined)
    policy.candidates = check.oneOf(raw.candidates, ['problematic', 'all'] as const, 'policy.candidates');
  if (raw.scope !== undefined) policy.scope = check.oneOf(raw.scope, scopes, 'policy.scope');
  if (raw.levels !== undefined) {
    const levels = check.names(raw, 'levels', 'policy');
    for (const level of levels) check.oneOf(level, guaranteeLevels, 'policy.levels');
    policy.levels = levels as GuaranteeLevel[];
  }
  for (const key of ['includeAgreements', 'includeTemplates', 'includePeers'] as const) {
    if (raw[key] !== undefined) policy[key] = check.names(raw, key, 'policy');
  }
  for (const key of ['excludeAgreements', 'excludeTemplates', 'excludePeers'] as const) {
    if (raw[key] !== undefined) policy[key] = check.names(raw, key, 'policy');
  }
  if (raw.maxGridCheckpointMB !== undefined)
    policy.maxGridCheckpointMB = check.positive(raw.maxGridCheckpointMB, 'policy.maxGridCheckpointMB', 'MB');
  return policy;
}

function parsePeer(raw: unknown, name: string, check: Checker): Peer {
  if (!isObject(raw)) return check.fail(`${name} must be an object, got ${show(raw)}`);
  check.knownKeys(raw, peerKeys, name);
  const peerName = check.text(raw, 'name', name, true) as string;
  const kind =
    raw.kind === undefined
      ? check.fail(`${name}.kind must be one of ${peerKinds.join(', ')}, got nothing`)
      : check.oneOf(raw.kind, peerKinds, `${name}.kind`);
  const factoryUrl = check.url(raw.factoryUrl, `${name}.factoryUrl`).replace(/\/$/, '');
  if (kind === 'ws-agreement' && !/\/AgreementFactory$/.test(factoryUrl)) {
    check.fail(
      `${name}.factoryUrl of a ws-agreement peer must be its AgreementFactory endpoint, ending in ` +
        `/AgreementFactory (the Negotiation ports are taken to be beside it), got ${show(raw.factoryUrl)}`,
    );
  }
  const peer: Peer = {
    name: peerName,
    factoryUrl,
    kind,
    bandwidthMBps: check.positive(raw.bandwidthMBps, `${name}.bandwidthMBps`, 'MB/s'),
    profile: parseProfile(raw.profile, `${name}.profile`, check),
  };
  const domain = check.text(raw, 'domain', name, false);
  if (domain !== undefined) peer.domain = domain;
  const templateName = check.text(raw, 'templateName', name, false);
  if (templateName !== undefined) peer.templateName = templateName;
  if (raw.checkpointUrl !== undefined) {
    const url = check.url(raw.checkpointUrl, `${name}.checkpointUrl`);
    if (!url.includes('{agreementId}'))
      check.fail(
        `${name}.checkpointUrl must contain {agreementId} (replaced by the peer's agreement id), got ${show(url)}`,
      );
    peer.checkpointUrl = url;
  }
  return peer;
}

function parseProfile(raw: unknown, name: string, check: Checker): PeerProfile {
  if (!isObject(raw)) return check.fail(`${name} must be an object with ${profileKeys.join(', ')}, got ${show(raw)}`);
  check.knownKeys(raw, profileKeys, name);
  const libraries = raw.libraries === undefined ? [] : raw.libraries;
  if (!Array.isArray(libraries))
    return check.fail(`${name}.libraries must be a list of { "name", "version" }, got ${show(libraries)}`);
  return {
    operatingSystems: raw.operatingSystems === undefined ? [] : check.names(raw, 'operatingSystems', name),
    architectures: raw.architectures === undefined ? [] : check.names(raw, 'architectures', name),
    checkpointSystems: raw.checkpointSystems === undefined ? [] : check.names(raw, 'checkpointSystems', name),
    libraries: libraries.map((lib: unknown, i: number): PeerLibrary => {
      const at = `${name}.libraries[${i}]`;
      if (!isObject(lib)) return check.fail(`${at} must be an object { "name", "version" }, got ${show(lib)}`);
      check.knownKeys(lib, ['name', 'version'], at);
      return {
        name: check.text(lib, 'name', at, true) as string,
        version: check.text(lib, 'version', at, true) as string,
      };
    }),
  };
}

/** The checks of one file, each failing with a ConfigError that starts with `where`. */
class Checker {
  constructor(private readonly where: string) {}

  fail(message: string): never {
    throw new ConfigError(`${this.where}: ${message}`);
  }

  knownKeys(object: Record<string, unknown>, known: readonly string[], name: string): void {
    for (const key of Object.keys(object)) {
      if (!known.includes(key)) this.fail(`${name} has an unknown setting "${key}"; known: ${known.join(', ')}`);
    }
  }

  text(object: Record<string, unknown>, key: string, name: string, required: boolean): string | undefined {
    const value = object[key];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value.trim() === '')
      return this.fail(`${name}.${key} must be a non-empty string, got ${show(value)}`);
    return value.trim();
  }

  names(object: Record<string, unknown>, key: string, name: string): string[] {
    const value = object[key];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
      return this.fail(`${name}.${key} must be a list of non-empty strings, got ${show(value)}`);
    }
    return (value as string[]).map((v) => v.trim());
  }

  oneOf<T extends string>(value: unknown, values: readonly T[], name: string): T {
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value))
      return this.fail(`${name} must be one of ${values.join(', ')}, got ${show(value)}`);
    return value as T;
  }

  positive(value: unknown, name: string, unit: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      return this.fail(`${name} must be a positive number (${unit}), got ${show(value)}`);
    return value;
  }

  url(value: unknown, name: string): string {
    if (typeof value !== 'string' || !/^https?:\/\/[^/]+/.test(value))
      return this.fail(`${name} must be an http(s) URL, got ${show(value)}`);
    return value;
  }
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
