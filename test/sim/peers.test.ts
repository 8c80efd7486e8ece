import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPeers, parseSimulatedPeers, WorkloadError } from '../../src/sim/index.js';

const peer = {
  name: 'p1',
  factoryUrl: 'http://p1.example.org',
  kind: 'wsag-server',
  bandwidthMBps: 100,
  profile: { operatingSystems: ['LINUX'] },
  simulation: { nodes: 16, pricePerNodeHour: 1.5 },
};

function error(json: unknown): string {
  try {
    parseSimulatedPeers(json, 'peers.json');
  } catch (e) {
    expect(e).toBeInstanceOf(WorkloadError);
    return (e as Error).message;
  }
  throw new Error('expected a WorkloadError');
}

describe('the peers file of wsag sim', () => {
  it("is a server peers file whose peers have simulation terms; the policy defaults as the server's", () => {
    const parsed = parseSimulatedPeers(
      {
        peers: [
          peer,
          { ...peer, name: 'p2', simulation: { nodes: 2, pricePerNodeHour: 0, pricePerJob: 4, currency: 'USD' } },
        ],
      },
      'peers.json',
    );
    expect(parsed.peers.peers.map((p) => p.name)).toEqual(['p1', 'p2']);
    expect(parsed.peers.peers[0]).not.toHaveProperty('simulation');
    expect(parsed.peers.policy).toMatchObject({
      candidates: 'all',
      scope: 'Grid',
      levels: ['Standard', 'Enhanced', 'Full'],
    });
    expect([...parsed.terms.entries()]).toEqual([
      ['p1', { nodes: 16, pricePerNodeHour: 1.5, pricePerJob: 0 }],
      ['p2', { nodes: 2, pricePerNodeHour: 0, pricePerJob: 4, currency: 'USD' }],
    ]);
  });

  it.each([
    [
      [1],
      'peers.json: a peers file is an object with "peers" (and optionally "local" and "policy"), see docs/operations.md',
    ],
    [{ peers: [] }, 'peers.json: "peers" is empty: the simulator needs at least one peer to migrate to'],
    [
      { peers: [{ ...peer, simulation: undefined }] },
      'peers.json: peers[0] (p1).simulation is required by wsag sim: { "nodes": N, "pricePerNodeHour": P } (see docs/operations.md)',
    ],
    [{ peers: [{ ...peer, simulation: 3 }] }, 'peers.json: peers[0] (p1).simulation must be an object, got 3'],
    [
      { peers: [{ ...peer, simulation: { nodes: 4, pricePerNodeHour: 1, price: 2 } }] },
      'peers.json: peers[0] (p1).simulation has an unknown field "price" (allowed: nodes, pricePerNodeHour, pricePerJob, currency)',
    ],
    [
      { peers: [{ ...peer, simulation: { nodes: 0, pricePerNodeHour: 1 } }] },
      'peers.json: peers[0] (p1).simulation.nodes must be a whole number, 1 or more, got 0',
    ],
    [
      { peers: [{ ...peer, simulation: { nodes: 4 } }] },
      'peers.json: peers[0] (p1).simulation.pricePerNodeHour is required',
    ],
    [
      { peers: [{ ...peer, simulation: { nodes: 4, pricePerNodeHour: -1 } }] },
      'peers.json: peers[0] (p1).simulation.pricePerNodeHour must be a number, 0 or more, got -1',
    ],
    [
      { peers: [{ ...peer, simulation: { nodes: 4, pricePerNodeHour: 1, currency: '' } }] },
      'peers.json: peers[0] (p1).simulation.currency must be a non-empty string, got ""',
    ],
    // The rest is the server's own check (src/engine/migration/peers.ts), with the file named the same way.
    [
      { peers: [{ ...peer, bandwidthMBps: 0 }] },
      'peers.json: peers[0].bandwidthMBps must be a positive number (MB/s), got 0',
    ],
    [
      { peers: [peer], policy: { scope: 'Moon' } },
      'peers.json: policy.scope must be one of None, AdministrativeDomain, Grid, got "Moon"',
    ],
  ])('%j: %s', (json, message) => {
    expect(error(json)).toBe(message);
  });

  describe('files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-sim-peers-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('names the file in every message', () => {
      const missing = path.join(dir, 'missing.json');
      expect(() => loadPeers(missing)).toThrow(`${missing}: no such file`);
      const bad = path.join(dir, 'bad.json');
      fs.writeFileSync(bad, JSON.stringify({ peers: [{ ...peer, simulation: undefined }] }));
      expect(() => loadPeers(bad)).toThrow(`${bad}: peers[0] (p1).simulation is required by wsag sim`);
    });

    it('the shipped peers files are valid', () => {
      for (const name of ['peers.json', 'peers-small.json']) {
        const file = fileURLToPath(new URL(`../../workloads/${name}`, import.meta.url));
        expect(loadPeers(file).terms.size).toBeGreaterThanOrEqual(2);
      }
    });
  });
});
