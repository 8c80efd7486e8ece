import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTask } from '../../src/cli/commands/coallocate.js';
import { WsagClient } from '../../src/client/wsag-client.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { deadUrl, uuid, wsag } from './support.js';

// Two providers on loopback; the second is small (8 nodes), so 16 nodes is within the
// template's limits (NodeCount <= 64) but more than it can ever serve.
let big: TestServer;
let small: TestServer;
beforeAll(async () => {
  [big, small] = await Promise.all([
    // Full service needs standby nodes at a peer provider (WSAG_PEER_STANDBY_NODES).
    startTestServer({ config: { admins: ['anonymous'], clusterNodes: 64, peerStandbyNodes: 64 } }),
    startTestServer({ config: { admins: ['anonymous'], clusterNodes: 8 } }),
  ]);
});
afterAll(async () => {
  await Promise.all([big.close(), small.close()]);
});

const bookings = async (server: TestServer) => (await new WsagClient(server.url).plan()).bookings;
const holdsAt = async (server: TestServer) => (await bookings(server)).filter((b) => b.kind === 'hold');

interface Coallocated {
  agreements: {
    task: string;
    url: string;
    template: string;
    negotiationId: string;
    offerId: string;
    agreementId: string;
    address: string;
  }[];
}

describe('wsag coallocate', () => {
  it('agrees with every provider: both agreements Observed, no hold left', async () => {
    const result = await wsag([
      'coallocate',
      '--task',
      `${big.url}=deadline-job,NodeCount=16`,
      '--task',
      `${small.url}=advance-reservation,NodeCount=4`,
      '--json',
    ]);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const { agreements } = JSON.parse(result.stdout) as Coallocated;
    expect(agreements.map((a) => [a.task, a.url, a.template])).toEqual([
      ['task 1', big.url, 'deadline-job'],
      ['task 2', small.url, 'advance-reservation'],
    ]);
    const [first, second] = agreements;
    expect((await new WsagClient(big.url).state(first?.agreementId as string)).state).toBe('Observed');
    expect((await new WsagClient(small.url).state(second?.agreementId as string)).state).toBe('Observed');
    expect(await big.repository.get(first?.agreementId as string)).toMatchObject({
      request: { nodeCount: 16 },
      origin: { offerId: first?.offerId },
    });
    expect(await holdsAt(big)).toEqual([]);
    expect(await holdsAt(small)).toEqual([]);
    expect((await bookings(small)).map((b) => b.id)).toContain(second?.agreementId);
  });

  it('prints a table of the agreements', async () => {
    const result = await wsag([
      'coallocate',
      '--task',
      `${big.url}=deadline-job`,
      '--task',
      `${big.url}=deadline-job,GuaranteeLevel=Full`,
    ]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe('co-allocated 2 tasks: every provider agreed');
    expect(result.out[1]).toMatch(/^\s+TASK\s+PROVIDER\s+TEMPLATE\s+AGREEMENT\s+PRICE$/);
    expect(result.out[2]).toMatch(
      new RegExp(`^\\s+task 1\\s+${big.url}\\s+deadline-job\\s+${uuid.source}\\s+\\d+\\.\\d\\d EUR$`),
    );
  });

  it('when one provider cannot serve, terminates every negotiation: no hold is left anywhere; exit 1 names the task', async () => {
    const before = (await bookings(big)).length;
    const result = await wsag([
      'coallocate',
      '--task',
      `${big.url}=deadline-job,NodeCount=8`,
      '--task',
      `${small.url}=deadline-job,NodeCount=16`,
    ]);
    expect(result.code).toBe(1);
    expect(result.out).toEqual([]);
    expect(result.err[0]).toMatch(
      new RegExp(`^error: task 2 \\(deadline-job at ${small.url}\\): rejected: .*16 nodes`),
    );
    expect(result.err.at(-1)).toMatch(
      /^co-allocation abandoned, nothing is kept: task 1: negotiation \S+ terminated, hold released; task 2: negotiation \S+ terminated$/,
    );
    expect(await holdsAt(big)).toEqual([]);
    expect(await holdsAt(small)).toEqual([]);
    expect((await bookings(big)).length).toBe(before);
    const negotiations = await new WsagClient(big.url).negotiations();
    expect(negotiations.at(-1)?.state).toBe('Terminated');
  });

  it('an unreachable provider fails its task before anything is held; the others are ended', async () => {
    const dead = await deadUrl();
    const result = await wsag(['coallocate', '--task', `${big.url}=deadline-job`, '--task', `${dead}=deadline-job`]);
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(
      new RegExp(`^error: task 2 \\(deadline-job at ${dead}\\): cannot reach ${dead}/wsag/AgreementFactory: `),
    );
    expect(result.err.at(-1)).toMatch(/^co-allocation abandoned, nothing is kept: task 1: negotiation \S+ terminated$/);
    expect(await holdsAt(big)).toEqual([]);
  });

  it('when an accept fails after another succeeded, terminates the agreement already created (all or nothing)', async () => {
    // The second provider's accepting CreateAgreement fails in transit; the first one goes through.
    const failing: typeof fetch = async (input, init) => {
      if (String(input) === `${small.url}/wsag/AgreementFactory` && String(init?.body).includes('NegotiationExtension'))
        throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const result = await wsag(
      ['coallocate', '--task', `${big.url}=deadline-job`, '--task', `${small.url}=deadline-job`],
      { io: { fetch: failing } },
    );
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(
      new RegExp(
        `^error: task 2 \\(deadline-job at ${small.url}\\): accepting offer \\S+ failed: cannot reach ${small.url}/wsag/AgreementFactory`,
      ),
    );
    const [, agreementId] =
      /task 1: agreement (\S+) terminated; task 2: negotiation \S+ terminated, hold released$/.exec(
        result.err.at(-1) ?? '',
      ) ?? [];
    expect(agreementId).toMatch(uuid);
    expect((await new WsagClient(big.url).state(agreementId as string)).state).toBe('Terminated');
    expect(await holdsAt(big)).toEqual([]);
    expect(await holdsAt(small)).toEqual([]);
  });

  it('usage errors (exit 2)', async () => {
    expect((await wsag(['coallocate'])).err[0]).toBe(
      'error: give at least one --task URL=TEMPLATE[,LOCATION=VALUE...]',
    );
    const bad = await wsag(['coallocate', '--task', 'site-a=deadline-job']);
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toBe(
      'error: --task expects URL=TEMPLATE[,LOCATION=VALUE...] with an http(s) URL, got "site-a=deadline-job"',
    );
    expect((await wsag(['coallocate', '--task', 'http://a:1='])).err[0]).toBe(
      'error: --task http://a:1=: name a template after "http://a:1="',
    );
  });
});

describe('parseTask', () => {
  it('splits URL, template and settings; commas inside predicates stay', () => {
    expect(parseTask("http://a:8080/=deadline-job,NodeCount=16,//sla:X[contains(., 'a,b')]=v", 0)).toEqual({
      label: 'task 1',
      url: 'http://a:8080',
      template: 'deadline-job',
      settings: [
        { location: 'NodeCount', value: '16' },
        { location: "//sla:X[contains(., 'a,b')]", value: 'v' },
      ],
    });
  });
});
