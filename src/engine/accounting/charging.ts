import { available, cents, closeHold, fromCents, mayUse, placeHold, type Account } from '../../domain/accounts.js';
import { InvalidTerms, NotAuthorized, UnknownAccount } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import type { Money } from '../../domain/negotiation.js';
import type { ServiceRequest } from '../../domain/terms.js';
import type { Clock } from '../ports.js';
import type { AccountStore } from './ports.js';

/** The funds hold of an agreement, and of a negotiation offer that holds capacity. */
export const agreementHoldId = (agreementId: string) => `agreement:${agreementId}`;
export const offerHoldId = (negotiationId: string, offerId: string) => `offer:${negotiationId}/${offerId}`;

/**
 * Holds of funds where capacity is promised: before an agreement is stored, and
 * when a negotiation offer holds capacity, the charge account its sla:ChargeAccount names
 * must exist, belong to the caller (owner or member), match the VO and group named, and
 * cover the quoted price after its overdraft policy; else the request is refused naming
 * the account, the amount needed and the amount available. A request without
 * sla:ChargeAccount is not charged here.
 */
export class Charging {
  constructor(private readonly deps: { accounts: AccountStore; clock: Clock }) {}

  /** The charge account of `request`, checked for `caller`; undefined when it names none. */
  async accountFor(request: ServiceRequest, caller: Caller): Promise<Account | undefined> {
    const charge = request.chargeAccount;
    if (!charge) return undefined;
    const account = await this.deps.accounts.account(charge.account);
    if (!account) throw new UnknownAccount(`sla:ChargeAccount: account "${charge.account}" does not exist here`);
    if (!mayUse(account, caller.identity)) {
      throw new NotAuthorized(
        `sla:ChargeAccount: ${caller.identity} may not charge account "${account.id}" (its owner and members may)`,
      );
    }
    if (charge.virtualOrganisation !== undefined && charge.virtualOrganisation !== account.virtualOrganisation) {
      throw new UnknownAccount(
        `sla:ChargeAccount: account "${account.id}" does not belong to virtual organisation "` +
          `${charge.virtualOrganisation}"` +
          `${account.virtualOrganisation ? ` (it belongs to "${account.virtualOrganisation}")` : ''}`,
      );
    }
    if (charge.group !== undefined && charge.group !== account.group) {
      throw new UnknownAccount(
        `sla:ChargeAccount: account "${account.id}" does not belong to group "${charge.group}"` +
          `${account.group ? ` (it belongs to "${account.group}")` : ''}`,
      );
    }
    return account;
  }

  /** What the request's charge account can still cover, checked for `caller`; undefined when it names none. */
  async budget(
    request: ServiceRequest,
    caller: Caller,
  ): Promise<{ account: string; available: number; currency: string } | undefined> {
    const account = await this.accountFor(request, caller);
    return account && { account: account.id, available: available(account) / 100, currency: account.currency };
  }

  /**
   * Holds `price` on the request's charge account under `holdId`; resolves to a function
   * that releases it again (for a flow that fails later), or undefined when nothing was held.
   */
  async hold(
    holdId: string,
    request: ServiceRequest,
    price: Money,
    caller: Caller,
    note: string,
  ): Promise<(() => Promise<void>) | undefined> {
    const account = await this.accountFor(request, caller);
    if (!account) return undefined;
    if (price.currency !== account.currency) {
      throw new InvalidTerms(
        `sla:ChargeAccount: account "${account.id}" is kept in ${account.currency}, the price is in ${price.currency}`,
      );
    }
    if (price.amount <= 0) return undefined;
    const amount = cents(price.amount, 'the price');
    const key = `hold:${holdId}`;
    await this.deps.accounts.apply(account.id, key, (a) =>
      placeHold(a, holdId, amount, this.deps.clock.now(), key, note),
    );
    return () => this.release(account.id, holdId, 'the request was not completed');
  }

  /** Ends an open hold without charging it (idempotent). */
  async release(accountId: string, holdId: string, note: string): Promise<void> {
    await this.close(accountId, holdId, undefined, note);
  }

  /** Ends an open hold, charging `charge` of it (at most the hold); idempotent by hold. */
  async close(
    accountId: string,
    holdId: string,
    charge: { kind: 'charge' | 'fee'; amount: Money } | undefined,
    note: string,
  ): Promise<void> {
    const key = `close:${holdId}`;
    await this.deps.accounts.apply(accountId, key, (a, hold) => {
      const open = hold(holdId);
      if (!open) throw new Error(`hold ${holdId} does not exist`);
      const amount = charge && charge.amount.amount > 0 ? Math.round(charge.amount.amount * 100) : 0;
      return closeHold(
        a,
        open,
        charge && amount > 0 ? { kind: charge.kind, amount } : undefined,
        this.deps.clock.now(),
        key,
        note,
      );
    });
  }
}

export function money(value: number, currency: string): Money {
  return { amount: fromCents(value), currency };
}
