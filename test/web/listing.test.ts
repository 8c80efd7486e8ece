import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { makeAgreement } from '../store/fixtures/make-agreement.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A listing's cost does not grow with what the server holds. 1,500
 * stored agreements (ended, so the plan is empty); GET /api/agreements answers a page of at
 * most 100 by default with a Link to the next, and the client reads every page.
 */
const t0 = Date.UTC(2030, 0, 1);
let server: TestServer;

beforeAll(async () => {
  const repository = new MemoryAgreementRepository();
  for (let i = 0; i < 1500; i++) {
    const id = `a${String(i).padStart(4, '0')}`;
    await repository.insert(
      makeAgreement({
        id,
        state: i % 3 === 0 ? 'Terminated' : 'Complete',
        createdAt: new Date(t0 + Math.floor(i / 2) * 1000),
        document: `<x id="${id}"/>`,
      }),
    );
  }
  server = await startTestServer({ repository });
});
afterAll(async () => server?.close());

async function page(
  query: string,
): Promise<{ status: number; ids: string[]; next: string | undefined; body: unknown }> {
  const response = await fetch(`${server.url}/api/agreements${query}`);
  const body = (await response.json()) as unknown;
  const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
  return { status: response.status, ids: Array.isArray(body) ? body.map((a: { id: string }) => a.id) : [], next, body };
}

describe('GET /api/agreements is paged (class 7)', () => {
  it('answers 100 by default, in creation order, with a Link to the next page', async () => {
    const first = await page('');
    expect(first.status).toBe(200);
    expect(first.ids).toHaveLength(100);
    expect(first.ids[0]).toBe('a0000');
    expect(first.ids[99]).toBe('a0099');
    expect(first.next).toMatch(/^\/api\/agreements\?limit=100&after=[\w-]+$/);
    const second = await page((first.next as string).replace('/api/agreements', ''));
    expect(second.ids[0]).toBe('a0100');
  });

  it('following the links visits every agreement once; the last page has no link', async () => {
    const seen: string[] = [];
    let next: string | undefined = '/api/agreements?limit=1000';
    while (next) {
      const p = await page(next.replace('/api/agreements', ''));
      seen.push(...p.ids);
      next = p.next;
    }
    expect(seen).toHaveLength(1500);
    expect(new Set(seen).size).toBe(1500);
    expect(seen).toEqual([...seen].sort());
  });

  it('filters by state, and the client reads every page', async () => {
    const terminated = await new WsagClient(server.url).agreements({ state: 'Terminated' });
    expect(terminated).toHaveLength(500);
    expect(terminated.every((a) => a.state === 'Terminated')).toBe(true);
    expect(await new WsagClient(server.url).agreements()).toHaveLength(1500);
  });

  it.each([
    ['?limit=0', 'limit must be a whole number from 1 to 1000'],
    ['?limit=1001', 'limit must be a whole number from 1 to 1000'],
    ['?limit=1e3', 'limit must be a whole number from 1 to 1000'],
    ['?after=nonsense', 'after is not a cursor this server gave: pass the after= of a Link rel="next" header as it is'],
    [
      '?state=Happy',
      'state must be one of Pending, Observed, PendingAndTerminating, ObservedAndTerminating, Rejected, Complete, Terminated',
    ],
    ['?sort=id', 'unknown query parameter "sort": a listing takes limit, after and state'],
  ])('%s is a 400 problem naming the parameter', async (query, detail) => {
    const p = await page(query);
    expect(p.status).toBe(400);
    expect(p.body).toMatchObject({ title: 'MalformedMessage', detail });
  });

  it('negotiations are paged the same way', async () => {
    const response = await fetch(`${server.url}/api/negotiations?limit=5&state=Open`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });
});

describe('the agreement list after an early end', () => {
  it('shows when a terminated agreement ended, not when its booking was planned to', async () => {
    const server = await startTestServer();
    try {
      const client = new WsagClient(server.url);
      const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
      const { agreementId } = await client.createAgreement(
        offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]),
      );
      const planned = (await client.agreements()).find((a) => a.id === agreementId)?.end as string;
      const before = Date.now();
      await client.terminate(agreementId);
      const ended = (await client.agreements()).find((a) => a.id === agreementId)?.end as string;
      expect(Date.parse(ended)).toBeLessThan(Date.parse(planned));
      expect(Date.parse(ended)).toBeGreaterThanOrEqual(before - 1000);
    } finally {
      await server.close();
    }
  });
});
