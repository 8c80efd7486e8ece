import type {
  Account,
  AccountKind,
  EntryKind,
  FundsHold,
  LedgerChange,
  LedgerEntry,
  Overdraft,
} from '../domain/accounts.js';
import type { AccountStore, StatementPage } from '../engine/accounting/index.js';
import type { SqliteConnection } from './sqlite-connection.js';

export interface AccountRow {
  id: string;
  kind: string;
  owner: string;
  members: string;
  currency: string;
  overdraft: string;
  vo: string | null;
  grp: string | null;
  funds: number;
  held: number;
  allocated: number;
  created_at: number;
  updated_at: number;
}
export interface HoldRow {
  id: string;
  account_id: string;
  amount: number;
  open: number;
  created_at: number;
  closed_at: number | null;
}
export interface EntryRow {
  seq: number;
  account_id: string;
  at: number;
  kind: string;
  amount: number;
  held_change: number;
  hold_id: string | null;
  key: string;
  note: string;
}

/**
 * The accounting books in SQLite, on the server's connection (SqliteStore). `apply` reads
 * the account, runs the rule and writes accounts, holds and ledger rows in one IMMEDIATE
 * transaction: no other writer can change the account in between, and the commit is
 * fsynced before the promise resolves.
 */
export class SqliteAccountStore implements AccountStore {
  constructor(private readonly connection: SqliteConnection) {}

  async createAccount(account: Account): Promise<void> {
    this.connection.beginWrite();
    try {
      this.connection
        .statement(`INSERT INTO accounts
         (id, kind, owner, members, currency, overdraft, vo, grp, funds, held, allocated, created_at, updated_at)
        VALUES (@id, @kind, @owner, @members, @currency, @overdraft, @vo, @grp, @funds, @held, @allocated,
           @created_at, @updated_at)`)
        .run(toRow(account));
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw new Error(`account ${account.id} already exists`, { cause: error });
      throw error;
    }
    await this.connection.durable();
  }

  async account(id: string): Promise<Account | undefined> {
    return this.read(id);
  }

  async accounts(): Promise<Account[]> {
    return this.connection.statement<[], AccountRow>('SELECT * FROM accounts ORDER BY id').all().map(fromRow);
  }

  async hold(id: string): Promise<FundsHold | undefined> {
    return this.readHold(id);
  }

  async openHolds(accountId?: string): Promise<FundsHold[]> {
    const rows =
      accountId === undefined
        ? this.connection
            .statement<[], HoldRow>('SELECT * FROM account_holds WHERE open = 1 ORDER BY created_at, id')
            .all()
        : this.connection
            .statement<[string], HoldRow>(
              'SELECT * FROM account_holds WHERE open = 1 AND account_id = ? ORDER BY created_at, id',
            )
            .all(accountId);
    return rows.map(holdFromRow);
  }

  async statement(accountId: string, page: StatementPage = {}): Promise<LedgerEntry[]> {
    // LIMIT -1: no limit. The (account_id, seq) index finds the page's first entry.
    return this.connection
      .statement<[string, number, number], EntryRow>(
        'SELECT * FROM ledger WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      )
      .all(accountId, page.afterSeq ?? 0, page.limit ?? -1)
      .map(entryFromRow);
  }

  async apply(
    accountId: string,
    key: string,
    operation: (account: Account, hold: (id: string) => FundsHold | undefined) => LedgerChange,
  ): Promise<boolean> {
    const { db } = this.connection;
    this.connection.beginWrite();
    const applied = db
      .transaction(() => {
        if (this.connection.statement<[string], { one: number }>('SELECT 1 AS one FROM ledger WHERE key = ?').get(key))
          return false;
        const account = this.read(accountId);
        if (!account) throw new Error(`account ${accountId} does not exist`);
        const change = operation(account, (id) => this.readHold(id));
        if (change.entries[0]?.key !== key)
          throw new Error(`the operation's first ledger entry must carry its key ${key}`);
        this.connection
          .statement(
            'UPDATE accounts SET funds = @funds, held = @held, allocated = @allocated, updated_at = ' +
              '@updated_at WHERE id = @id',
          )
          .run(toRow(change.account));
        for (const hold of change.holds) {
          this.connection
            .statement(`INSERT INTO account_holds (id, account_id, amount, open, created_at, closed_at)
           VALUES (@id, @account_id, @amount, @open, @created_at, @closed_at)
          ON CONFLICT (id) DO UPDATE
           SET amount = excluded.amount, open = excluded.open, closed_at = excluded.closed_at`)
            .run(holdToRow(hold));
        }
        for (const entry of change.entries) {
          this.connection
            .statement(
              `INSERT INTO ledger (account_id, at, kind, amount, held_change, hold_id, key, note) VALUES (?, ` +
                `?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(
              accountId,
              entry.at.getTime(),
              entry.kind,
              entry.amount,
              entry.heldChange,
              entry.holdId ?? null,
              entry.key,
              entry.note,
            );
        }
        return true;
      })
      .immediate();
    await this.connection.durable();
    return applied;
  }

  async close(): Promise<void> {
    this.connection.close();
  }

  private read(id: string): Account | undefined {
    const row = this.connection.statement<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?').get(id);
    return row && fromRow(row);
  }

  private readHold(id: string): FundsHold | undefined {
    const row = this.connection.statement<[string], HoldRow>('SELECT * FROM account_holds WHERE id = ?').get(id);
    return row && holdFromRow(row);
  }
}

export function toRow(a: Account): AccountRow {
  return {
    id: a.id,
    kind: a.kind,
    owner: a.owner,
    members: JSON.stringify(a.members),
    currency: a.currency,
    overdraft: JSON.stringify(a.overdraft),
    vo: a.virtualOrganisation ?? null,
    grp: a.group ?? null,
    funds: a.funds,
    held: a.held,
    allocated: a.allocated,
    created_at: a.createdAt.getTime(),
    updated_at: a.updatedAt.getTime(),
  };
}

export function fromRow(r: AccountRow): Account {
  return {
    id: r.id,
    kind: r.kind as AccountKind,
    owner: r.owner,
    members: JSON.parse(r.members) as string[],
    currency: r.currency,
    overdraft: JSON.parse(r.overdraft) as Overdraft,
    ...(r.vo !== null ? { virtualOrganisation: r.vo } : {}),
    ...(r.grp !== null ? { group: r.grp } : {}),
    funds: r.funds,
    held: r.held,
    allocated: r.allocated,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export function holdToRow(h: FundsHold): HoldRow {
  return {
    id: h.id,
    account_id: h.accountId,
    amount: h.amount,
    open: h.open ? 1 : 0,
    created_at: h.createdAt.getTime(),
    closed_at: h.closedAt?.getTime() ?? null,
  };
}

export function holdFromRow(r: HoldRow): FundsHold {
  return {
    id: r.id,
    accountId: r.account_id,
    amount: r.amount,
    open: r.open === 1,
    createdAt: new Date(r.created_at),
    ...(r.closed_at !== null ? { closedAt: new Date(r.closed_at) } : {}),
  };
}

export function entryFromRow(r: EntryRow): LedgerEntry {
  return {
    seq: r.seq,
    accountId: r.account_id,
    at: new Date(r.at),
    kind: r.kind as EntryKind,
    amount: r.amount,
    heldChange: r.held_change,
    ...(r.hold_id !== null ? { holdId: r.hold_id } : {}),
    key: r.key,
    note: r.note,
  };
}
