import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig, loadConfig } from '../../src/engine/configuration/config.js';
import { clusterDescription } from '../../src/engine/configuration/cluster-description.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import { defaultSiteTiming } from '../../src/scheduler/site.js';
import { projectRoot } from '../support/server.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let files = 0;
function clusterFile(content: unknown): string {
  const file = path.join(dir, `cluster-${files++}.json`);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}
const message = (load: () => unknown): string => {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('no ConfigError');
};
const group = { count: 2, idPrefix: 'x', memoryGB: 64, cpus: 16 };

describe('the cluster the scheduler plans on', () => {
  it('by default: 64 identical nodes n001..n064, no buffer nodes, the site timing, no peer standby nodes', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      clusterNodes: 64,
      bufferNodes: 0,
      problemHorizonSeconds: 14400,
      peerStandbyNodes: 0,
    });
    const cluster = clusterDescription(config);
    expect(cluster.nodes).toHaveLength(64);
    expect(cluster.nodes[0]).toEqual({ id: 'n001', memoryGB: 256, cpus: 64, interconnect: 'InfiniBand' });
    expect(cluster.nodes[63]?.id).toBe('n064');
    expect(cluster.timing).toEqual(defaultSiteTiming);
    expect(cluster.peerStandbyNodes).toBe(0);
  });

  it('WSAG_CLUSTER_NODES, WSAG_BUFFER_NODES (the last ones), WSAG_PROBLEM_HORIZON_SECONDS, WSAG_PEER_STANDBY_NODES', () => {
    const config = loadConfig({
      WSAG_CLUSTER_NODES: '1200',
      WSAG_BUFFER_NODES: '2',
      WSAG_PROBLEM_HORIZON_SECONDS: '3600',
      WSAG_PEER_STANDBY_NODES: '8',
    });
    const cluster = clusterDescription(config);
    expect(cluster.nodes.map((n) => n.id).slice(0, 2)).toEqual(['n0001', 'n0002']);
    expect(cluster.nodes.filter((n) => n.buffer).map((n) => n.id)).toEqual(['n1199', 'n1200']);
    expect(cluster.timing.problemHorizonSeconds).toBe(3600);
    expect(cluster.peerStandbyNodes).toBe(8);
  });

  it('refuses bad values with exact messages', () => {
    expect(message(() => loadConfig({ WSAG_BUFFER_NODES: '64' }))).toBe(
      'WSAG_BUFFER_NODES must be less than WSAG_CLUSTER_NODES (64): SLA jobs need at least one node that is not a buffer node, got 64',
    );
    expect(message(() => loadConfig({ WSAG_PROBLEM_HORIZON_SECONDS: '0' }))).toBe(
      'WSAG_PROBLEM_HORIZON_SECONDS must be between 1 and 31536000, got 0',
    );
    expect(message(() => loadConfig({ WSAG_PEER_STANDBY_NODES: 'some' }))).toBe(
      'WSAG_PEER_STANDBY_NODES must be a whole number, got "some"',
    );
    const file = clusterFile({ nodeGroups: [group] });
    expect(message(() => loadConfig({ WSAG_CLUSTER_FILE: file, WSAG_CLUSTER_NODES: '8' }))).toBe(
      'WSAG_CLUSTER_NODES and WSAG_CLUSTER_FILE are both set: the cluster file lists the nodes; unset one of them',
    );
    expect(message(() => loadConfig({ WSAG_CLUSTER_FILE: file, WSAG_BUFFER_NODES: '1' }))).toBe(
      'WSAG_BUFFER_NODES applies to the identical nodes of WSAG_CLUSTER_NODES; with WSAG_CLUSTER_FILE mark node groups "buffer": true',
    );
  });
});

describe('WSAG_CLUSTER_FILE', () => {
  it('loads the shipped example: node groups, islands, buffer nodes, timing and peer standby nodes', () => {
    const file = path.join(projectRoot, 'examples/cluster.json');
    const config = loadConfig({ WSAG_CLUSTER_FILE: file });
    expect(config.clusterFile).toBe(file);
    const cluster = clusterDescription(config);
    expect(cluster.nodes).toHaveLength(72);
    expect(cluster.nodes[0]).toEqual({
      id: 'ib-a001',
      memoryGB: 128,
      cpus: 32,
      interconnect: 'InfiniBand',
      island: 'a',
      operatingSystem: 'LINUX',
      architecture: 'x86_64',
    });
    expect(cluster.nodes.filter((n) => n.buffer).map((n) => n.id)).toEqual([
      'eth001',
      'eth002',
      'eth003',
      'eth004',
      'eth005',
      'eth006',
      'eth007',
      'eth008',
    ]);
    expect(cluster.timing).toMatchObject({
      nodeInitSeconds: 45,
      checkpointSecondsPerNodeGB: 2,
      problemHorizonSeconds: 14400,
    });
    expect(cluster.peerStandbyNodes).toBe(16);
    // ... and the scheduler takes it: a 4-node InfiniBand job fits in one island.
    const plan = new PlanningService(cluster);
    const decision = plan.admit(
      'j',
      {
        nodeCount: 4,
        interconnect: 'InfiniBand',
        libraries: [],
        runtimeSeconds: 3600,
        requestKind: 'Binding',
        guaranteeLevel: 'Standard',
        maxCoveredOutages: 1,
        securityPolicy: [],
      },
      new Date('2026-11-21T12:00:00Z'),
    );
    expect(decision.accepted && decision.allocation.segments?.[0]?.nodeIds).toEqual([
      'ib-a001',
      'ib-a002',
      'ib-a003',
      'ib-a004',
    ]);
  });

  it("the environment overrides the file's problem horizon and peer standby nodes", () => {
    const file = clusterFile({ nodeGroups: [group], timing: { problemHorizonSeconds: 600 }, peerStandbyNodes: 3 });
    expect(loadConfig({ WSAG_CLUSTER_FILE: file })).toMatchObject({ problemHorizonSeconds: 600, peerStandbyNodes: 3 });
    const config = loadConfig({
      WSAG_CLUSTER_FILE: file,
      WSAG_PROBLEM_HORIZON_SECONDS: '7200',
      WSAG_PEER_STANDBY_NODES: '0',
    });
    expect(config).toMatchObject({ problemHorizonSeconds: 7200, peerStandbyNodes: 0 });
    expect(clusterDescription(config).timing.problemHorizonSeconds).toBe(7200);
  });

  it("reads a node group's failure group (failure rates are learned per group)", () => {
    const file = clusterFile({
      nodeGroups: [
        { ...group, failureGroup: 'rack-7' },
        { ...group, idPrefix: 'y' },
      ],
    });
    const nodes = clusterDescription(loadConfig({ WSAG_CLUSTER_FILE: file })).nodes;
    expect(nodes.map((n) => n.failureGroup)).toEqual(nodes.map((n) => (n.id.startsWith('y') ? undefined : 'rack-7')));
    expect(
      new PlanningService({ nodes, timing: defaultSiteTiming, peerStandbyNodes: 0 })
        .failureRate(new Date())
        .groups.map((g) => g.group),
    ).toEqual(['rack-7', 'cluster']);
  });

  it('refuses a broken file with a message naming the file and the setting', () => {
    const cases: Array<[unknown, string]> = [
      ['{ not json', 'is not valid JSON: '],
      [[], ': the top level must be an object with "nodeGroups"'],
      [{ nodes: [] }, ': the file has an unknown setting "nodes"; known: nodeGroups, timing, peerStandbyNodes'],
      [{ nodeGroups: [] }, ': "nodeGroups" must be a non-empty list of node groups, got []'],
      [
        { nodeGroups: [{ ...group, count: 0 }] },
        ': nodeGroups[0].count must be a whole number from 1 to 1000000, got 0',
      ],
      [
        { nodeGroups: [{ ...group, cpus: 1.5 }] },
        ': nodeGroups[0].cpus must be a whole number from 1 to 1000000, got 1.5',
      ],
      [{ nodeGroups: [{ ...group, memoryGB: '64' }] }, ': nodeGroups[0].memoryGB must be a positive number, got "64"'],
      [
        { nodeGroups: [{ ...group, idPrefix: 'a/b' }] },
        ': nodeGroups[0].idPrefix may hold only letters, digits, "_", "." and "-" (node ids appear in URLs), got "a/b"',
      ],
      [
        { nodeGroups: [group, group] },
        ': nodeGroups[1].idPrefix "x" is also used by nodeGroups[0]: node ids must be unique',
      ],
      [
        { nodeGroups: [{ ...group, interconnect: '' }] },
        ': nodeGroups[0].interconnect must be a non-empty string, got ""',
      ],
      [{ nodeGroups: [{ ...group, buffer: 'yes' }] }, ': nodeGroups[0].buffer must be true or false, got "yes"'],
      [
        { nodeGroups: [{ ...group, gpus: 4 }] },
        ': nodeGroups[0] has an unknown setting "gpus"; known: count, idPrefix, memoryGB, cpus, interconnect, island, failureGroup, operatingSystem, architecture, buffer',
      ],
      [
        { nodeGroups: [{ ...group, buffer: true }] },
        ': every node group is a buffer or warm group: SLA jobs need at least one node of their own',
      ],
      [
        { nodeGroups: [group], timing: { nodeInit: 3 } },
        `: timing has an unknown setting "nodeInit"; known: ${Object.keys(defaultSiteTiming).join(', ')}`,
      ],
      [
        { nodeGroups: [group], timing: { slowdownFactor: 0.9 } },
        ': timing.slowdownFactor must be a number of at least 1, got 0.9',
      ],
      [
        { nodeGroups: [{ ...group, failureGroup: 3 }] },
        ': nodeGroups[0].failureGroup must be a non-empty string, got 3',
      ],
      [
        { nodeGroups: [group], timing: { reservationSpareNodes: 0.5 } },
        ': timing.reservationSpareNodes must be a whole number, got 0.5',
      ],
      [
        { nodeGroups: [group], timing: { promiseRiskLimit: 2 } },
        ': timing.promiseRiskLimit is a chance: a number from 0 to 1, got 2',
      ],
      [
        { nodeGroups: [group], timing: { chanceShare: 1.5 } },
        ': timing.chanceShare is a share of a run: a number from 0 to 1, got 1.5',
      ],
      [
        { nodeGroups: [group], timing: { parallelCheckpoint: 1 } },
        ': timing.parallelCheckpoint must be true or false, got 1',
      ],
      [
        { nodeGroups: [group], timing: { bestEffortStartsAhead: 'yes' } },
        ': timing.bestEffortStartsAhead must be true or false, got "yes"',
      ],
      [
        { nodeGroups: [group], peerStandbyNodes: -1 },
        ': "peerStandbyNodes" must be a whole number of at least 0, got -1',
      ],
    ];
    for (const [content, expected] of cases) {
      const file = clusterFile(content);
      const got = message(() => loadConfig({ WSAG_CLUSTER_FILE: file }));
      expect(got.startsWith(`WSAG_CLUSTER_FILE ${file}`), got).toBe(true);
      expect(got.slice(`WSAG_CLUSTER_FILE ${file}`.length), JSON.stringify(content)).toContain(expected);
    }
    const missing = path.join(dir, 'missing.json');
    expect(message(() => loadConfig({ WSAG_CLUSTER_FILE: missing }))).toMatch(
      new RegExp(`^WSAG_CLUSTER_FILE ${missing} cannot be read: ENOENT`),
    );
  });

  it('documents its defaults: the default config has no cluster file', () => {
    expect(defaultConfig.clusterFile).toBeUndefined();
    expect(defaultConfig.cluster).toBeUndefined();
  });
});

describe('document threads', () => {
  it('WSAG_DOCUMENT_THREADS, or WSAG_SIGNING_THREADS, its earlier name, when it is not set; unset: the machine decides', () => {
    expect(loadConfig({}).documentThreads).toBeUndefined();
    expect(loadConfig({ WSAG_DOCUMENT_THREADS: '3' }).documentThreads).toBe(3);
    expect(loadConfig({ WSAG_SIGNING_THREADS: '2' }).documentThreads).toBe(2);
    expect(loadConfig({ WSAG_DOCUMENT_THREADS: '0', WSAG_SIGNING_THREADS: '2' }).documentThreads).toBe(0);
    expect(() => loadConfig({ WSAG_DOCUMENT_THREADS: '65' })).toThrow(/WSAG_DOCUMENT_THREADS/);
  });
});
