import { cents, settle, transferHold } from '../../domain/accounts.js';
import type { Agreement } from '../../domain/agreement.js';
import type { Money, Negotiation } from '../../domain/negotiation.js';
import type { PriceList } from '../../domain/pricing.js';
import { usageCharge } from '../../domain/usage.js';
import type { AgreementRepository, Clock, NegotiationRepository } from '../ports.js';
import type { AccountStore } from './ports.js';
import type { ReportStore, StoredReport } from '../execution/ports.js';
import { agreementHoldId, type Charging, offerHoldId } from './charging.js';

const live = new Set(['Pending', 'Observed', 'PendingAndTerminating', 'ObservedAndTerminating']);

/**
 * The books follow what was promised and what happened. Holds are placed in
 * the flows (Charging); everything after follows the stored state, once per key, so a
 * change seen twice, or again after a crash, changes the books once:
 * - a negotiation offer's hold that expired or was released is closed, its preparatory
 *   fee charged (as the negotiation recorded it);
 * - an agreement made from a negotiated offer takes the offer's funds over (transfer);
 * - an agreement that ends is settled in one step: Complete at actual usage (the nodes
 *   for the time the job ran; a reservation for its window), penalties credited and
 *   rewards charged as its post-runtime report says; Terminated at what it used until
 *   then; otherwise released.
 * `reconcile` does the same for every open hold at start-up, and releases holds whose
 * agreement or offer was never stored (a crash between hold and store).
 */
export class Settlement {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      accounts: AccountStore;
      charging: Charging;
      agreements: Pick<AgreementRepository, 'get' | 'list'>;
      negotiations: Pick<NegotiationRepository, 'get'>;
      reports: ReportStore;
      prices: PriceList;
      clock: Clock;
    },
  ) {}

  /**
   * Follows a stored change (the repository's onChange, a negotiation saved); failures go to `onError`, and the next
   * start-up settles what they left.
   */
  follow(work: () => Promise<void>, onError: (error: unknown) => void): void {
    const running = work()
      .catch(onError)
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  /** Resolves once every change followed so far is in the books (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** `report` reads the agreement's post-runtime report (a caller that has it already passes it on). */
  async agreementChanged(
    agreement: Agreement,
    report: () => Promise<StoredReport | undefined> = () => this.deps.reports.read(agreement.id),
  ): Promise<void> {
    const accountId = agreement.request.chargeAccount?.account;
    const account = accountId === undefined ? undefined : await this.deps.accounts.account(accountId);
    if (!account) return;
    const holdId = agreementHoldId(agreement.id);
    if (agreement.origin && !(await this.deps.accounts.hold(holdId))) {
      const from = offerHoldId(agreement.origin.negotiationId, agreement.origin.offerId);
      const offerHold = await this.deps.accounts.hold(from);
      if (offerHold?.open) {
        const key = `transfer:${from}`;
        const amount = (agreement.price?.amount ?? 0) > 0 ? cents(agreement.price?.amount ?? 0, 'the price') : 0;
        await this.deps.accounts.apply(offerHold.accountId, key, (a, hold) =>
          transferHold(
            a,
            hold(from) ?? offerHold,
            holdId,
            amount,
            this.deps.clock.now(),
            key,
            `agreement ${agreement.id} from negotiated offer ${agreement.origin?.offerId}`,
          ),
        );
      }
    }
    if (live.has(agreement.state)) return;
    const hold = await this.deps.accounts.hold(holdId);
    const ran =
      agreement.state === 'Complete' || agreement.state === 'Terminated' ? (await report())?.report : undefined;
    const inCurrency = (list: readonly Money[] | undefined) =>
      (list ?? [])
        .filter((m) => m.currency === account.currency)
        .reduce((sum, m) => sum + Math.round(m.amount * 100), 0);
    const used = usageCharge(agreement, ran?.happened, this.deps.prices);
    const amounts = {
      charge: used ? Math.round(used.amount * 100) : 0,
      penalties: agreement.state === 'Complete' ? inCurrency(ran?.totals.penalties) : 0,
      rewards: agreement.state === 'Complete' ? inCurrency(ran?.totals.rewards) : 0,
    };
    if (!hold?.open && amounts.penalties === 0 && amounts.rewards === 0) return;
    const key = `settle:${agreement.id}`;
    await this.deps.accounts.apply(account.id, key, (a, h) =>
      settle(a, h(holdId), amounts, this.deps.clock.now(), key, `agreement ${agreement.id} ${agreement.state}`),
    );
  }

  async negotiationChanged(negotiation: Negotiation): Promise<void> {
    for (const offer of negotiation.offers) {
      const state = offer.hold?.state;
      if (!state || state === 'Held' || state === 'Confirmed' || !offer.request.chargeAccount) continue;
      const holdId = offerHoldId(negotiation.id, offer.offerId);
      const hold = await this.deps.accounts.hold(holdId);
      if (!hold?.open) continue;
      const fee = offer.hold?.charged;
      await this.deps.charging.close(
        hold.accountId,
        holdId,
        fee && fee.amount > 0 ? { kind: 'fee', amount: fee } : undefined,
        `offer ${offer.offerId} ${state.toLowerCase()}${fee && fee.amount > 0 ? ': preparatory fee' : ''}`,
      );
    }
  }

  /** Start-up: every open hold is brought in line with what it is for; returns how many were settled or released. */
  async reconcile(): Promise<number> {
    let changed = 0;
    for (const hold of await this.deps.accounts.openHolds()) {
      const [kind, rest] = [hold.id.slice(0, hold.id.indexOf(':')), hold.id.slice(hold.id.indexOf(':') + 1)];
      if (kind === 'agreement') {
        const agreement = await this.deps.agreements.get(rest);
        if (agreement) await this.agreementChanged(agreement);
        else
          await this.deps.charging.release(
            hold.accountId,
            hold.id,
            'its agreement was never stored (the server stopped in between)',
          );
      } else if (kind === 'offer') {
        const [negotiationId, offerId] = rest.split('/') as [string, string];
        const negotiation = await this.deps.negotiations.get(negotiationId);
        const offer = negotiation?.offers.find((o) => o.offerId === offerId);
        if (!negotiation || !offer?.hold)
          await this.deps.charging.release(
            hold.accountId,
            hold.id,
            'its offer was never stored (the server stopped in between)',
          );
        else if (offer.hold.state === 'Confirmed') await this.confirmed(negotiation, offerId, hold.accountId, hold.id);
        else await this.negotiationChanged(negotiation);
      }
      if (!(await this.deps.accounts.hold(hold.id))?.open) changed++;
    }
    return changed;
  }

  /** A confirmed offer's funds go to its agreement; if none was stored, they are released. */
  private async confirmed(negotiation: Negotiation, offerId: string, accountId: string, holdId: string): Promise<void> {
    const made = (
      await this.deps.agreements.list({ after: { createdAt: new Date(negotiation.createdAt.getTime() - 1), id: '' } })
    ).find((a) => a.origin?.negotiationId === negotiation.id && a.origin.offerId === offerId);
    if (made) await this.agreementChanged(made);
    else await this.deps.charging.release(accountId, holdId, 'its offer was confirmed but no agreement was stored');
  }
}
