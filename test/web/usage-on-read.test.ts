import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, stopTestServer, type TestServer } from '../support/server.js';

/**
 * A usage record is written after its agreement's end is seen; a client that saw the end and
 * asks at once must find it. Here the end is stored without the change being followed at all
 * (the server's own follower never hears of it), the widest form of that window.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 4, executor: 'none' } });
});
afterAll(() => stopTestServer(server));

describe('GET /api/usage/ID', () => {
  it('answers the record of an agreement that ended before its record was written', async () => {
    const created = await fetch(`${server.url}/api/agreements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ template: 'deadline-job', items: { NodeCount: 1 } }),
    });
    const { id } = (await created.json()) as { id: string };
    const agreement = await server.repository.get(id);
    if (!agreement) throw new Error('the agreement was not stored');
    await server.repository.update({ ...agreement, state: 'Terminated', updatedAt: new Date() });

    const usage = await fetch(`${server.url}/api/usage/${id}`);
    expect(usage.status).toBe(200);
    expect(await usage.text()).toContain('<ur:JobUsageRecord');
    // Written once: asked again, the same record.
    expect(await (await fetch(`${server.url}/api/usage/${id}`)).text()).toBe(
      await (await fetch(`${server.url}/api/usage/${id}`)).text(),
    );
  });
});
