import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at, deadlineOffer, planOf, simulatedServer, type SimulatedServer } from '../engine/run-time-support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from './support.js';

/**
 * `wsag node list | fail NODE | repair NODE` against an in-process server on a simulated
 * clock (the run time follows the failure), and against one where the caller is no operator.
 */
let server: SimulatedServer;
let plain: TestServer;
let racks: TestServer;

beforeAll(async () => {
  [server, plain, racks] = await Promise.all([
    simulatedServer({ nodes: 6 }),
    startTestServer({ config: { clusterNodes: 2 } }),
    startTestServer({
      config: {
        admins: ['anonymous'],
        cluster: {
          nodeGroups: ['r1', 'r2'].map((rack) => ({
            count: 2,
            idPrefix: `${rack}n`,
            memoryGB: 16,
            cpus: 8,
            failureGroup: rack,
          })),
        },
      },
    }),
  ]);
});
afterAll(async () => Promise.all([server?.close(), plain?.close(), racks?.close()]));

describe('wsag node', () => {
  it('lists the nodes, reports a failure that stops and restarts a job, and a repair', async () => {
    const list = await wsag(['node', 'list'], { url: server.url });
    expect(list.code).toBe(0);
    expect(list.out[0]).toMatch(/^NODE\s+STATE\s+MEMORY_GB\s+CPUS\s+INTERCONNECT\s+ISLAND\s+GROUP\s+ROLE$/);
    expect(list.out.slice(1, -3).map((l) => l.split(/\s+/).slice(0, 2))).toEqual(
      ['n001', 'n002', 'n003', 'n004', 'n005', 'n006'].map((n) => [n, 'up']),
    );
    expect(list.out.at(-3)).toBe('6 nodes, 0 failed');
    expect(list.out.at(-2)).toMatch(
      /^failure rate the planner uses: 0\.0200 a node and day \(0 failures in [\d.]+ node-days since the server started, against the configured 0\.02 worth 1000 node-days\)$/,
    );

    const id = (
      await server.client.createAgreement(await deadlineOffer(server.client, { level: 'Standard', deadline: at(5000) }))
    ).agreementId;
    const node = (await planOf(server)).bookings.find((b) => b.id === id)?.nodeIds[0] as string;
    await server.advanceTo(1800);
    const failed = await wsag(['node', 'fail', node], { url: server.url });
    expect(failed.code).toBe(0);
    expect(failed.out[0]).toBe(`node ${node}: failed`);
    expect(failed.stdout).toContain(`moved or restarted on spare nodes: ${id}`);
    expect(failed.stdout).toContain('problematic: none');
    await server.execution.idle();
    expect(server.rm.callsOf('stop', id).map((c) => c.reason)).toEqual(['outage']);
    expect((await wsag(['node', 'list', '--json'], { url: server.url })).stdout).toContain(`"id": "${node}"`);
    const listed = JSON.parse((await wsag(['node', 'list', '--json'], { url: server.url })).stdout) as {
      nodes: Array<{ id: string; failed: boolean }>;
    };
    expect(listed.nodes.filter((n) => n.failed).map((n) => n.id)).toEqual([node]);
    // The failure counts: the planner's rate rises above the configured one.
    const rate = (listed as unknown as { failureRate: { perNodeDay: number; failures: number } }).failureRate;
    expect(rate.failures).toBe(1);
    expect(rate.perNodeDay).toBeGreaterThan(0.02);

    const repaired = await wsag(['node', 'repair', node, '--json'], { url: server.url });
    expect(repaired.code).toBe(0);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ node, failed: false });
    await server.runUntilIdle();
    expect((await server.client.state(id)).state).toBe('Complete');
  });

  it("shows each node's failure group and the rate learned for each group", async () => {
    expect((await wsag(['node', 'fail', 'r1n001'], { url: racks.url })).code).toBe(0);
    const list = await wsag(['node', 'list'], { url: racks.url });
    expect(list.out.slice(1, 5).map((l) => l.split(/\s+/).filter((c) => c !== '-'))).toEqual([
      ['r1n001', 'FAILED', '16', '8', 'r1'],
      ['r1n002', 'up', '16', '8', 'r1'],
      ['r2n001', 'up', '16', '8', 'r2'],
      ['r2n002', 'up', '16', '8', 'r2'],
    ]);
    expect(list.out.at(-4)).toMatch(/^failure rate the planner uses: 0\.02\d+ a node and day \(1 failure in /);
    expect(list.out.at(-3)).toMatch(/^ {2}group r1: 0\.02\d+ a node and day \(1 failure on 2 nodes\)$/);
    expect(list.out.at(-2)).toBe('  group r2: 0.0200 a node and day (0 failures on 2 nodes)');
    // No node has failed after a repair yet.
    expect(list.out.at(-1)).toMatch(
      /^within 24 h of a repair: 0\.0000 a node and day \(0 failures in 0\.0 node-days\) against \d+\.\d{4} for the others: no different from chance$/,
    );
    const json = JSON.parse((await wsag(['node', 'list', '--json'], { url: racks.url })).stdout);
    expect(json.nodes[2]).toMatchObject({ id: 'r2n001', failureGroup: 'r2', failed: false });
    expect(json.failureRate.groups.map((g: { group: string; failures: number }) => [g.group, g.failures])).toEqual([
      ['r1', 1],
      ['r2', 0],
    ]);
    expect(json.failureRate.recentRepairs).toMatchObject({
      hours: 24,
      failures: 0,
      othersFailures: 1,
      chosenLast: false,
    });
    const metrics = await (await fetch(`${racks.url}/metrics`)).text();
    expect(metrics).toMatch(/^wsag_node_group_failures_seen\{group="r1"\} 1$/m);
    expect(metrics).toMatch(/^wsag_node_recent_repair_failure_rate 0$/m);
    // r2 had none: at most the prior, the server's seconds of quiet taken off.
    const r2 = Number(/^wsag_node_group_failure_rate\{group="r2"\} (\S+)$/m.exec(metrics)?.[1]);
    expect(r2).toBeLessThanOrEqual(0.02);
    expect(r2).toBeGreaterThan(0.0199);
    // The rack's other node fails within the minute: one event that took both.
    expect((await wsag(['node', 'fail', 'r1n002'], { url: racks.url })).code).toBe(0);
    const after = await wsag(['node', 'list'], { url: racks.url });
    expect(after.out.at(-3)).toMatch(/ \(2 failures on 2 nodes; 1 event of 2\.0 nodes on average\)$/);
    const events = await (await fetch(`${racks.url}/metrics`)).text();
    expect(events).toMatch(/^wsag_node_group_failure_events\{group="r1"\} 1$/m);
    // Both are repaired: how long they stayed down is learned as the repair of nodes that failed with others.
    for (const node of ['r1n001', 'r1n002'])
      expect((await wsag(['node', 'repair', node], { url: racks.url })).code).toBe(0);
    const repaired = await wsag(['node', 'list'], { url: racks.url });
    expect(repaired.out.at(-1)).toBe(
      'failed nodes stayed down: 0 repairs of nodes that failed alone, 2 repairs of nodes that failed with others ' +
        '(median 0.0 h); a failed node is kept out until it is likely back',
    );
    const json2 = JSON.parse((await wsag(['node', 'list', '--json'], { url: racks.url })).stdout);
    expect(json2.failureRate.repairTimes).toMatchObject({ alone: { repairs: 0 }, withOthers: { repairs: 2 } });
    const learned = await (await fetch(`${racks.url}/metrics`)).text();
    expect(learned).toMatch(/^wsag_node_repair_median_hours\{failed="with-others"\} \d/m);
    expect(learned).toMatch(/^wsag_node_repair_median_hours\{failed="alone"\} 0$/m);
  });

  it('says what is wrong: unknown node, missing argument, no operator role', async () => {
    const unknown = await wsag(['node', 'fail', 'n999'], { url: server.url });
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toBe('error: UnknownResource: no node "n999" in the cluster; GET /api/nodes lists them');
    const missing = await wsag(['node', 'fail'], { url: server.url });
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('error: missing NODE: wsag node fail NODE (see: wsag node list)');
    expect((await wsag(['node', 'reboot', 'n001'], { url: server.url })).err[0]).toBe(
      'error: unknown action "reboot": use list, fail or repair',
    );
    const refused = await wsag(['node', 'fail', 'n001'], { url: plain.url });
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toBe(
      'error: NotAuthorized: reporting a node failure: operators only (an operator is an identity the server lists in WSAG_ADMINS; a local server without TLS makes everyone one with WSAG_ADMINS=anonymous)',
    );
  });
});
