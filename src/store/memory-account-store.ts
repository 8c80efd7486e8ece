import type { Account, FundsHold, LedgerChange, LedgerEntry } from '../domain/accounts.js';
import type { AccountStore, StatementPage } from '../engine/accounting/index.js';

/** The accounting books in memory (tests, simulation); the same contract as SqliteAccountStore. */
export class MemoryAccountStore implements AccountStore {
  private readonly accountsById = new Map<string, Account>();
  private readonly holdsById = new Map<string, FundsHold>();
  private readonly ledger: LedgerEntry[] = [];
  private readonly keys = new Set<string>();

  async createAccount(account: Account): Promise<void> {
    if (this.accountsById.has(account.id)) throw new Error(`account ${account.id} already exists`);
    this.accountsById.set(account.id, structuredClone(account));
  }

  async account(id: string): Promise<Account | undefined> {
    const account = this.accountsById.get(id);
    return account && structuredClone(account);
  }

  async accounts(): Promise<Account[]> {
    return [...this.accountsById.values()].map((a) => structuredClone(a)).sort((a, b) => a.id.localeCompare(b.id));
  }

  async hold(id: string): Promise<FundsHold | undefined> {
    const hold = this.holdsById.get(id);
    return hold && structuredClone(hold);
  }

  async openHolds(accountId?: string): Promise<FundsHold[]> {
    return [...this.holdsById.values()]
      .filter((h) => h.open && (accountId === undefined || h.accountId === accountId))
      .map((h) => structuredClone(h));
  }

  async statement(accountId: string, page: StatementPage = {}): Promise<LedgerEntry[]> {
    const after = page.afterSeq ?? 0;
    const entries = this.ledger.filter((e) => e.accountId === accountId && e.seq > after);
    return entries.slice(0, page.limit ?? entries.length).map((e) => structuredClone(e));
  }

  async apply(
    accountId: string,
    key: string,
    operation: (account: Account, hold: (id: string) => FundsHold | undefined) => LedgerChange,
  ): Promise<boolean> {
    if (this.keys.has(key)) return false;
    const account = this.accountsById.get(accountId);
    if (!account) throw new Error(`account ${accountId} does not exist`);
    const change = operation(structuredClone(account), (id) => structuredClone(this.holdsById.get(id)));
    if (change.entries[0]?.key !== key) throw new Error(`the operation's first ledger entry must carry its key ${key}`);
    for (const entry of change.entries) {
      if (this.keys.has(entry.key)) throw new Error(`ledger key ${entry.key} is taken`);
    }
    this.accountsById.set(accountId, structuredClone(change.account));
    for (const hold of change.holds) this.holdsById.set(hold.id, structuredClone(hold));
    for (const entry of change.entries) {
      this.ledger.push({ ...structuredClone(entry), seq: this.ledger.length + 1, accountId });
      this.keys.add(entry.key);
    }
    this.keys.add(key);
    return true;
  }

  async close(): Promise<void> {}
}
