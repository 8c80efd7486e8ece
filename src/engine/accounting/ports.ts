import type { Account, FundsHold, LedgerChange, LedgerEntry } from '../../domain/accounts.js';

/** The ports of this use case; the ports every use case shares are in ../ports.ts. */

/**
 * The accounting books: accounts, holds of funds and the ledger. Every change
 * goes through `apply`, which runs the domain's rule (src/domain/accounts.ts) on the
 * account as stored and writes its result in one transaction, once per key: an operation
 * whose key is already in the ledger changes nothing, so a retry after a crash never
 * charges twice. Durable when the promise resolves.
 */
export interface AccountStore {
  /** Stores a new account; fails when the id is taken. */
  createAccount(account: Account): Promise<void>;
  account(id: string): Promise<Account | undefined>;
  accounts(): Promise<Account[]>;
  hold(id: string): Promise<FundsHold | undefined>;
  /** Open holds, oldest first; of one account when given. */
  openHolds(accountId?: string): Promise<FundsHold[]>;
  /** The account's ledger, oldest first: the entries after `afterSeq`, at most `limit` of them (all when unset). */
  statement(accountId: string, page?: StatementPage): Promise<LedgerEntry[]>;
  /**
   * True when applied; false when `key` was applied before. The account must exist.
   * `operation` must be a pure function of the account and the holds it looks up: a store
   * may run it more than once (PostgreSQL runs it to learn which holds to read) and keeps
   * the last run's change.
   */
  apply(
    accountId: string,
    key: string,
    operation: (account: Account, hold: (id: string) => FundsHold | undefined) => LedgerChange,
  ): Promise<boolean>;
  close(): Promise<void>;
}

/** One agreement's usage record as stored: the GFD.98 document, and its signed form when the server signs. */
export interface StoredUsageRecord {
  agreementId: string;
  initiator: string;
  createdAt: Date;
  /** The ur:JobUsageRecord document. */
  xml: string;
  /** The record with the provider's signature (src/crypto/usage-record-signature.ts), when agreements are signed. */
  signed?: string;
}

/** Usage records, one per ended agreement, never changed once stored. */
export interface UsageRecordStore {
  /** Stores the record; false (and nothing changes) when the agreement has one already. */
  add(record: StoredUsageRecord): Promise<boolean>;
  get(agreementId: string): Promise<StoredUsageRecord | undefined>;
  /** In order of creation; of one initiator when given; after a cursor; at most `limit`. */
  list(filter?: {
    initiator?: string;
    after?: { createdAt: Date; id: string };
    limit?: number;
  }): Promise<StoredUsageRecord[]>;
}

/** A page of a statement: the entries after the seq of the last one read. */
export interface StatementPage {
  afterSeq?: number;
  limit?: number;
}
