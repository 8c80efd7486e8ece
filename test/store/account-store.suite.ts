import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeHold, credit, placeHold, type Account } from '../../src/domain/accounts.js';
import { InsufficientFunds } from '../../src/domain/errors.js';
import type { AccountStore } from '../../src/engine/accounting/ports.js';

const t0 = new Date('2026-11-25T10:00:00Z');
export function makeAccount(id: string, overrides: Partial<Account> = {}): Account {
  return {
    id,
    kind: 'user',
    owner: `/CN=${id}`,
    members: [],
    currency: 'EUR',
    overdraft: { kind: 'none' },
    funds: 0,
    held: 0,
    allocated: 0,
    createdAt: t0,
    updatedAt: t0,
    ...overrides,
  };
}

/** The AccountStore contract (src/engine/ports.ts); every implementation runs it. */
export function accountStoreContract(name: string, make: () => Promise<AccountStore> | AccountStore): void {
  describe(`${name} satisfies the AccountStore contract`, () => {
    let store: AccountStore;
    beforeEach(async () => {
      store = await make();
    });
    afterEach(async () => {
      await store.close();
    });

    it('stores an account as given, every field; refuses a second with the same id', async () => {
      const account = makeAccount('astro', {
        kind: 'vo',
        members: ['/CN=a', '/CN=b'],
        overdraft: { kind: 'allocation-share', share: 0.1 },
        virtualOrganisation: 'astro',
        group: 'pulsars',
      });
      await store.createAccount(account);
      expect(await store.account('astro')).toStrictEqual(account);
      await expect(store.createAccount(makeAccount('astro'))).rejects.toThrow('account astro already exists');
      await store.createAccount(makeAccount('bio'));
      expect((await store.accounts()).map((a) => a.id)).toEqual(['astro', 'bio']);
      expect(await store.account('nobody')).toBeUndefined();
    });

    it('reads a statement a page at a time: the entries after a seq, at most a limit, of that account only', async () => {
      await store.createAccount(makeAccount('a'));
      await store.createAccount(makeAccount('b'));
      const at = new Date('2026-11-25T11:00:00Z');
      for (let i = 0; i < 5; i++) {
        await store.apply('a', `a-${i}`, (account) => credit(account, 'deposit', 100, at, `a-${i}`, 'grant'));
        await store.apply('b', `b-${i}`, (account) => credit(account, 'deposit', 100, at, `b-${i}`, 'grant'));
      }
      const all = await store.statement('a');
      expect(all.map((e) => e.key)).toEqual(['a-0', 'a-1', 'a-2', 'a-3', 'a-4']);
      const first = await store.statement('a', { limit: 2 });
      expect(first.map((e) => e.key)).toEqual(['a-0', 'a-1']);
      const second = await store.statement('a', { afterSeq: first.at(-1)!.seq, limit: 2 });
      expect(second.map((e) => e.key)).toEqual(['a-2', 'a-3']);
      expect((await store.statement('a', { afterSeq: second.at(-1)!.seq })).map((e) => e.key)).toEqual(['a-4']);
      expect(await store.statement('a', { afterSeq: all.at(-1)!.seq })).toEqual([]);
    });

    it('applies an operation once per key: the ledger, the sums and the holds change together', async () => {
      await store.createAccount(makeAccount('a'));
      const at = new Date('2026-11-25T11:00:00Z');
      expect(
        await store.apply('a', 'deposit-1', (account) => credit(account, 'deposit', 10_000, at, 'deposit-1', 'grant')),
      ).toBe(true);
      expect(
        await store.apply('a', 'deposit-1', (account) => credit(account, 'deposit', 10_000, at, 'deposit-1', 'grant')),
      ).toBe(false);
      expect(
        await store.apply('a', 'hold-x', (account) =>
          placeHold(account, 'agreement:x', 2_500, at, 'hold-x', 'agreement x'),
        ),
      ).toBe(true);
      expect(await store.account('a')).toMatchObject({ funds: 10_000, held: 2_500, updatedAt: at });
      expect(await store.openHolds('a')).toEqual([
        { id: 'agreement:x', accountId: 'a', amount: 2_500, open: true, createdAt: at },
      ]);
      expect(
        await store.apply('a', 'settle-x', (account, hold) =>
          closeHold(account, hold('agreement:x') as never, { kind: 'charge', amount: 2_000 }, at, 'settle-x', 'used'),
        ),
      ).toBe(true);
      expect(await store.account('a')).toMatchObject({ funds: 8_000, held: 0 });
      expect(await store.openHolds()).toEqual([]);
      expect(await store.hold('agreement:x')).toEqual({
        id: 'agreement:x',
        accountId: 'a',
        amount: 2_500,
        open: false,
        createdAt: at,
        closedAt: at,
      });
      const ledger = await store.statement('a');
      expect(ledger.map((e) => [e.seq > 0, e.kind, e.amount, e.heldChange, e.key])).toEqual([
        [true, 'deposit', 10_000, 0, 'deposit-1'],
        [true, 'hold', 0, 2_500, 'hold-x'],
        [true, 'release', 0, -2_500, 'settle-x'],
        [true, 'charge', -2_000, 0, 'settle-x/charge'],
      ]);
      expect(ledger.every((e) => e.accountId === 'a' && e.at.getTime() === at.getTime())).toBe(true);
      expect(ledger.map((e) => e.seq)).toEqual([...ledger.map((e) => e.seq)].sort((x, y) => x - y));
    });

    it('an operation sees the holds it asks for (undefined for one that does not exist), and its own error stops it', async () => {
      await store.createAccount(makeAccount('a'));
      await store.apply('a', 'deposit', (account) => credit(account, 'deposit', 10_000, t0, 'deposit', 'grant'));
      await store.apply('a', 'hold-one', (account) => placeHold(account, 'one', 1_000, t0, 'hold-one', 'one'));
      await store.apply('a', 'hold-two', (account) => placeHold(account, 'two', 2_000, t0, 'hold-two', 'two'));
      let seen: unknown;
      expect(
        await store.apply('a', 'close-two', (account, hold) => {
          seen = [hold('none'), hold('one')?.amount, hold('two')?.amount];
          return closeHold(account, hold('two') as never, undefined, t0, 'close-two', 'two ends while one is open');
        }),
      ).toBe(true);
      expect(seen).toEqual([undefined, 1_000, 2_000]);
      await expect(
        store.apply('a', 'close-none', (account, hold) => {
          const none = hold('none');
          if (!none) throw new Error('hold none does not exist');
          return closeHold(account, none, undefined, t0, 'close-none', 'never');
        }),
      ).rejects.toThrow('hold none does not exist');
      expect((await store.statement('a')).map((e) => e.key)).toEqual(['deposit', 'hold-one', 'hold-two', 'close-two']);
      expect(await store.account('a')).toMatchObject({ funds: 10_000, held: 1_000 });
    });

    it('a refused operation changes nothing', async () => {
      await store.createAccount(makeAccount('a', { overdraft: { kind: 'credit-limit', limit: 500 } }));
      await expect(
        store.apply('a', 'hold-1', (account) => placeHold(account, 'agreement:1', 501, t0, 'hold-1', 'too much')),
      ).rejects.toThrow(InsufficientFunds);
      expect(await store.account('a')).toMatchObject({ funds: 0, held: 0 });
      expect(await store.statement('a')).toEqual([]);
      // Within the credit limit it holds.
      expect(
        await store.apply('a', 'hold-1', (account) =>
          placeHold(account, 'agreement:1', 500, t0, 'hold-1', 'within credit'),
        ),
      ).toBe(true);
    });

    it('refuses an operation on an account that does not exist', async () => {
      await expect(store.apply('ghost', 'k', (account) => credit(account, 'deposit', 1, t0, 'k', 'n'))).rejects.toThrow(
        'account ghost does not exist',
      );
    });
  });
}
