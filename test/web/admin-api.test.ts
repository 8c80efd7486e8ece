import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from '../cli/support.js';

/**
 * The operators' JSON views of the planning scheduler: /api/plan (bookings with their
 * nodes, checkpoints and problems), /api/nodes, and reporting node failures and repairs.
 * A 6-node cluster, its clock fixed at 12:00.
 */
const now = new Date('2026-11-21T12:00:00Z');
let server: TestServer;
let outsider: TestServer;

beforeAll(async () => {
  let n = 0;
  [server, outsider] = await Promise.all([
    startTestServer({
      config: { clusterNodes: 6, bufferNodes: 1, admins: ['anonymous'] },
      clock: { now: () => now },
      ids: { next: () => `id-${++n}` },
    }),
    startTestServer({ config: { clusterNodes: 6 } }),
  ]);
});
afterAll(async () => Promise.all([server?.close(), outsider?.close()]));

interface Booking {
  kind: string;
  id: string;
  nodes: number;
  start: string;
  end: string;
  nodeIds: string[];
  spareNodeIds: string[];
  segments: Array<{ start: string; end: string; nodeIds: string[]; spareNodeIds: string[]; restart: boolean }>;
  checkpoints: number;
  checkpointIntervalSeconds?: number;
  outagesLeft: number;
  problem?: string;
}
interface Report {
  node: string;
  failed: boolean;
  moved: string[];
  suspended: string[];
  solved: string[];
  problematic: Array<{ id: string; reason: string }>;
}

async function get<T>(target: TestServer, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(target.url + path);
  return { status: response.status, body: (await response.json()) as T };
}
async function post<T>(target: TestServer, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(target.url + path, { method: 'POST', headers: { 'x-requested-with': 'test' } });
  return { status: response.status, body: (await response.json()) as T };
}
const plan = async () => (await get<{ clusterNodes: number; bookings: Booking[] }>(server, '/api/plan')).body;

describe('operators see and change the cluster', () => {
  it('GET /api/cluster: one server plans alone; /metrics says it leads, term 0', async () => {
    expect(await get(server, '/api/cluster')).toEqual({ status: 200, body: { role: 'single' } });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^wsag_cluster_leader 1$/m);
    expect(metrics).toMatch(/^wsag_cluster_term 0$/m);
    const cli = await wsag(['cluster', '--url', server.url]);
    expect(cli.stdout).toBe('one server (no cluster): it plans and serves alone');
  });

  it('GET /api/nodes lists the nodes with their properties, buffer and failed state', async () => {
    const { status, body } = await get<{ nodes: Array<Record<string, unknown>> }>(server, '/api/nodes');
    expect(status).toBe(200);
    expect(body.nodes.map((n) => [n.id, n.buffer, n.failed])).toEqual([
      ['n001', false, false],
      ['n002', false, false],
      ['n003', false, false],
      ['n004', false, false],
      ['n005', false, false],
      ['n006', true, false],
    ]);
    expect(body.nodes[0]).toEqual({
      id: 'n001',
      memoryGB: 256,
      cpus: 64,
      interconnect: 'InfiniBand',
      failureGroup: 'cluster',
      buffer: false,
      failed: false,
    });
  });

  it("/api/plan shows each booking's nodes and checkpoint plan", async () => {
    const client = new WsagClient(server.url);
    const templates = await client.templates();
    const reservation = offerFromTemplate(templates.find((t) => t.includes('advance-reservation-v1')) as string, [
      { location: 'NodeCount', value: '3' },
    ]);
    const job = offerFromTemplate(templates.find((t) => t.includes('deadline-job-v1')) as string, [
      { location: 'NodeCount', value: '2' },
    ]);
    const r = await client.createAgreement(reservation);
    const j = await client.createAgreement(job);
    const { clusterNodes, bookings } = await plan();
    expect(clusterNodes).toBe(6);
    const byId = new Map(bookings.map((b) => [b.id, b]));
    expect(byId.get(r.agreementId)).toMatchObject({
      kind: 'agreement',
      nodes: 3,
      start: '2026-11-21T13:59:24.000Z',
      end: '2026-11-21T16:00:15.000Z',
      nodeIds: ['n001', 'n002', 'n003'],
      spareNodeIds: [],
      checkpoints: 0,
      // The window inside the booking; the piece's own time after its nodes' preparation (35 s) and before their release (15 s).
      promised: { start: '2026-11-21T14:00:00.000Z', end: '2026-11-21T16:00:00.000Z' },
      segments: [
        {
          start: '2026-11-21T13:59:24.000Z',
          readyAt: '2026-11-21T13:59:59.000Z',
          releaseFrom: '2026-11-21T16:00:00.000Z',
          end: '2026-11-21T16:00:15.000Z',
          nodeIds: ['n001', 'n002', 'n003'],
          spareNodeIds: [],
          restart: false,
        },
      ],
    });
    const deadlineJob = byId.get(j.agreementId) as Booking;
    expect(deadlineJob).toMatchObject({
      kind: 'agreement',
      nodes: 2,
      start: '2026-11-21T12:00:00.000Z',
      spareNodeIds: [],
      outagesLeft: 1,
    });
    expect(deadlineJob.nodeIds).toHaveLength(2);
    expect(deadlineJob.nodeIds).not.toContain('n006'); // a buffer node: best-effort and background jobs only
    // Checkpoints by need: the deadline leaves room for a restart from the start, so none (and no interval).
    expect(deadlineJob.checkpoints).toBe(0);
    expect(deadlineJob.checkpointIntervalSeconds).toBeUndefined();
    expect(deadlineJob.problem).toBeUndefined();
  });

  it('/api/plan?from=&to= keeps the bookings overlapping the window, and counts them all', async () => {
    const all = await get<{ total: number; bookings: Booking[] }>(server, '/api/plan');
    expect(all.body.total).toBe(all.body.bookings.length);
    expect(all.body.total).toBeGreaterThan(1);
    // The reservation above runs 14:00-16:00 on the simulated day; the deadline job starts at 12:00.
    const window = async (from: string, to: string) =>
      (await get<{ total: number; bookings: Booking[] }>(server, `/api/plan?from=${from}&to=${to}`)).body;
    const afternoon = await window('2026-11-21T14:30:00Z', '2026-11-21T15:00:00Z');
    expect(afternoon.total).toBe(all.body.total);
    expect(afternoon.bookings.length).toBeLessThan(all.body.total);
    for (const b of afternoon.bookings)
      expect(
        new Date(b.start) < new Date('2026-11-21T15:00:00Z') && new Date(b.end) > new Date('2026-11-21T14:30:00Z'),
      ).toBe(true);
    expect(afternoon.bookings.some((b) => b.start === '2026-11-21T13:59:24.000Z' && b.nodes === 3)).toBe(true);
    // A window ending where a booking starts does not hold it.
    expect(
      (await window('2026-11-21T13:00:00Z', '2026-11-21T13:59:24Z')).bookings.some(
        (b) => b.start === '2026-11-21T13:59:24.000Z' && b.nodes === 3,
      ),
    ).toBe(false);
    for (const [query, named] of [
      ['from=2026-11-21T12:00:00Z', 'both from and to'],
      ['from=yesterday&to=2026-11-21T12:00:00Z', 'from must be'],
      ['from=2026-11-21T12:00:00Z&to=2026-11-21T11:00:00Z', 'must be after'],
      ['limit=3', '"limit"'],
    ]) {
      const bad = await get<{ detail: string }>(server, `/api/plan?${query}`);
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toContain(named);
    }
  });

  it('POST /api/nodes/ID/fail re-plans, stores the moved bookings and answers with the report; repair brings the node back', async () => {
    const before = await plan();
    const reservation = before.bookings.find((b) => b.checkpoints === 0) as Booking;
    const failing = reservation.nodeIds[0] as string;
    const { status, body } = await post<Report>(server, `/api/nodes/${failing}/fail`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ node: failing, failed: true, suspended: [], problematic: [] });
    expect(body.moved).toContain(reservation.id);
    const after = (await plan()).bookings.find((b) => b.id === reservation.id) as Booking;
    expect(after.nodeIds).not.toContain(failing);
    expect(after).toMatchObject({ start: reservation.start, end: reservation.end, nodes: 3 });
    const stored = await server.repository.get(reservation.id);
    expect(stored?.allocation?.segments?.[0]?.nodeIds).toEqual(after.nodeIds);
    expect(
      (await get<{ nodes: Array<{ id: string; failed: boolean }> }>(server, '/api/nodes')).body.nodes.find(
        (n) => n.id === failing,
      )?.failed,
    ).toBe(true);

    const repaired = await post<Report>(server, `/api/nodes/${failing}/repair`);
    expect(repaired).toMatchObject({ status: 200, body: { node: failing, failed: false, problematic: [] } });
    expect(
      (await get<{ nodes: Array<{ id: string; failed: boolean }> }>(server, '/api/nodes')).body.nodes.every(
        (n) => !n.failed,
      ),
    ).toBe(true);
  });

  it('an unknown node is 404 naming it, as an RFC 9457 problem document', async () => {
    const detail = 'no node "n999" in the cluster; GET /api/nodes lists them';
    expect(await post(server, '/api/nodes/n999/fail')).toEqual({
      status: 404,
      body: {
        type: 'https://schemas.wsag-server.org/2026/11/faults#UnknownResource',
        title: 'UnknownResource',
        status: 404,
        detail,
        error: 'UnknownResource',
        message: detail,
      },
    });
  });

  it("only operators change the nodes; a party reads them, and sees the plan as its own bookings and others' busy time", async () => {
    expect(await post(outsider, '/api/nodes/n001/fail')).toMatchObject({
      status: 403,
      body: {
        error: 'NotAuthorized',
        message:
          'reporting a node failure: operators only (an operator is an identity the server lists in WSAG_ADMINS; a local server without TLS makes everyone one with WSAG_ADMINS=anonymous)',
      },
    });
    expect((await post(outsider, '/api/nodes/n001/repair')).status).toBe(403);
    expect((await get<{ nodes: unknown[] }>(outsider, '/api/nodes')).body.nodes).toHaveLength(6);
    const { WsagClient: Client } = await import('../../src/client/wsag-client.js');
    const client = new Client(outsider.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const mine = (await client.createAgreement(offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }])))
      .agreementId;
    const view = await get<{
      scope: string;
      bookings: Array<{ kind: string; id: string; level?: string; nodes: number }>;
    }>(outsider, '/api/plan');
    expect(view.status).toBe(200);
    expect(view.body.scope).toBe('own');
    expect(view.body.bookings.filter((b) => b.kind === 'agreement').map((b) => b.id)).toEqual([mine]);
  });
});
