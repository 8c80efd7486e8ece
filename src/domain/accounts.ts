import { InsufficientFunds, InvalidTerms } from './errors.js';

/**
 * Grid accounting (Sandholm 2007's SGAS Bank): accounts for users, groups and virtual
 * organisations, holds that reserve funds before work starts, and a ledger of every
 * transaction. Amounts are integer minor units (cents), so sums are exact. Pure: the
 * stores apply these rules inside their transactions.
 *
 * The books always balance: an account's `funds` is the sum of its ledger entries'
 * amounts (credits positive, charges negative), `held` the sum of its open holds (and of
 * the entries' `heldChange`), and `funds - held` never goes below minus the overdraft limit.
 */
export type AccountKind = 'user' | 'group' | 'vo';
export const accountKinds: readonly AccountKind[] = ['user', 'group', 'vo'];

/**
 * How far below zero the available funds may go: not at all, a fixed credit limit, or a share of what was allocated.
 */
export type Overdraft =
  | { kind: 'none' }
  | { kind: 'credit-limit'; limit: number }
  | { kind: 'allocation-share'; share: number };

export interface Account {
  id: string;
  kind: AccountKind;
  /** The identity (certificate subject) who owns it. */
  owner: string;
  /** Identities who may charge it and read it beside the owner (a VO's or group's members). */
  members: string[];
  currency: string;
  overdraft: Overdraft;
  /** The VO (and group) it belongs to, which sla:ChargeAccount may name. */
  virtualOrganisation?: string;
  group?: string;
  /** Cents: credits minus charges. */
  funds: number;
  /** Cents: open holds. */
  held: number;
  /** Cents: everything allocated (the base of an allocation-share overdraft). */
  allocated: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface FundsHold {
  /** `agreement:<id>` or `offer:<negotiation>/<offer>`. */
  id: string;
  accountId: string;
  /** Cents. */
  amount: number;
  open: boolean;
  createdAt: Date;
  closedAt?: Date;
}

export type EntryKind =
  | 'allocation'
  | 'deposit'
  | 'hold'
  | 'release'
  | 'charge'
  | 'fee'
  | 'penalty-credit'
  | 'reward-charge'
  | 'penalty-withdrawal';

export interface LedgerEntry {
  seq: number;
  accountId: string;
  at: Date;
  kind: EntryKind;
  /** Cents, the effect on funds: credits positive, charges negative, 0 for holds and releases. */
  amount: number;
  /** Cents, the effect on held. */
  heldChange: number;
  holdId?: string;
  /** Unique: an operation with a key already in the ledger is not applied again (exactly once across restarts). */
  key: string;
  note: string;
}

export type NewEntry = Omit<LedgerEntry, 'seq' | 'accountId'>;

/** What one operation changes: the account's new sums, the entries to append, the holds to write. */
export interface LedgerChange {
  account: Account;
  entries: NewEntry[];
  holds: FundsHold[];
}

export function cents(amount: number, what: string): number {
  const value = Math.round(amount * 100);
  if (!Number.isFinite(amount) || value <= 0 || value > 1e13)
    throw new InvalidTerms(`${what} must be a positive amount of at most 100000000000, got ${amount}`);
  return value;
}

export function fromCents(value: number): number {
  return value / 100;
}

export function overdraftLimit(account: Account): number {
  const o = account.overdraft;
  return o.kind === 'credit-limit'
    ? o.limit
    : o.kind === 'allocation-share'
      ? Math.floor(account.allocated * o.share)
      : 0;
}

/** What can still be held or charged, in cents. */
export function available(account: Account): number {
  return account.funds - account.held + overdraftLimit(account);
}

export function formatMoney(value: number, currency: string): string {
  return `${(value / 100).toFixed(2)} ${currency}`;
}

/** Allocations, deposits and penalty credits: funds go up. */
export function credit(
  account: Account,
  kind: 'allocation' | 'deposit' | 'penalty-credit',
  amount: number,
  at: Date,
  key: string,
  note: string,
): LedgerChange {
  return {
    account: {
      ...account,
      funds: account.funds + amount,
      allocated: account.allocated + (kind === 'allocation' ? amount : 0),
      updatedAt: at,
    },
    entries: [{ at, kind, amount, heldChange: 0, key, note }],
    holds: [],
  };
}

/** Reserves `amount` for `holdId`; refused when the account cannot cover it. */
export function placeHold(
  account: Account,
  holdId: string,
  amount: number,
  at: Date,
  key: string,
  note: string,
): LedgerChange {
  const free = available(account);
  if (amount > free) {
    throw new InsufficientFunds(
      `account "${account.id}" cannot cover ${formatMoney(amount, account.currency)}: ` +
        `${formatMoney(Math.max(0, free), account.currency)} available (funds ` +
        `${formatMoney(account.funds, account.currency)}, held ` +
        `${formatMoney(account.held, account.currency)}, overdraft ` +
        `${formatMoney(overdraftLimit(account), account.currency)})`,
      Math.max(0, free) / 100,
    );
  }
  return {
    account: { ...account, held: account.held + amount, updatedAt: at },
    entries: [{ at, kind: 'hold', amount: 0, heldChange: amount, holdId, key, note }],
    holds: [{ id: holdId, accountId: account.id, amount, open: true, createdAt: at }],
  };
}

/**
 * Ends an open hold: its amount is released, and `charge` (at most the hold) is charged as
 * a usage charge or a fee. The hold itself guarantees the charge can be paid.
 */
export function closeHold(
  account: Account,
  hold: FundsHold,
  charge: { kind: 'charge' | 'fee'; amount: number } | undefined,
  at: Date,
  key: string,
  note: string,
): LedgerChange {
  if (!hold.open) throw new Error(`hold ${hold.id} is closed already`);
  const charged = Math.min(hold.amount, Math.max(0, charge?.amount ?? 0));
  const entries: NewEntry[] = [
    { at, kind: 'release', amount: 0, heldChange: -hold.amount, holdId: hold.id, key, note },
  ];
  if (charge && charged > 0)
    entries.push({
      at,
      kind: charge.kind,
      amount: -charged,
      heldChange: 0,
      holdId: hold.id,
      key: `${key}/${charge.kind}`,
      note,
    });
  return {
    account: { ...account, held: account.held - hold.amount, funds: account.funds - charged, updatedAt: at },
    entries,
    holds: [{ ...hold, open: false, closedAt: at }],
  };
}

/** A reward the customer owes: charged as far as the account can pay (the rest is noted, not charged). */
export function chargeReward(account: Account, amount: number, at: Date, key: string, note: string): LedgerChange {
  const charged = Math.min(amount, Math.max(0, available(account)));
  const shortfall = amount - charged;
  return {
    account: { ...account, funds: account.funds - charged, updatedAt: at },
    entries: [
      {
        at,
        kind: 'reward-charge',
        amount: -charged,
        heldChange: 0,
        key,
        note:
          shortfall > 0
            ? `${note}; ${formatMoney(shortfall, account.currency)} could not be charged (not enough funds)`
            : note,
      },
    ],
    holds: [],
  };
}

/**
 * Takes back a penalty credit an operator found false (a compensating entry): the whole
 * amount, even below zero funds, since the credit itself was the error.
 */
export function withdrawPenaltyCredit(
  account: Account,
  amount: number,
  at: Date,
  key: string,
  note: string,
): LedgerChange {
  return {
    account: { ...account, funds: account.funds - amount, updatedAt: at },
    entries: [{ at, kind: 'penalty-withdrawal', amount: -amount, heldChange: 0, key, note }],
    holds: [],
  };
}

/** May `identity` charge and read the account? Its owner and members; operators read every account. */
export function mayUse(account: Account, identity: string): boolean {
  return account.owner === identity || account.members.includes(identity);
}

/**
 * Moves a hold to a new id (a negotiated offer's funds become its agreement's), resized to `amount`; the released
 * amount counts as available.
 */
export function transferHold(
  account: Account,
  from: FundsHold,
  toId: string,
  amount: number,
  at: Date,
  key: string,
  note: string,
): LedgerChange {
  if (!from.open) throw new Error(`hold ${from.id} is closed already`);
  const released = { ...account, held: account.held - from.amount };
  const placed = placeHold(released, toId, amount, at, `${key}/hold`, note);
  return {
    account: placed.account,
    entries: [
      { at, kind: 'release', amount: 0, heldChange: -from.amount, holdId: from.id, key, note },
      ...placed.entries,
    ],
    holds: [{ ...from, open: false, closedAt: at }, ...placed.holds],
  };
}

/**
 * Settles an agreement in one step: its hold (if any) is closed charging `charge`, its
 * penalties are credited and its rewards charged (as far as the account can pay).
 */
export function settle(
  account: Account,
  hold: FundsHold | undefined,
  amounts: { charge: number; penalties: number; rewards: number },
  at: Date,
  key: string,
  note: string,
): LedgerChange {
  let change: LedgerChange = { account, entries: [], holds: [] };
  const then = (next: (a: Account) => LedgerChange) => {
    const step = next(change.account);
    change = {
      account: step.account,
      entries: [...change.entries, ...step.entries],
      holds: [...change.holds, ...step.holds],
    };
  };
  if (hold?.open)
    then((a) =>
      closeHold(a, hold, amounts.charge > 0 ? { kind: 'charge', amount: amounts.charge } : undefined, at, key, note),
    );
  if (amounts.penalties > 0)
    then((a) =>
      credit(a, 'penalty-credit', amounts.penalties, at, `${key}/penalties`, `${note}: penalties the provider owes`),
    );
  if (amounts.rewards > 0)
    then((a) => chargeReward(a, amounts.rewards, at, `${key}/rewards`, `${note}: rewards the customer owes`));
  // The operation's key is on its first entry; with nothing to do, a marker entry records that it was settled.
  if (change.entries.length === 0)
    change.entries.push({ at, kind: 'charge', amount: 0, heldChange: 0, key, note: `${note}: nothing to charge` });
  else change.entries[0] = { ...(change.entries[0] as NewEntry), key };
  return change;
}
