import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/engine/configuration/config.js';
import {
  defaultMigrationPolicy,
  parsePeersFile,
  peersFromEnv,
  readPeersFile,
  receivesCheckpoints,
} from '../../src/engine/migration/peers.js';
import { projectRoot } from '../support/server.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-peers-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const message = (parse: () => unknown): string => {
  try {
    parse();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('no ConfigError');
};
const profile = {
  operatingSystems: ['LINUX'],
  architectures: ['x86_64'],
  checkpointSystems: ['BLCR 0.8.5'],
  libraries: [{ name: 'libmpi.so', version: '4.1.5' }],
};
const peer = { name: 'b', factoryUrl: 'http://127.0.0.1:8081/', kind: 'wsag-server', bandwidthMBps: 100, profile };
const parse = (json: unknown) => parsePeersFile(json, 'peers.json');

describe('the peers file (WSAG_PEERS_FILE)', () => {
  it('the shipped example is valid: local site, policy and two peers', () => {
    const config = readPeersFile(path.join(projectRoot, 'examples/peers.json'));
    expect(config.local).toEqual({
      domain: 'pc2.example.org',
      operatingSystem: 'LINUX',
      architecture: 'x86_64',
      checkpointSystem: 'BLCR 0.8.5',
    });
    expect(config.peers.map((p) => [p.name, p.kind])).toEqual([
      ['cluster-b', 'wsag-server'],
      ['grid-site-x', 'ws-agreement'],
    ]);
    expect(config.policy.maxGridCheckpointMB).toBe(65536);
    expect(config.peers.every(receivesCheckpoints)).toBe(true);
  });

  it('fills the defaults: no local facts, the default policy, no template, trailing slash of the URL dropped', () => {
    const config = parse({ peers: [peer] });
    expect(config.local).toEqual({});
    expect(config.policy).toEqual(defaultMigrationPolicy);
    expect(config.peers[0]).toEqual({ ...peer, factoryUrl: 'http://127.0.0.1:8081' });
  });

  it('is read only when WSAG_PEERS_FILE is set', () => {
    expect(peersFromEnv({})).toBeUndefined();
    const file = path.join(dir, 'peers.json');
    fs.writeFileSync(file, JSON.stringify({ peers: [peer] }));
    expect(peersFromEnv({ WSAG_PEERS_FILE: file })?.peers.map((p) => p.name)).toEqual(['b']);
  });

  it('names the file and the setting in every error', () => {
    const file = path.join(dir, 'broken.json');
    fs.writeFileSync(file, '{ "peers": [');
    expect(message(() => readPeersFile(file))).toMatch(new RegExp(`^WSAG_PEERS_FILE ${file} is not valid JSON: `));
    expect(message(() => readPeersFile(path.join(dir, 'missing.json')))).toMatch(
      /^WSAG_PEERS_FILE .*missing\.json cannot be read: /,
    );
    expect(message(() => parse([]))).toBe(
      'peers.json: the top level must be an object with "peers" (and optionally "local" and "policy")',
    );
    expect(message(() => parse({ peers: {} }))).toBe('peers.json: "peers" must be a list of peers, got {}');
    expect(message(() => parse({ peers: [], extra: 1 }))).toBe(
      'peers.json: the file has an unknown setting "extra"; known: local, policy, peers',
    );
    expect(message(() => parse({ peers: [{ ...peer, bandwidthMBps: 0 }] }))).toBe(
      'peers.json: peers[0].bandwidthMBps must be a positive number (MB/s), got 0',
    );
    expect(message(() => parse({ peers: [{ ...peer, kind: 'soap' }] }))).toBe(
      'peers.json: peers[0].kind must be one of wsag-server, ws-agreement, got "soap"',
    );
    expect(message(() => parse({ peers: [{ ...peer, factoryUrl: 'ftp://x' }] }))).toBe(
      'peers.json: peers[0].factoryUrl must be an http(s) URL, got "ftp://x"',
    );
    expect(message(() => parse({ peers: [peer, peer] }))).toBe(
      'peers.json: peers[1].name "b" is also the name of peers[0]: peer names must be unique',
    );
    expect(message(() => parse({ peers: [{ ...peer, profile: { ...profile, libraries: [{ name: 'x' }] } }] }))).toBe(
      'peers.json: peers[0].profile.libraries[0].version must be a non-empty string, got nothing',
    );
    expect(message(() => parse({ peers: [{ ...peer, profile: { ...profile, os: [] } }] }))).toBe(
      'peers.json: peers[0].profile has an unknown setting "os"; known: operatingSystems, architectures, checkpointSystems, libraries',
    );
    expect(message(() => parse({ peers: [{ ...peer, kind: 'ws-agreement' }] }))).toBe(
      'peers.json: peers[0].factoryUrl of a ws-agreement peer must be its AgreementFactory endpoint, ending in /AgreementFactory (the Negotiation ports are taken to be beside it), got "http://127.0.0.1:8081/"',
    );
    expect(message(() => parse({ peers: [{ ...peer, checkpointUrl: 'http://x/upload' }] }))).toBe(
      'peers.json: peers[0].checkpointUrl must contain {agreementId} (replaced by the peer\'s agreement id), got "http://x/upload"',
    );
    expect(message(() => parse({ peers: [peer], policy: { scope: 'World' } }))).toBe(
      'peers.json: policy.scope must be one of None, AdministrativeDomain, Grid, got "World"',
    );
    expect(message(() => parse({ peers: [peer], policy: { levels: ['Gold'] } }))).toBe(
      'peers.json: policy.levels must be one of Background, Legacy, Standard, Enhanced, Full, got "Gold"',
    );
    expect(message(() => parse({ peers: [peer], policy: { excludePeers: ['c'] } }))).toBe(
      'peers.json: policy.excludePeers names "c", which is not a peer in "peers"; known: b',
    );
  });

  it('a ws-agreement peer receives checkpoints only where checkpointUrl says', () => {
    const factoryUrl = 'https://x.example.net/wsag/AgreementFactory';
    const { peers } = parse({
      peers: [
        { ...peer, name: 'plain', kind: 'ws-agreement', factoryUrl },
        {
          ...peer,
          name: 'upload',
          kind: 'ws-agreement',
          factoryUrl,
          checkpointUrl: 'https://x.example.net/in/{agreementId}',
        },
      ],
    });
    expect(peers.map(receivesCheckpoints)).toEqual([false, true]);
  });
});
