import { randomUUID } from 'node:crypto';
import {
  accountKinds,
  available,
  cents,
  credit,
  mayUse,
  overdraftLimit,
  type Account,
  type AccountKind,
  type LedgerEntry,
  type Overdraft,
} from '../../domain/accounts.js';
import { InvalidTerms, NotAuthorized, UnknownResource } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import type { Clock } from '../ports.js';
import type { AccountStore } from './ports.js';

/** What creating an account takes (amounts in the account's currency, not cents). */
export interface NewAccount {
  id: string;
  kind?: AccountKind;
  owner: string;
  members?: string[];
  currency: string;
  overdraft?: { kind: 'none' } | { kind: 'credit-limit'; limit: number } | { kind: 'allocation-share'; share: number };
  virtualOrganisation?: string;
  group?: string;
}

/** A ledger entry as a statement shows it: amounts in the currency's units, the time as ISO 8601. */
export type StatementLine = Omit<LedgerEntry, 'amount' | 'heldChange' | 'at'> & {
  at: string;
  amount: number;
  heldChange: number;
};

/** An account as shown to its readers: amounts in the currency's units, with what is available. */
export interface AccountView {
  id: string;
  kind: AccountKind;
  owner: string;
  members: string[];
  currency: string;
  overdraft: NewAccount['overdraft'];
  virtualOrganisation?: string;
  group?: string;
  funds: number;
  held: number;
  allocated: number;
  overdraftLimit: number;
  available: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * The bank's face (SGAS's Bank): operators create accounts, allocate and
 * deposit; an account's owner and members read it and its statement. Everything goes
 * through the AccountStore, once per key: a deposit sent twice with the same key is
 * credited once.
 */
export class AccountService {
  constructor(private readonly deps: { accounts: AccountStore; clock: Clock }) {}

  async create(input: NewAccount, caller: Caller): Promise<AccountView> {
    operatorOnly(caller, 'create accounts');
    if (!/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(input.id ?? ''))
      throw new InvalidTerms(
        `account id "${input.id}": letters, digits and . _ : @ -, at most 128, starting with a letter or digit`,
      );
    const kind = input.kind ?? 'user';
    if (!accountKinds.includes(kind))
      throw new InvalidTerms(`account kind "${kind}": one of ${accountKinds.join(', ')}`);
    if (typeof input.owner !== 'string' || input.owner.trim() === '')
      throw new InvalidTerms('an account needs an owner (an identity, such as a certificate subject)');
    if (!/^[A-Z]{3}$/.test(input.currency ?? ''))
      throw new InvalidTerms(`currency "${input.currency}": a three-letter ISO 4217 code such as EUR`);
    const now = this.deps.clock.now();
    const account: Account = {
      id: input.id,
      kind,
      owner: input.owner.trim(),
      members: [...new Set((input.members ?? []).map((m) => String(m).trim()).filter(Boolean))],
      currency: input.currency,
      overdraft: overdraftOf(input.overdraft),
      ...(input.virtualOrganisation ? { virtualOrganisation: input.virtualOrganisation } : {}),
      ...(input.group ? { group: input.group } : {}),
      funds: 0,
      held: 0,
      allocated: 0,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.deps.accounts.createAccount(account);
    } catch (error) {
      if (/already exists/.test((error as Error).message))
        throw new InvalidTerms(`account "${account.id}" already exists`);
      throw error;
    }
    return view(account);
  }

  /** Credits `amount` as a deposit or an allocation; `key` (optional) makes a retry safe. */
  async credit(
    id: string,
    kind: 'deposit' | 'allocation',
    amount: number,
    caller: Caller,
    note = '',
    key?: string,
  ): Promise<AccountView> {
    operatorOnly(caller, `${kind === 'deposit' ? 'deposit into' : 'allocate to'} accounts`);
    const value = cents(amount, `the ${kind}`);
    await this.existing(id);
    const entryKey = `${kind}:${id}:${key ?? randomUUID()}`;
    await this.deps.accounts.apply(id, entryKey, (a) =>
      credit(a, kind, value, this.deps.clock.now(), entryKey, note || `${kind} by ${caller.identity}`),
    );
    return view(await this.existing(id));
  }

  async get(id: string, caller: Caller): Promise<AccountView> {
    return view(await this.readable(id, caller));
  }

  /** Operators see every account; anyone else those they own or belong to. */
  async list(caller: Caller): Promise<AccountView[]> {
    return (await this.deps.accounts.accounts()).filter((a) => caller.isAdmin || mayUse(a, caller.identity)).map(view);
  }

  /**
   * A page of the account's statement: at most `limit` entries after `afterSeq`, and `next`
   * (the afterSeq of the next page) when more follow.
   */
  async statement(
    id: string,
    caller: Caller,
    page: { afterSeq?: number; limit: number },
  ): Promise<{ account: AccountView; entries: StatementLine[]; next?: number }> {
    const account = await this.readable(id, caller);
    // One more than the page, to know whether another follows.
    const read = await this.deps.accounts.statement(id, { ...page, limit: page.limit + 1 });
    const entries = read
      .slice(0, page.limit)
      .map((e) => ({ ...e, at: e.at.toISOString(), amount: e.amount / 100, heldChange: e.heldChange / 100 }));
    const last = entries.at(-1);
    return { account: view(account), entries, ...(read.length > page.limit && last ? { next: last.seq } : {}) };
  }

  private async readable(id: string, caller: Caller): Promise<Account> {
    const account = await this.existing(id);
    if (!caller.isAdmin && !mayUse(account, caller.identity))
      throw new NotAuthorized(`account "${id}" is not yours: its owner, its members and operators may read it`);
    return account;
  }

  private async existing(id: string): Promise<Account> {
    const account = await this.deps.accounts.account(id);
    if (!account) throw new UnknownResource(`no account "${id}"`);
    return account;
  }
}

function operatorOnly(caller: Caller, what: string): void {
  if (!caller.isAdmin)
    throw new NotAuthorized(`only operators may ${what} (WSAG_ADMINS); ${caller.identity} is not one`);
}

function overdraftOf(input: NewAccount['overdraft']): Overdraft {
  if (!input || input.kind === 'none') return { kind: 'none' };
  if (input.kind === 'credit-limit')
    return { kind: 'credit-limit', limit: input.limit === 0 ? 0 : cents(input.limit, 'the credit limit') };
  if (input.kind === 'allocation-share') {
    if (!(typeof input.share === 'number' && input.share >= 0 && input.share <= 1))
      throw new InvalidTerms(`the overdraft share of the allocation must lie between 0 and 1, got ${input.share}`);
    return { kind: 'allocation-share', share: input.share };
  }
  throw new InvalidTerms(
    `overdraft "${(input as { kind: string }).kind}": one of none, credit-limit (with limit), ` +
      `allocation-share (with share)`,
  );
}

export function view(a: Account): AccountView {
  const overdraft =
    a.overdraft.kind === 'credit-limit'
      ? { kind: 'credit-limit' as const, limit: a.overdraft.limit / 100 }
      : a.overdraft;
  return {
    id: a.id,
    kind: a.kind,
    owner: a.owner,
    members: a.members,
    currency: a.currency,
    overdraft,
    ...(a.virtualOrganisation ? { virtualOrganisation: a.virtualOrganisation } : {}),
    ...(a.group ? { group: a.group } : {}),
    funds: a.funds / 100,
    held: a.held / 100,
    allocated: a.allocated / 100,
    overdraftLimit: overdraftLimit(a) / 100,
    available: available(a) / 100,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}
