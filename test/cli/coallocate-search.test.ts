import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchCommonStart } from '../../src/client/coallocation-search.js';
import { WsagClient } from '../../src/client/wsag-client.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from './support.js';

// Two providers of 8 nodes. From `base`, site A is full for hours 0 to 4 and site B for hours
// 3 to 7: a 2-hour window on all 8 nodes fits at A from hour 4 and at B from hour 0 to 3 and
// again from hour 7. The only common window starts at hour 7, late in the day.
const hour = 3600_000;
const base = Math.ceil((Date.now() + 3 * hour) / 60_000) * 60_000;
const at = (h: number) => new Date(base + h * hour).toISOString().replace('.000Z', 'Z');
const window = (from: number, to: number) => `//arp:StartTime=${at(from)},//arp:EndTime=${at(to)}`;
// After a booking, its nodes are released (15 s) and prepared for the next window (36 s): a window can start 51 s after another ends.
const turnaround = 51_000;
const after = (h: number, turns = 1) =>
  new Date(base + h * hour + turns * turnaround).toISOString().replace('.000Z', 'Z');

let siteA: TestServer;
let siteB: TestServer;
beforeAll(async () => {
  [siteA, siteB] = await Promise.all([
    startTestServer({ config: { admins: ['anonymous'], clusterNodes: 8 } }),
    startTestServer({ config: { admins: ['anonymous'], clusterNodes: 8 } }),
  ]);
  const block = async (server: TestServer, from: number, to: number) => {
    const result = await wsag(
      [
        'create',
        '--template',
        'advance-reservation',
        '--set',
        'NodeCount=8',
        '--set',
        `//arp:StartTime=${at(from)}`,
        '--set',
        `//arp:EndTime=${at(to)}`,
      ],
      { url: server.url },
    );
    expect(result.code).toBe(0);
  };
  await block(siteA, 0, 4);
  await block(siteB, 3, 7);
});
afterAll(async () => {
  await Promise.all([siteA.close(), siteB.close()]);
});

const bookings = async (server: TestServer) => (await new WsagClient(server.url).plan()).bookings;

describe('wsag coallocate searches for a common start', () => {
  it('two providers free together only late in the day: both windows agreed there, without a manual retry', async () => {
    const tasks = [
      '--task',
      `${siteA.url}=advance-reservation,NodeCount=8,${window(0, 2)}`,
      '--task',
      `${siteB.url}=advance-reservation,NodeCount=8,${window(0, 2)}`,
    ];
    const result = await wsag(['coallocate', ...tasks, '--json']);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const { agreements, search } = JSON.parse(result.stdout) as {
      agreements: Array<{ agreementId: string; slot: { start: string; end: string } }>;
      search: { start: string; rounds: number; milliseconds: number };
    };
    // Round 1 at hour 0: A answers 4 (and the turnaround), B 0. Round 2 there: A the same, B 7. Round 3 at 7: both 7.
    expect(search).toMatchObject({ start: after(7), rounds: 3 });
    expect(search.milliseconds).toBeGreaterThanOrEqual(0);
    for (const [server, agreement] of [
      [siteA, agreements[0]],
      [siteB, agreements[1]],
    ] as const) {
      const booked = (await bookings(server)).find((b) => b.id === agreement?.agreementId);
      expect(booked).toMatchObject({ kind: 'agreement' });
      expect([Date.parse(booked?.promised?.start as string), Date.parse(booked?.promised?.end as string)]).toEqual([
        base + 7 * hour + turnaround,
        base + 9 * hour + turnaround,
      ]);
      expect((await bookings(server)).filter((b) => b.kind === 'hold')).toEqual([]);
    }
  });

  it('prints the common start and the rounds the search took', async () => {
    const result = await wsag([
      'coallocate',
      '--task',
      `${siteA.url}=advance-reservation,NodeCount=2,${window(0, 1)}`,
      '--task',
      `${siteB.url}=advance-reservation,NodeCount=2,${window(0, 1)}`,
    ]);
    expect(result.code).toBe(0);
    // Round 1 at hour 0: A answers 4 (full until then), B 0. Round 2 at hour 4: A 4, B 9 (full from 3 to
    // 7, then the windows of the first test), each past two turnarounds. Round 3 there: both.
    expect(result.out.at(-1)).toMatch(
      new RegExp(`^common start ${after(9, 2)}: found in 3 Advisory rounds \\(\\d+ ms\\)$`),
    );
  });

  it('--no-search solicits the windows as written: refused where a site is full, nothing kept', async () => {
    const result = await wsag([
      'coallocate',
      '--no-search',
      '--task',
      `${siteA.url}=advance-reservation,NodeCount=8,${window(0, 2)}`,
      '--task',
      `${siteB.url}=advance-reservation,NodeCount=8,${window(0, 2)}`,
    ]);
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(/^error: task 1 \(advance-reservation at .*\): rejected: 8 nodes are not free/);
    expect((await bookings(siteB)).filter((b) => b.kind === 'hold')).toEqual([]);
  });

  it('too few rounds: exit 1 saying so, every negotiation terminated', async () => {
    const result = await wsag([
      'coallocate',
      '--max-rounds',
      '1',
      '--task',
      `${siteA.url}=advance-reservation,NodeCount=8,${window(0, 2)}`,
      '--task',
      `${siteB.url}=advance-reservation,NodeCount=8,${window(0, 2)}`,
    ]);
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(/^error: no common start within 1 rounds/);
    expect(result.err.at(-1)).toMatch(/^co-allocation abandoned, nothing is kept/);
    expect((await bookings(siteA)).filter((b) => b.kind === 'hold')).toEqual([]);
  });
});

describe('searchCommonStart', () => {
  it('moves the candidate to the latest earliest start until every task can start there', async () => {
    const free = (starts: number[]) => async (from: Date) =>
      new Date(starts.find((s) => s >= from.getTime()) ?? Infinity);
    const found = await searchCommonStart(
      [free([0, 5000, 9000]), free([3000, 9000]), free([1000, 2000, 7000, 9000])],
      new Date(0),
      10,
    );
    expect(found).toEqual({ start: new Date(9000), rounds: 4 });
    await expect(searchCommonStart([free([0]), free([1000])], new Date(0), 1)).rejects.toThrow(
      /no common start within 1 rounds/,
    );
  });
});
