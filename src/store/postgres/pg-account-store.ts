import type { Account, FundsHold, LedgerChange, LedgerEntry } from '../../domain/accounts.js';
import type { AccountStore, StatementPage } from '../../engine/accounting/index.js';
import {
  entryFromRow,
  fromRow,
  holdFromRow,
  holdToRow,
  toRow,
  type AccountRow,
  type EntryRow,
  type HoldRow,
} from '../sqlite-account-store.js';
import type { PgConnection, Queryable } from './pg-connection.js';

/**
 * The accounting books in PostgreSQL. `apply` locks the account's row (SELECT ... FOR
 * UPDATE), so no other connection or instance changes it until the transaction commits;
 * the ledger's unique key makes an operation applied once never apply again.
 */
export class PgAccountStore implements AccountStore {
  constructor(private readonly connection: PgConnection) {}

  async createAccount(account: Account): Promise<void> {
    const r = toRow(account);
    try {
      await this.connection.query(
        `INSERT INTO accounts
           (id, kind, owner, members, currency, overdraft, vo, grp, funds, held, allocated, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          r.id,
          r.kind,
          r.owner,
          r.members,
          r.currency,
          r.overdraft,
          r.vo,
          r.grp,
          r.funds,
          r.held,
          r.allocated,
          r.created_at,
          r.updated_at,
        ],
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new Error(`account ${account.id} already exists`, { cause: error });
      throw error;
    }
  }

  async account(id: string): Promise<Account | undefined> {
    const { rows } = await this.connection.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
    return rows[0] && fromRow(rows[0]);
  }

  async accounts(): Promise<Account[]> {
    return (await this.connection.query<AccountRow>('SELECT * FROM accounts ORDER BY id')).rows.map(fromRow);
  }

  async hold(id: string): Promise<FundsHold | undefined> {
    const { rows } = await this.connection.query<HoldRow>('SELECT * FROM account_holds WHERE id = $1', [id]);
    return rows[0] && holdFromRow(rows[0]);
  }

  async openHolds(accountId?: string): Promise<FundsHold[]> {
    const { rows } =
      accountId === undefined
        ? await this.connection.query<HoldRow>('SELECT * FROM account_holds WHERE open = 1 ORDER BY created_at, id')
        : await this.connection.query<HoldRow>(
            'SELECT * FROM account_holds WHERE open = 1 AND account_id = $1 ORDER BY created_at, id',
            [accountId],
          );
    return rows.map(holdFromRow);
  }

  async statement(accountId: string, page: StatementPage = {}): Promise<LedgerEntry[]> {
    // LIMIT NULL: no limit.
    const { rows } = await this.connection.query<EntryRow>(
      'SELECT * FROM ledger WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [accountId, page.afterSeq ?? 0, page.limit ?? null],
    );
    return rows.map(entryFromRow);
  }

  async apply(
    accountId: string,
    key: string,
    operation: (account: Account, hold: (id: string) => FundsHold | undefined) => LedgerChange,
  ): Promise<boolean> {
    try {
      return await this.applyOnce(accountId, key, operation);
    } catch (error) {
      // The same key applied at once on another account's row: the ledger's unique key lets one through.
      if (
        (error as { code?: string; constraint?: string }).code === '23505' &&
        (error as { constraint?: string }).constraint === 'ledger_key_key'
      )
        return false;
      throw error;
    }
  }

  private applyOnce(
    accountId: string,
    key: string,
    operation: (account: Account, hold: (id: string) => FundsHold | undefined) => LedgerChange,
  ): Promise<boolean> {
    return this.connection.transaction(async (tx) => {
      const locked = (await tx.query<AccountRow>('SELECT * FROM accounts WHERE id = $1 FOR UPDATE', [accountId]))
        .rows[0];
      if ((await tx.query('SELECT 1 FROM ledger WHERE key = $1', [key])).rowCount) return false;
      if (!locked) throw new Error(`account ${accountId} does not exist`);
      const change = await withHoldsAsked(tx, accountId, (hold) => operation(fromRow(locked), hold));
      if (change.entries[0]?.key !== key)
        throw new Error(`the operation's first ledger entry must carry its key ${key}`);
      const a = toRow(change.account);
      await tx.query('UPDATE accounts SET funds = $2, held = $3, allocated = $4, updated_at = $5 WHERE id = $1', [
        a.id,
        a.funds,
        a.held,
        a.allocated,
        a.updated_at,
      ]);
      for (const hold of change.holds) {
        const h = holdToRow(hold);
        await tx.query(
          `INSERT INTO account_holds (id, account_id, amount, open, created_at, closed_at)
            VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (id) DO UPDATE
            SET amount = excluded.amount, open = excluded.open, closed_at = excluded.closed_at`,
          [h.id, h.account_id, h.amount, h.open, h.created_at, h.closed_at],
        );
      }
      for (const e of change.entries) {
        await tx.query(
          'INSERT INTO ledger (account_id, at, kind, amount, held_change, hold_id, key, note) VALUES ($1, $2, ' +
            '$3, $4, $5, $6, $7, $8)',
          [accountId, e.at.getTime(), e.kind, e.amount, e.heldChange, e.holdId ?? null, e.key, e.note],
        );
      }
      return true;
    });
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

/** Rounds after which an operation still asking for holds it was not given is a defect, not a lookup. */
const maxLookupRounds = 16;

/**
 * Runs `operation`, which looks holds up synchronously, with those of the account it asks
 * for. A run that asks for a hold not read yet is only a probe: the holds it asked for are
 * read (inside the locking transaction) and it runs again. Operations are pure (domain
 * functions of the account and its holds), so running one twice changes nothing; reading
 * every hold of the account instead grew each charge with every hold the account ever had.
 */
async function withHoldsAsked(
  tx: Queryable,
  accountId: string,
  operation: (hold: (id: string) => FundsHold | undefined) => LedgerChange,
): Promise<LedgerChange> {
  const read = new Map<string, FundsHold | undefined>();
  for (let round = 0; round < maxLookupRounds; round++) {
    const asked = new Set<string>();
    const hold = (id: string) => {
      if (!read.has(id)) asked.add(id);
      return read.get(id);
    };
    let change: LedgerChange | undefined;
    let failure: unknown;
    try {
      change = operation(hold);
    } catch (error) {
      failure = error;
    }
    if (asked.size === 0) {
      if (change === undefined) throw failure;
      return change;
    }
    const { rows } = await tx.query<HoldRow>('SELECT * FROM account_holds WHERE account_id = $1 AND id = ANY($2)', [
      accountId,
      [...asked],
    ]);
    for (const id of asked) read.set(id, undefined);
    for (const row of rows) read.set(row.id, holdFromRow(row));
  }
  throw new Error(`an operation on account ${accountId} kept asking for holds after ${maxLookupRounds} rounds`);
}
