import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { uuid, wsag } from './support.js';

let server: TestServer;
let url: string;
let client: WsagClient;
beforeAll(async () => {
  server = await startTestServer({ config: { admins: ['anonymous'], clusterNodes: 16 } });
  url = server.url;
  client = new WsagClient(url);
});
afterAll(async () => {
  await server.close();
});

const holds = async () => (await client.plan()).bookings.filter((b) => b.kind === 'hold');

describe('wsag negotiate', () => {
  it('--advisory starts a negotiation and lists start slots; nothing is held', async () => {
    const result = await wsag(['negotiate', '--template', 'advance-reservation', '--advisory'], { url });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(/^negotiation \S+: \d+ start slots? \(nothing is reserved yet\)$/);
    expect(result.out[1]).toMatch(/^\s+OFFER\s+START\s+END\s+NODES\s+PRICE$/);
    expect(result.out[2]).toMatch(/^\s+\S+-\d+\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+\S+Z\s+8\s+\d+\.\d\d EUR$/);
    expect(await holds()).toEqual([]);
  });

  it('--advisory, --solicit --counter, --accept: end to end, the hold becomes the agreement', async () => {
    const advice = await wsag(
      ['negotiate', '-t', 'advance-reservation', '--set', 'NodeCount=4', '--advisory', '--json'],
      { url },
    );
    expect(advice.code).toBe(0);
    const { negotiationId, address, slots } = JSON.parse(advice.stdout) as {
      negotiationId: string;
      address: string;
      slots: { offerId: string; nodes: number; start: string; end: string; price: { amount: number } }[];
    };
    expect(address).toBe(`${url}/wsag/Negotiation`);
    expect(slots.length).toBeGreaterThan(0);
    expect(slots[0]).toMatchObject({ nodes: 4 });

    const chosen = slots.at(-1) as (typeof slots)[number];
    const solicit = await wsag(
      ['negotiate', '--negotiation', negotiationId, '--solicit', '--counter', chosen.offerId],
      { url },
    );
    expect(solicit.err).toEqual([]);
    expect(solicit.code).toBe(0);
    const offerId = /^committing offer (\S+) \(negotiation /.exec(solicit.out[0] ?? '')?.[1] as string;
    expect(offerId).toBeDefined();
    expect(solicit.stdout).toMatch(/fee\s+\d+\.\d\d EUR/);
    expect(solicit.stdout).toContain(`hold     4 nodes from ${chosen.start} to ${chosen.end}`);
    // The hold books the window (promised) with its nodes' preparation before it.
    expect(await holds()).toEqual([
      expect.objectContaining({
        id: offerId,
        nodes: 4,
        promised: expect.objectContaining({ start: expect.stringMatching(chosen.start.replace('Z', '')) }),
      }),
    ]);

    const accept = await wsag(['negotiate', '--negotiation', negotiationId, '--accept', offerId], { url });
    expect(accept.err).toEqual([]);
    expect(accept.code).toBe(0);
    const agreementId = uuid.exec(accept.out[0] ?? '')?.[0] as string;
    expect(accept.out[0]).toBe(
      `created agreement ${agreementId} (accepted offer ${offerId} of negotiation ${negotiationId})`,
    );
    expect((await client.state(agreementId)).state).toBe('Observed');
    expect(await holds()).toEqual([]);
    expect((await client.negotiation(negotiationId)).state).toBe('Concluded');
  });

  it('--solicit from the template: a committing offer with expiry, price, fee and hold; --terminate releases the hold', async () => {
    const result = await wsag(['negotiate', '--template', 'deadline-job', '--solicit'], { url });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const [, offerId, negotiationId] =
      /^committing offer (\S+) \(negotiation (\S+)\): Acceptable$/.exec(result.out[0] ?? '') ?? [];
    expect(result.stdout).toMatch(/expires\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
    expect(result.stdout).toMatch(/price\s+\d+\.\d\d EUR/);
    expect(result.stdout).toMatch(/hold\s+4 nodes from /);
    expect(result.out.at(-1)).toBe(`accept it with: wsag negotiate --negotiation ${negotiationId} --accept ${offerId}`);
    expect((await holds()).map((h) => h.id)).toEqual([offerId]);

    const ended = await wsag(['negotiate', '--negotiation', negotiationId as string, '--terminate'], { url });
    expect(ended.code).toBe(0);
    expect(ended.out).toEqual([`negotiation ${negotiationId}: Terminated (its holds are released)`]);
    expect(await holds()).toEqual([]);
  });

  it("a Rejected answer is exit 1 with the provider's reason; nothing is held", async () => {
    const result = await wsag(
      ['negotiate', '--template', 'deadline-job', '--set', 'NodeCount=32', '--solicit', '--json'],
      { url },
    );
    expect(result.code).toBe(1);
    expect(result.out).toEqual([]);
    expect(result.err[0]).toMatch(/^error: rejected: .*32 nodes/);
    expect(result.err[1]).toMatch(/^negotiation \S+ stays open/);
    expect(await holds()).toEqual([]);
  });

  it("a Rejected answer lists the provider's counter-offers, and one can be solicited", async () => {
    const start = new Date(Math.ceil((Date.now() + 40 * 3600_000) / 60_000) * 60_000).toISOString();
    const end = new Date(Date.parse(start) + 2 * 3600_000).toISOString();
    const window = ['--set', `//arp:StartTime=${start}`, '--set', `//arp:EndTime=${end}`];
    const booked = await wsag(['create', '--template', 'advance-reservation', '--set', 'NodeCount=10', ...window], {
      url,
    });
    expect(booked.code).toBe(0);
    const result = await wsag(
      ['negotiate', '--template', 'advance-reservation', '--set', 'NodeCount=16', ...window, '--solicit'],
      { url },
    );
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(
      /^error: rejected: 16 nodes are not free from .*: 6 of 16 nodes are free throughout that window/,
    );
    expect(result.err[2]).toMatch(
      /^ {2}counter-offer \S+: counter-offer \(later start\): the same window moved to start at .* \(\d+\.\d\d EUR\)$/,
    );
    expect(result.err[3]).toMatch(
      /^ {2}counter-offer \S+: counter-offer \(fewer nodes\): 6 nodes instead of 16; .* \(\d+\.\d\d EUR\)$/,
    );
    const [, negotiationId, counter] =
      /^solicit one with: wsag negotiate --negotiation (\S+) --solicit --counter (\S+)$/.exec(result.err[4] ?? '') ??
      [];
    expect(await holds()).toEqual([]);
    const fewer = /^ {2}counter-offer (\S+):/.exec(result.err[3] ?? '')?.[1] as string;
    expect(counter).toBe(/^ {2}counter-offer (\S+):/.exec(result.err[2] ?? '')?.[1]);
    const solicit = await wsag(
      ['negotiate', '--negotiation', negotiationId as string, '--solicit', '--counter', fewer],
      { url },
    );
    expect(solicit.err).toEqual([]);
    expect(solicit.stdout).toMatch(/hold\s+6 nodes from /);
    await wsag(['negotiate', '--negotiation', negotiationId as string, '--terminate'], { url });
  });

  it('refuses to accept an offer that is not a committing one, and names unknown offers', async () => {
    const advice = await wsag(['negotiate', '-t', 'deadline-job', '--advisory', '--json'], { url });
    const { negotiationId, slots } = JSON.parse(advice.stdout) as {
      negotiationId: string;
      slots: { offerId: string }[];
    };
    const slot = slots[0]?.offerId as string;
    const advisory = await wsag(['negotiate', '--negotiation', negotiationId, '--accept', slot], { url });
    expect(advisory.code).toBe(1);
    expect(advisory.err).toEqual([
      `error: offer ${slot} (Advisory, from the provider) cannot be accepted: only the provider's Acceptable (committing) offers can; solicit it first: wsag negotiate --negotiation ${negotiationId} --solicit --counter ${slot}`,
    ]);
    const unknown = await wsag(['negotiate', '--negotiation', negotiationId, '--accept', 'nope'], { url });
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toMatch(
      new RegExp(
        `^error: negotiation ${negotiationId} has no offer "nope"; its offers: i-\\w+ \\(Advisory\\), ${slot} \\(Advisory\\)`,
      ),
    );
  });

  it('usage errors: no action without a terminal, two actions, missing --negotiation (exit 2)', async () => {
    const none = await wsag(['negotiate', '--template', 'deadline-job'], { url });
    expect(none.code).toBe(2);
    expect(none.err[0]).toBe(
      'error: choose one of --advisory, --solicit, --accept OFFER_ID, --terminate (or run it on a terminal to be walked through)',
    );
    expect(none.err[1]).toMatch(/^usage: wsag negotiate /);
    expect((await wsag(['negotiate', '--advisory', '--solicit', '-t', 'deadline-job'], { url })).err[0]).toBe(
      'error: choose one of --advisory, --solicit, --accept, --terminate; got --advisory and --solicit',
    );
    expect((await wsag(['negotiate', '--accept', 'x'], { url })).err[0]).toBe(
      'error: --accept needs an offer id of the form NEGOTIATION-N, or --negotiation ID',
    );
    expect((await wsag(['negotiate', '--terminate'], { url })).code).toBe(2);
    expect((await wsag(['negotiate', '--solicit', '--counter', 'x'], { url })).err[0]).toBe(
      'error: --counter needs --negotiation ID: offer ids belong to a negotiation',
    );
    expect((await wsag(['negotiate', '--solicit'], { url })).err[0]).toMatch(/^error: --template NAME is required/);
  });
});

describe('wsag negotiate on a terminal', () => {
  /** Answers the prompts in order, and records the questions. */
  const answering = (...answers: (string | undefined)[]) => {
    const questions: string[] = [];
    return { questions, prompt: async (q: string) => (questions.push(q), answers.shift()) };
  };

  it('walks through template, slots, the committing offer and accepts it', async () => {
    const user = answering('4', '1', 'y'); // template 4 of the list (deadline-job), slot 1, accept
    const result = await wsag(['negotiate'], { url, io: { prompt: user.prompt } });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(user.questions).toEqual([
      'template [1-5]: ',
      expect.stringMatching(/^solicit which slot\? \[1-\d+, q to quit\]: $/),
      'accept it? [y/N]: ',
    ]);
    expect(result.stdout).toMatch(/committing offer \S+ \(negotiation \S+\): Acceptable/);
    const agreementId = uuid.exec(result.out.find((l) => l.startsWith('created agreement')) ?? '')?.[0] as string;
    expect((await client.state(agreementId)).state).toBe('Observed');
    expect(await holds()).toEqual([]);
  });

  it('answering no terminates the negotiation and releases the hold', async () => {
    const user = answering('99', '1', 'n');
    const result = await wsag(['negotiate', '--template', 'advance-reservation'], { url, io: { prompt: user.prompt } });
    expect(result.code).toBe(0);
    const count = /\[1-(\d+),/.exec(user.questions[0] ?? '')?.[1];
    expect(result.err).toEqual([`no slot "99": answer a number from 1 to ${count}, or q`]);
    expect(result.out.at(-1)).toMatch(/^not accepted: negotiation \S+ terminated, nothing is held$/);
    expect(await holds()).toEqual([]);
  });

  it('end of input stops the walk cleanly', async () => {
    const result = await wsag(['negotiate', '--template', 'advance-reservation'], {
      url,
      io: { prompt: answering().prompt },
    });
    expect(result.code).toBe(0);
    expect(result.out.at(-1)).toMatch(/^stopped: negotiation \S+ terminated, nothing is held$/);
  });
});

describe('wsag negotiations', () => {
  it("lists negotiations, and one negotiation's offers", async () => {
    const advice = await wsag(['negotiate', '-t', 'deadline-job', '--advisory', '--json'], { url });
    const { negotiationId } = JSON.parse(advice.stdout) as { negotiationId: string };
    const list = await wsag(['negotiations'], { url });
    expect(list.code).toBe(0);
    expect(list.out[0]).toMatch(/^ID\s+TYPE\s+STATE\s+ROUNDS\s+OFFERS\s+AGREEMENT\s+ENDS$/);
    expect(list.out.find((l) => l.startsWith(negotiationId))).toMatch(/Negotiation\s+Open\s+1\s+\d+\s+-\s+\d{4}-/);
    const one = await wsag(['negotiations', negotiationId], { url });
    expect(one.out[0]).toBe(`negotiation ${negotiationId}: Open`);
    expect(one.out[2]).toMatch(/^\s+i-\w+\s+you\s+Advisory\s+deadline-job-v1\s+-\s+-$/);
    const json = JSON.parse((await wsag(['negotiations', '--json'], { url })).stdout) as { id: string }[];
    expect(json.map((n) => n.id)).toContain(negotiationId);
    const missing = await wsag(['negotiations', 'no-such-id'], { url });
    expect(missing.code).toBe(1);
    expect(missing.err[0]).toMatch(/^error: UnknownResource: /);
  });
});
