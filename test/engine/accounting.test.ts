import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WsagFault } from '../../src/client/wsag-client.js';
import type { AccountView } from '../../src/engine/accounting/account-service.js';
import { withChargeAccount } from '../../src/xml/offer-additions.js';
import { wsag } from '../cli/support.js';
import { at, deadlineOffer, simulatedServer, type SimulatedServer } from './run-time-support.js';

/**
 * The bank through the server, on a simulated clock: an operator creates and
 * funds an account; agreements charged to it hold their price, are refused naming the
 * account and both amounts when it cannot cover them, are settled at actual usage when they
 * complete and released when terminated; a negotiated hold that expires charges its fee.
 */
describe('accounts, holds and settlement', () => {
  let server: SimulatedServer;
  beforeAll(async () => {
    server = await simulatedServer({ nodes: 8, sqlite: true });
  });
  afterAll(async () => server?.close());

  const account = async (id: string) => (await (await fetch(`${server.url}/api/accounts/${id}`)).json()) as AccountView;
  const statement = async (id: string) =>
    (
      (await (await fetch(`${server.url}/api/accounts/${id}/statement`)).json()) as {
        entries: Array<{ kind: string; amount: number; heldChange: number; holdId?: string; note: string }>;
      }
    ).entries;
  const offer = async (accountId: string, nodes = 4) =>
    withChargeAccount(await deadlineOffer(server.client, { level: 'Standard', nodes, deadline: at(20_000) }), {
      account: accountId,
    });

  it('holds the price, refuses what the account cannot cover, settles at usage on completion', async () => {
    expect(
      (
        await wsag(['account', 'create', 'astro', '--owner', 'anonymous', '--kind', 'vo', '--vo', 'astro'], {
          url: server.url,
        })
      ).code,
    ).toBe(0);
    const funded = await wsag(['account', 'allocate', 'astro', '12.50', '--key', 'grant-1'], { url: server.url });
    expect(funded.code).toBe(0);
    // The same key again: credited once.
    await wsag(['account', 'allocate', 'astro', '12.50', '--key', 'grant-1'], { url: server.url });
    expect(await account('astro')).toMatchObject({ funds: 12.5, held: 0, available: 12.5, allocated: 12.5 });

    const created = await server.client.createAgreement(await offer('astro'));
    await server.accounting.idle();
    const price = (await account('astro')).held;
    expect(price).toBeGreaterThan(0);
    expect(await account('astro')).toMatchObject({ funds: 12.5, available: 12.5 - price });

    const refused = await server.client.createAgreement(await offer('astro', 8)).then(
      () => undefined,
      (e: unknown) => e as WsagFault,
    );
    expect(refused?.code).toBe('InsufficientFunds');
    expect(refused?.description).toMatch(
      new RegExp(
        `^account "astro" cannot cover \\d+\\.\\d\\d EUR: ${(12.5 - price).toFixed(2)} EUR available \\(funds 12\\.50 EUR, held ${price.toFixed(2)} EUR, overdraft 0\\.00 EUR\\)$`,
      ),
    );
    // The refused offer booked nothing and held nothing.
    expect(await account('astro')).toMatchObject({ held: price });

    await server.runUntilIdle();
    expect((await server.client.state(created.agreementId)).state).toBe('Complete');
    const settled = await account('astro');
    const charged = (await statement('astro')).filter((e) => e.kind === 'charge');
    expect(charged).toHaveLength(1);
    expect(-(charged[0]?.amount as number)).toBeGreaterThan(0);
    expect(-(charged[0]?.amount as number)).toBeLessThanOrEqual(price);
    expect(settled).toMatchObject({ held: 0, funds: Math.round((12.5 + (charged[0]?.amount as number)) * 100) / 100 });
    expect((await statement('astro')).map((e) => e.kind)).toEqual(['allocation', 'hold', 'release', 'charge']);
  });

  it('sends a statement a page at a time, and wsag account statement reads every page', async () => {
    expect((await wsag(['account', 'create', 'paged', '--owner', 'anonymous'], { url: server.url })).code).toBe(0);
    // One page more than the largest (1,000 entries).
    for (let i = 0; i < 1001; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, 1001 - i) }, (_, j) =>
          fetch(`${server.url}/api/accounts/paged/deposits`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ amount: 0.01, key: `d-${i + j}` }),
          }).then((r) => expect(r.status).toBe(200)),
        ),
      );
    }
    const first = await fetch(`${server.url}/api/accounts/paged/statement?limit=400`);
    const page = (await first.json()) as { entries: Array<{ seq: number; key: string }>; next?: number };
    expect(page.entries).toHaveLength(400);
    expect(page.next).toBe(page.entries.at(-1)?.seq);
    expect(first.headers.get('link')).toBe(`</api/accounts/paged/statement?limit=400&after=${page.next}>; rel="next"`);
    const rest = (await (await fetch(`${server.url}/api/accounts/paged/statement?after=${page.next}`)).json()) as {
      entries: unknown[];
      next?: number;
    };
    expect(rest.entries).toHaveLength(601);
    expect(rest.next).toBeUndefined();
    const printed = await wsag(['account', 'statement', 'paged', '--json'], { url: server.url });
    expect(printed.code).toBe(0);
    const statement = JSON.parse(printed.stdout) as { entries: Array<{ key: string }>; account: { funds: number } };
    expect(statement.entries).toHaveLength(1001);
    expect(new Set(statement.entries.map((e) => e.key)).size).toBe(1001);
    expect(statement.account.funds).toBeCloseTo(10.01, 2);
    for (const [query, named] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['after=x', 'after'],
      ['page=2', '"page"'],
    ]) {
      const bad = await fetch(`${server.url}/api/accounts/paged/statement?${query}`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { detail: string }).detail).toContain(named);
    }
  });

  it('a terminated agreement releases its hold without charge', async () => {
    const before = await account('astro');
    const created = await server.client.createAgreement(await offer('astro', 1));
    await server.accounting.idle();
    expect((await account('astro')).held).toBeGreaterThan(0);
    await server.client.terminate(created.agreementId);
    await server.accounting.idle();
    expect(await account('astro')).toMatchObject({ funds: before.funds, held: 0 });
  });

  it('an account nobody created, or one of another VO, is refused naming it', async () => {
    const unknown = await server.client.createAgreement(await offer('nobody', 1)).then(
      () => undefined,
      (e: unknown) => e as WsagFault,
    );
    expect(unknown?.code).toBe('UnknownAccount');
    expect(unknown?.description).toBe('sla:ChargeAccount: account "nobody" does not exist here');
    const otherVo = withChargeAccount(
      await deadlineOffer(server.client, { level: 'Standard', nodes: 1, deadline: at(20_000) }),
      { account: 'astro', virtualOrganisation: 'bio' },
    );
    const fault = await server.client.createAgreement(otherVo).then(
      () => undefined,
      (e: unknown) => e as WsagFault,
    );
    expect(fault?.code).toBe('UnknownAccount');
    expect(fault?.description).toBe(
      'sla:ChargeAccount: account "astro" does not belong to virtual organisation "bio" (it belongs to "astro")',
    );
  });

  it('a negotiated offer that holds capacity holds funds; expired, its preparatory fee is charged', async () => {
    const before = await account('astro');
    const solicited = await wsag(
      [
        'negotiate',
        '--solicit',
        '--template',
        'deadline-job',
        '--set',
        'NodeCount=1',
        '--set',
        '//jsdl:IndividualPhysicalMemory/jsdl:Exact=17179869184',
        '--account',
        'astro',
        '--json',
      ],
      { url: server.url },
    );
    expect(solicited.err).toEqual([]);
    expect(solicited.code).toBe(0);
    await server.accounting.idle();
    const held = (await account('astro')).held;
    expect(held).toBeGreaterThan(0);
    await server.advanceTo(30_000); // beyond the hold's 300 s
    // The server's expiry timer (every second, real time) ends the hold at the simulated time.
    for (let i = 0; i < 50 && !(await statement('astro')).some((e) => e.kind === 'fee'); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    await server.accounting.idle();
    const after = await account('astro');
    const fee = (await statement('astro')).filter((e) => e.kind === 'fee');
    expect(fee).toHaveLength(1);
    expect(after).toMatchObject({
      held: 0,
      funds: Math.round((before.funds + (fee[0]?.amount as number)) * 100) / 100,
    });
  });

  it('in negotiation, an offer the account cannot cover is countered with what its budget buys', async () => {
    await wsag(['account', 'create', 'small', '--owner', 'anonymous'], { url: server.url });
    await wsag(['account', 'deposit', 'small', '3'], { url: server.url });
    const solicited = await wsag(
      [
        'negotiate',
        '--solicit',
        '--template',
        'deadline-job',
        '--set',
        'NodeCount=4',
        '--set',
        '//jsdl:IndividualPhysicalMemory/jsdl:Exact=17179869184',
        '--account',
        'small',
      ],
      { url: server.url },
    );
    expect(solicited.code).toBe(1);
    expect(solicited.err[0]).toMatch(
      /^error: rejected: account "small" cannot cover \d+\.\d\d EUR: 3\.00 EUR available/,
    );
    const counter = solicited.err.find((l) => l.includes('counter-offer (what the budget buys)'));
    expect(counter).toMatch(
      /counter-offer \(what the budget buys\): [12] nodes for [0-2]\.\d\d EUR of the 3\.00 EUR account "small" has/,
    );
    // Nothing was held: neither funds nor capacity.
    expect(await account('small')).toMatchObject({ held: 0, available: 3 });
  });
});
