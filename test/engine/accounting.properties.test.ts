import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { credit, overdraftLimit, type Account } from '../../src/domain/accounts.js';
import type { Agreement } from '../../src/domain/agreement.js';
import { InsufficientFunds } from '../../src/domain/errors.js';
import type { Negotiation } from '../../src/domain/negotiation.js';
import { agreementHoldId, Charging, offerHoldId } from '../../src/engine/accounting/charging.js';
import { Settlement } from '../../src/engine/accounting/settlement.js';
import type { AccountStore } from '../../src/engine/accounting/ports.js';
import type { StoredReport } from '../../src/engine/execution/ports.js';
import { SqliteStore } from '../../src/store/index.js';

/**
 * Money is neither created nor lost: random sequences of deposits, agreements
 * and negotiated offers that hold funds (some lost to a crash before they were stored),
 * expiries, acceptances, completions with penalties and rewards, terminations, changes seen
 * twice, and restarts of the books (the SQLite file reopened, then reconciled). After every
 * step, for every account: its funds are the sum of its ledger, its held amount the sum of
 * its open holds and of the ledger's hold changes, and it is never below its overdraft
 * limit; no hold is closed or charged twice; after a restart no hold is left without an
 * agreement or offer that still needs it. Runs: WSAG_PROPERTY_RUNS (default 200).
 */
const runs = Number(process.env.WSAG_PROPERTY_RUNS ?? 200);
const accountIds = ['none', 'credit', 'share'] as const;
const caller = { identity: 'alice', isAdmin: false };
const prices = { currency: 'EUR', nodeHour: 1, preparatoryFeeRate: 0.05 };

const step = fc.oneof(
  fc.record({
    op: fc.constant('deposit' as const),
    account: fc.constantFrom(...accountIds),
    cents: fc.integer({ min: 1, max: 20_000 }),
    allocation: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('agree' as const),
    account: fc.constantFrom(...accountIds),
    cents: fc.integer({ min: 1, max: 15_000 }),
    crash: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('offer' as const),
    account: fc.constantFrom(...accountIds),
    cents: fc.integer({ min: 1, max: 15_000 }),
    crash: fc.boolean(),
  }),
  fc.record({ op: fc.constantFrom('expire' as const, 'accept' as const, 'release' as const), index: fc.nat() }),
  fc.record({
    op: fc.constant('complete' as const),
    index: fc.nat(),
    usedShare: fc.double({ min: 0, max: 1.5, noNaN: true }),
    penalty: fc.integer({ min: 0, max: 5_000 }),
    reward: fc.integer({ min: 0, max: 5_000 }),
  }),
  fc.record({ op: fc.constantFrom('terminate' as const, 'replay' as const), index: fc.nat() }),
  fc.record({ op: fc.constant('restart' as const) }),
);

describe('the books balance', () => {
  it('over random operations and restarts, money is neither created nor lost and no account passes its overdraft limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-books-'));
        const file = path.join(dir, 'wsag.db');
        let now = new Date('2026-11-25T10:00:00Z');
        const clock = { now: () => now };
        // What the rest of the server stored: it survives a restart of the books.
        const agreements = new Map<string, Agreement>();
        const negotiations = new Map<string, Negotiation>();
        const reports = new Map<string, StoredReport>();
        let store = SqliteStore.open(file);
        const parts = (accounts: AccountStore) => {
          const charging = new Charging({ accounts, clock });
          const settlement = new Settlement({
            accounts,
            charging,
            prices,
            clock,
            agreements: { get: async (id) => agreements.get(id), list: async () => [...agreements.values()] },
            negotiations: { get: async (id) => negotiations.get(id) },
            reports: { save: async () => {}, read: async (id) => reports.get(id) },
          });
          return { charging, settlement };
        };
        let { charging, settlement } = parts(store.accounts);
        const base = {
          kind: 'user' as const,
          owner: 'alice',
          members: [],
          currency: 'EUR',
          funds: 0,
          held: 0,
          allocated: 0,
          createdAt: now,
          updatedAt: now,
        };
        await store.accounts.createAccount({ ...base, id: 'none', overdraft: { kind: 'none' } });
        await store.accounts.createAccount({
          ...base,
          id: 'credit',
          overdraft: { kind: 'credit-limit', limit: 5_000 },
        });
        await store.accounts.createAccount({
          ...base,
          id: 'share',
          overdraft: { kind: 'allocation-share', share: 0.25 },
        });
        const request = (account: string) =>
          ({
            nodeCount: 1,
            libraries: [],
            requestKind: 'Binding',
            guaranteeLevel: 'Legacy',
            maxCoveredOutages: 0,
            securityPolicy: [],
            chargeAccount: { account },
          }) as unknown as Agreement['request'];
        const made: string[] = [];
        const offers: Array<{ negotiation: string; offer: string; account: string; cents: number }> = [];
        let n = 0;
        try {
          for (const s of steps) {
            now = new Date(now.getTime() + 60_000);
            const pick = <T>(list: readonly T[], index: number) =>
              list.length ? list[index % list.length] : undefined;
            switch (s.op) {
              case 'deposit': {
                const key = `${s.allocation ? 'allocation' : 'deposit'}:${++n}`;
                await store.accounts.apply(s.account, key, (a) =>
                  credit(a, s.allocation ? 'allocation' : 'deposit', s.cents, now, key, 'test'),
                );
                break;
              }
              case 'agree': {
                const id = `ag${++n}`;
                const price = { amount: s.cents / 100, currency: 'EUR' };
                try {
                  await charging.hold(agreementHoldId(id), request(s.account), price, caller, id);
                } catch (error) {
                  if (!(error instanceof InsufficientFunds)) throw error;
                  break;
                }
                if (s.crash) break; // the server stopped between hold and store
                agreements.set(id, {
                  id,
                  state: 'Observed',
                  request: request(s.account),
                  price,
                  createdAt: now,
                  updatedAt: now,
                } as unknown as Agreement);
                made.push(id);
                break;
              }
              case 'offer': {
                const negotiation = `n${++n}`;
                const price = { amount: s.cents / 100, currency: 'EUR' };
                try {
                  await charging.hold(offerHoldId(negotiation, 'o1'), request(s.account), price, caller, negotiation);
                } catch (error) {
                  if (!(error instanceof InsufficientFunds)) throw error;
                  break;
                }
                if (s.crash) break;
                negotiations.set(negotiation, {
                  id: negotiation,
                  createdAt: now,
                  offers: [
                    {
                      offerId: 'o1',
                      request: request(s.account),
                      price,
                      hold: { state: 'Held', fee: { amount: Math.round(s.cents * 0.05) / 100, currency: 'EUR' } },
                    },
                  ],
                } as unknown as Negotiation);
                offers.push({ negotiation, offer: 'o1', account: s.account, cents: s.cents });
                break;
              }
              case 'expire':
              case 'release': {
                const o = pick(offers, s.index);
                const record = o && negotiations.get(o.negotiation);
                const offer = record?.offers[0];
                if (!offer?.hold || offer.hold.state !== 'Held') break;
                offer.hold = {
                  ...offer.hold,
                  state: s.op === 'expire' ? 'Expired' : 'Released',
                  charged: s.op === 'expire' ? offer.hold.fee : { amount: 0, currency: 'EUR' },
                  endedAt: now,
                };
                await settlement.negotiationChanged(structuredClone(record as Negotiation));
                break;
              }
              case 'accept': {
                const o = pick(offers, s.index);
                const record = o && negotiations.get(o.negotiation);
                const offer = record?.offers[0];
                if (!o || !offer?.hold || offer.hold.state !== 'Held') break;
                offer.hold = { ...offer.hold, state: 'Confirmed', endedAt: now };
                const id = `ag${++n}`;
                agreements.set(id, {
                  id,
                  state: 'Observed',
                  request: request(o.account),
                  price: offer.price,
                  origin: { negotiationId: o.negotiation, offerId: 'o1' },
                  createdAt: now,
                  updatedAt: now,
                } as unknown as Agreement);
                made.push(id);
                await settlement.agreementChanged(structuredClone(agreements.get(id) as Agreement));
                break;
              }
              case 'complete':
              case 'terminate': {
                const id = pick(made, s.index);
                const agreement = id && agreements.get(id);
                if (!agreement || agreement.state !== 'Observed') break;
                const price = agreement.price?.amount ?? 0;
                const seconds = Math.round(price * 3600 * (s.op === 'complete' ? s.usedShare : 0.5));
                reports.set(agreement.id, {
                  text: '',
                  report: {
                    happened: {
                      started: new Date(now.getTime() - seconds * 1000).toISOString(),
                      completed: now.toISOString(),
                    },
                    totals:
                      s.op === 'complete'
                        ? {
                            penalties: [{ amount: s.penalty / 100, currency: 'EUR' }],
                            rewards: [{ amount: s.reward / 100, currency: 'EUR' }],
                            excused: [],
                          }
                        : { penalties: [], rewards: [], excused: [] },
                  },
                } as unknown as StoredReport);
                agreements.set(agreement.id, {
                  ...agreement,
                  state: s.op === 'complete' ? 'Complete' : 'Terminated',
                  updatedAt: now,
                });
                await settlement.agreementChanged(structuredClone(agreements.get(agreement.id) as Agreement));
                break;
              }
              case 'replay': {
                const id = pick(made, s.index);
                if (id) await settlement.agreementChanged(structuredClone(agreements.get(id) as Agreement));
                break;
              }
              case 'restart': {
                await store.close();
                store = SqliteStore.open(file);
                ({ charging, settlement } = parts(store.accounts));
                await settlement.reconcile();
                await expectNoLeakedHolds(store.accounts);
                break;
              }
            }
            await expectBalanced(store.accounts);
            await expectHeldWhileLive(store.accounts);
          }
          // A last restart settles whatever a crash left.
          await settlement.reconcile();
          await expectNoLeakedHolds(store.accounts);
          await expectBalanced(store.accounts);
        } finally {
          await store.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }

        /** Every agreement still Observed, and every offer still Held, has its funds held. */
        async function expectHeldWhileLive(accounts: AccountStore): Promise<void> {
          for (const agreement of agreements.values()) {
            if (agreement.state === 'Observed')
              expect((await accounts.hold(agreementHoldId(agreement.id)))?.open, `hold of live ${agreement.id}`).toBe(
                true,
              );
          }
          for (const negotiation of negotiations.values()) {
            if (negotiation.offers[0]?.hold?.state === 'Held')
              expect(
                (await accounts.hold(offerHoldId(negotiation.id, 'o1')))?.open,
                `hold of held offer ${negotiation.id}`,
              ).toBe(true);
          }
        }

        async function expectNoLeakedHolds(accounts: AccountStore): Promise<void> {
          for (const hold of await accounts.openHolds()) {
            if (hold.id.startsWith('agreement:')) {
              expect(agreements.get(hold.id.slice('agreement:'.length))?.state, `open hold ${hold.id}`).toBe(
                'Observed',
              );
            } else {
              const [negotiation] = hold.id.slice('offer:'.length).split('/');
              expect(negotiations.get(negotiation as string)?.offers[0]?.hold?.state, `open hold ${hold.id}`).toBe(
                'Held',
              );
            }
          }
        }
      }),
      { numRuns: runs },
    );
  }, 300_000);
});

async function expectBalanced(accounts: AccountStore): Promise<void> {
  for (const account of await accounts.accounts()) {
    const ledger = await accounts.statement(account.id);
    const open = await accounts.openHolds(account.id);
    expect(account.funds, `${account.id}: funds are the ledger's sum`).toBe(
      ledger.reduce((sum, e) => sum + e.amount, 0),
    );
    expect(account.held, `${account.id}: held is the open holds`).toBe(open.reduce((sum, h) => sum + h.amount, 0));
    expect(account.held, `${account.id}: held is the ledger's hold changes`).toBe(
      ledger.reduce((sum, e) => sum + e.heldChange, 0),
    );
    expect(account.funds - account.held, `${account.id}: within its overdraft`).toBeGreaterThanOrEqual(
      -overdraftLimit(account as Account),
    );
    // No hold released or charged twice.
    for (const kind of ['release', 'charge', 'fee'] as const) {
      const holds = ledger.filter((e) => e.kind === kind && e.holdId !== undefined).map((e) => e.holdId);
      expect(new Set(holds).size, `${account.id}: one ${kind} per hold`).toBe(holds.length);
    }
  }
}
