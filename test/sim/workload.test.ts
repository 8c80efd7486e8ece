import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAgainstCluster, loadInputs, parseCluster, parseWorkload, WorkloadError } from '../../src/sim/index.js';

/** Bad inputs give one exact message naming the entry and the field. */
function workloadError(input: unknown): string {
  try {
    parseWorkload(input);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkloadError);
    return (error as Error).message;
  }
  throw new Error('expected a WorkloadError');
}

function clusterError(input: unknown): string {
  try {
    parseCluster(input);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkloadError);
    return (error as Error).message;
  }
  throw new Error('expected a WorkloadError');
}

const ok = { id: 'j1', arrival: 0, kind: 'deadline', level: 'Standard', nodes: 2, estimate: 3600, deadline: 7200 };
const withJob = (job: Record<string, unknown>) => ({ jobs: [ok, job] });
const node = { count: 4, prefix: 'n', memoryGB: 16, cpus: 8 };

describe('workload validation', () => {
  it('accepts a minimal workload and fills in the defaults', () => {
    const w = parseWorkload({
      jobs: [
        ok,
        { id: 'b', arrival: 5, kind: 'best-effort', nodes: 1, estimate: 60 },
        { id: 'r', arrival: 1, kind: 'reservation', level: 'Legacy', nodes: 1, window: { start: 10, end: 70 } },
      ],
    });
    expect(w).toMatchObject({
      name: 'workload',
      start: Date.parse('2026-01-05T00:00:00Z'),
      currency: 'EUR',
      failures: [],
    });
    expect(w.jobs[0]).toEqual({
      id: 'j1',
      arrival: 0,
      kind: 'deadline',
      level: 'Standard',
      nodes: 2,
      estimate: 3600,
      runtime: 3600,
      deadline: 7200,
      value: 1,
      penalty: 0,
      storageGB: 0,
      outages: 0,
    });
    expect(w.jobs[1]).toMatchObject({ level: 'Legacy', estimate: 60, runtime: 60 });
    expect(w.jobs[2]).toMatchObject({ estimate: 60, runtime: 60, window: { start: 10, end: 70 } });
  });

  it.each([
    [[1, 2], 'the workload must be a JSON object with "jobs", got an array'],
    [{}, 'workload: "jobs" is required'],
    [{ jobs: {} }, 'workload: "jobs" must be an array, got {}'],
    [
      { jobs: [], job: [] },
      'workload: unknown field "job" (allowed: name, description, start, currency, cluster, jobs, failures)',
    ],
    [
      { jobs: [], start: '2026-01-05' },
      'workload: "start" must be an ISO 8601 date-time with a time zone such as 2026-01-05T00:00:00Z, got "2026-01-05"',
    ],
    [
      { jobs: [], cluster: 3 },
      'workload: "cluster" must be a file name (relative to the workload) or a cluster description object, got 3',
    ],
    [{ jobs: ['x'] }, 'jobs[0]: a job must be an object, got "x"'],
    [withJob({ ...ok, id: 'j1' }), 'jobs[1] (j1): id "j1" is already used by jobs[0]'],
    [withJob({ ...ok, id: undefined }), 'jobs[1]: "id" is required'],
    [
      withJob({ ...ok, id: 'x', runtme: 5 }),
      'jobs[1] (x): unknown field "runtme" (allowed: id, arrival, kind, level, nodes, estimate, runtime, deadline, earliestStart, window, value, penalty, memoryGB, storageGB, outages, checkpointsPerHour, interconnect, migration, vo)',
    ],
    [withJob({ ...ok, id: 'x', arrival: -1 }), 'jobs[1] (x): "arrival" must be a number, 0 or more, got -1'],
    [withJob({ ...ok, id: 'x', arrival: '10' }), 'jobs[1] (x): "arrival" must be a number, 0 or more, got "10"'],
    [
      withJob({ ...ok, id: 'x', kind: 'batch' }),
      'jobs[1] (x): "kind" must be one of reservation, deadline, best-effort, background, got "batch"',
    ],
    [withJob({ ...ok, id: 'x', nodes: 0 }), 'jobs[1] (x): "nodes" must be a whole number, 1 or more, got 0'],
    [withJob({ ...ok, id: 'x', nodes: 1.5 }), 'jobs[1] (x): "nodes" must be a whole number, 1 or more, got 1.5'],
    [
      withJob({ ...ok, id: 'x', level: undefined }),
      'jobs[1] (x): "level" is required for a deadline job (one of Legacy, Standard, Enhanced, Full)',
    ],
    [
      withJob({ ...ok, id: 'x', level: 'Gold' }),
      'jobs[1] (x): "level" of a deadline job must be one of Legacy, Standard, Enhanced, Full, got "Gold"',
    ],
    [
      withJob({ id: 'x', arrival: 0, kind: 'background', level: 'Legacy', nodes: 1, estimate: 60 }),
      'jobs[1] (x): "level" of a background job must be Background, got "Legacy"',
    ],
    [
      withJob({ id: 'x', arrival: 0, kind: 'best-effort', level: 'Full', nodes: 1, estimate: 60 }),
      'jobs[1] (x): "level" of a best-effort job must be one of Legacy, Standard, got "Full"',
    ],
    [withJob({ ...ok, id: 'x', estimate: undefined }), 'jobs[1] (x): "estimate" is required'],
    [withJob({ ...ok, id: 'x', estimate: 0 }), 'jobs[1] (x): "estimate" must be a number greater than 0, got 0'],
    [
      withJob({ ...ok, id: 'x', runtime: 4000 }),
      'jobs[1] (x): runtime (4000 s) is longer than the estimate (3600 s): the scheduler plans with the estimate',
    ],
    [
      withJob({ ...ok, id: 'x', deadline: undefined }),
      'jobs[1] (x): "deadline" is required for a deadline job (seconds from the start)',
    ],
    [withJob({ ...ok, id: 'x', arrival: 7200 }), 'jobs[1] (x): deadline (7200 s) is not after the arrival (7200 s)'],
    [
      withJob({ ...ok, id: 'x', earliestStart: 7200 }),
      'jobs[1] (x): earliestStart (7200 s) is not before the deadline (7200 s)',
    ],
    [
      withJob({ ...ok, id: 'x', window: { start: 0, end: 10 } }),
      'jobs[1] (x): "window" applies to reservations only, not to a deadline job',
    ],
    [
      withJob({ id: 'x', arrival: 0, kind: 'best-effort', nodes: 1, estimate: 60, deadline: 100 }),
      'jobs[1] (x): "deadline" applies to deadline jobs only, not to a best-effort job',
    ],
    [
      withJob({ id: 'r', arrival: 0, kind: 'reservation', level: 'Legacy', nodes: 1 }),
      'jobs[1] (r): "window" is required for a reservation ({ "start": s, "end": s })',
    ],
    [
      withJob({ id: 'r', arrival: 0, kind: 'reservation', level: 'Legacy', nodes: 1, window: { start: 10 } }),
      'jobs[1] (r) window: "end" is required',
    ],
    [
      withJob({ id: 'r', arrival: 0, kind: 'reservation', level: 'Legacy', nodes: 1, window: { start: 10, end: 10 } }),
      'jobs[1] (r): window ends (10 s) before it starts (10 s)',
    ],
    [
      withJob({ id: 'r', arrival: 20, kind: 'reservation', level: 'Legacy', nodes: 1, window: { start: 10, end: 30 } }),
      'jobs[1] (r): window starts (10 s) before the request arrives (20 s)',
    ],
    [
      withJob({
        id: 'r',
        arrival: 0,
        kind: 'reservation',
        level: 'Legacy',
        nodes: 1,
        window: { start: 10, end: 30 },
        estimate: 20,
      }),
      'jobs[1] (r): "estimate" does not apply to a reservation: its window is the estimate',
    ],
    [
      withJob({
        id: 'r',
        arrival: 0,
        kind: 'reservation',
        level: 'Legacy',
        nodes: 1,
        window: { start: 10, end: 30 },
        runtime: 21,
      }),
      'jobs[1] (r): runtime (21 s) is longer than the window (20 s)',
    ],
    [withJob({ ...ok, id: 'x', outages: 1.5 }), 'jobs[1] (x): "outages" must be a whole number, 0 or more, got 1.5'],
    [withJob({ ...ok, id: 'x', penalty: -5 }), 'jobs[1] (x): "penalty" must be a number, 0 or more, got -5'],
    [
      withJob({ ...ok, id: 'x', migration: 'Nowhere' }),
      'jobs[1] (x): "migration" must be one of None, AdministrativeDomain, Grid, got "Nowhere"',
    ],
    [
      withJob({ id: 'x', arrival: 0, kind: 'best-effort', nodes: 1, estimate: 60, migration: 'None' }),
      'jobs[1] (x): "migration" applies to deadline jobs and reservations, not to a best-effort job',
    ],
    [{ jobs: [ok], failures: [{ at: 10 }] }, 'failures[0]: "node" is required'],
    [
      { jobs: [ok], failures: [{ at: 10, node: 'n1', repairAt: 10 }] },
      'failures[0]: repairAt (10 s) is not after the failure (10 s)',
    ],
    [
      { jobs: [ok], failures: [{ at: 10, node: 'n1', repair: 20 }] },
      'failures[0]: unknown field "repair" (allowed: at, node, repairAt)',
    ],
  ])('%j: %s', (input, message) => {
    expect(workloadError(input)).toBe(message);
  });

  it('checks failures and node counts against the cluster', () => {
    const cluster = parseCluster({ nodes: [node] });
    const check = (input: unknown) => {
      try {
        checkAgainstCluster(parseWorkload(input), cluster);
      } catch (error) {
        return (error as Error).message;
      }
      return 'ok';
    };
    expect(check({ jobs: [ok], failures: [{ at: 1, node: 'n9' }] })).toBe(
      'failures[0]: node "n9" is not in the cluster (4 nodes: n1, n2, n3, n4)',
    );
    expect(
      check({
        jobs: [ok],
        failures: [
          { at: 1, node: 'n2', repairAt: 50 },
          { at: 40, node: 'n2' },
        ],
      }),
    ).toBe('failures[1]: node "n2" fails at 40 s while it is still out after failures[0] (repaired at 50 s)');
    expect(
      check({
        jobs: [ok],
        failures: [
          { at: 1, node: 'n2' },
          { at: 400, node: 'n2' },
        ],
      }),
    ).toBe('failures[1]: node "n2" fails at 400 s while it is still out after failures[0] (never repaired)');
    expect(
      check({
        jobs: [ok],
        failures: [
          { at: 50, node: 'n2' },
          { at: 1, node: 'n2', repairAt: 50 },
        ],
      }),
    ).toBe('ok');
    expect(check({ jobs: [{ ...ok, nodes: 5 }] })).toBe('jobs[0] (j1): 5 nodes requested but the cluster has 4');
  });
});

describe('cluster validation', () => {
  it('expands node groups and applies timing overrides', () => {
    const cluster = parseCluster({
      nodes: [
        { ...node, count: 2, prefix: 'c', first: 9, digits: 3, failureGroup: 'rack1' },
        { id: 'b1', memoryGB: 8, cpus: 4, buffer: true },
      ],
      timing: { deinitSeconds: 0, parallelCheckpoint: false },
      peerStandbyNodes: 2,
    });
    expect(cluster.nodes.map((n) => n.id)).toEqual(['c009', 'c010', 'b1']);
    expect(cluster.nodes[2]).toEqual({ id: 'b1', memoryGB: 8, cpus: 4, buffer: true });
    expect(cluster.nodes.map((n) => n.failureGroup)).toEqual(['rack1', 'rack1', undefined]);
    expect(cluster.timing).toMatchObject({ deinitSeconds: 0, parallelCheckpoint: false, nodeInitSeconds: 30 });
    expect(cluster.peerStandbyNodes).toBe(2);
  });

  it.each([
    [{}, 'cluster: "nodes" is required'],
    [{ nodes: [] }, 'cluster: "nodes" must describe at least one node'],
    [
      { nodes: [{ memoryGB: 1, cpus: 1 }] },
      'cluster nodes[0]: give a node "id", or a "count" of nodes and an id "prefix"',
    ],
    [
      { nodes: [{ ...node, id: 'x' }] },
      'cluster nodes[0]: give either "id" (one node) or "count" and "prefix" (a group), not both',
    ],
    [
      { nodes: [{ count: 2, memoryGB: 1, cpus: 1 }] },
      'cluster nodes[0]: "prefix" is required with "count" (node ids are prefix + number)',
    ],
    [{ nodes: [{ id: 'x', cpus: 1 }] }, 'cluster nodes[0]: "memoryGB" is required'],
    [
      { nodes: [node, { id: 'n2', memoryGB: 1, cpus: 1 }] },
      'cluster nodes[1]: node id "n2" is already used by cluster nodes[0]',
    ],
    [{ nodes: [{ ...node, buffer: 'yes' }] }, 'cluster nodes[0]: "buffer" must be true or false, got "yes"'],
    [{ nodes: [{ ...node, failureGroup: 7 }] }, 'cluster nodes[0]: "failureGroup" must be a non-empty string, got 7'],
    [
      { nodes: [node], timing: { nodeInit: 3 } },
      `cluster timing: unknown field "nodeInit" (allowed: nodeInitSeconds, storageInitSecondsPerGB, storageRollbackSecondsPerGB, storageMountSeconds, deinitSeconds, handoverSeconds, slowdownFactor, checkpointSecondsPerNodeGB, snapshotSecondsPerGB, parallelCheckpoint, defaultMemoryPerNodeGB, migrationBandwidthMBps, defaultCoveredOutages, problemHorizonSeconds, nodeFailuresPerDay, nodeFailuresPriorNodeDays, checkpointsByNeed, reservationSpareNodes, recentRepairHours, promiseRiskLimit, bestEffortStartsAhead, chanceShare)`,
    ],
    [
      { nodes: [node], timing: { slowdownFactor: 0.9 } },
      'cluster timing: "slowdownFactor" must be a number, 1 or more, got 0.9',
    ],
    [
      { nodes: [node], timing: { reservationSpareNodes: 0.5 } },
      'cluster timing: "reservationSpareNodes" must be a whole number, 0 or more, got 0.5',
    ],
    [
      { nodes: [node], timing: { promiseRiskLimit: 1.5 } },
      'cluster timing: "promiseRiskLimit" must be a number from 0 to 1, got 1.5',
    ],
    [
      { nodes: [node], timing: { chanceShare: -0.5 } },
      'cluster timing: "chanceShare" must be a number from 0 to 1, got -0.5',
    ],
    [{ nodes: [node], peerStandbyNodes: -1 }, 'cluster: "peerStandbyNodes" must be a whole number, 0 or more, got -1'],
  ])('%j: %s', (input, message) => {
    expect(clusterError(input)).toBe(message);
  });
});

describe('loading files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-sim-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    return file;
  };
  const error = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return (e as Error).message;
    }
    return 'ok';
  };

  it('names the file in every message', () => {
    const missing = path.join(dir, 'missing.json');
    expect(error(() => loadInputs(missing))).toBe(`${missing}: no such file`);
    const broken = write('broken.json', '{ "jobs": [ }');
    expect(error(() => loadInputs(broken))).toMatch(
      new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON: `),
    );
    const noCluster = write('no-cluster.json', JSON.stringify({ jobs: [ok] }));
    expect(error(() => loadInputs(noCluster))).toBe(
      `${noCluster}: no cluster: give --cluster FILE or a "cluster" in the workload`,
    );
    const badJob = write('bad-job.json', JSON.stringify({ jobs: [{ ...ok, nodes: 0 }] }));
    expect(error(() => loadInputs(badJob))).toBe(
      `${badJob}: jobs[0] (j1): "nodes" must be a whole number, 1 or more, got 0`,
    );
    const badCluster = write('bad-cluster.json', JSON.stringify({ nodes: [{ id: 'x' }] }));
    const refers = write('refers.json', JSON.stringify({ cluster: 'bad-cluster.json', jobs: [ok] }));
    expect(error(() => loadInputs(refers))).toBe(`${badCluster}: cluster nodes[0]: "memoryGB" is required`);
    const inline = write(
      'inline.json',
      JSON.stringify({ cluster: { nodes: [node] }, jobs: [ok], failures: [{ at: 1, node: 'x' }] }),
    );
    expect(error(() => loadInputs(inline))).toBe(
      `${inline}: failures[0]: node "x" is not in the cluster (4 nodes: n1, n2, n3, n4)`,
    );
  });

  it('takes the cluster the workload names (relative to it), inline, or from --cluster', () => {
    const clusterFile = write('c.json', JSON.stringify({ nodes: [node] }));
    const other = write('c2.json', JSON.stringify({ nodes: [{ ...node, count: 6 }] }));
    const named = write('named.json', JSON.stringify({ cluster: 'c.json', jobs: [ok] }));
    expect(loadInputs(named).cluster.nodes).toHaveLength(4);
    expect(loadInputs(named, other).cluster.nodes).toHaveLength(6);
    expect(loadInputs(named, clusterFile).clusterSource).toBe(clusterFile);
    const inline = write('inline-ok.json', JSON.stringify({ cluster: { nodes: [{ ...node, count: 3 }] }, jobs: [ok] }));
    expect(loadInputs(inline).cluster.nodes).toHaveLength(3);
  });
});
