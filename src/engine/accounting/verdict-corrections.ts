import { formatMoney, withdrawPenaltyCredit } from '../../domain/accounts.js';
import type { Agreement } from '../../domain/agreement.js';
import { InvalidStateTransition, NotAuthorized, UnknownResource } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import { reportText, type VerdictCorrection } from '../../domain/post-runtime-report.js';
import { chargeCentsIn, correctionOf, correctionReason, correctVerdict } from '../../domain/verdict-correction.js';
import type { AgreementService } from '../agreements/agreement-service.js';
import type { ReportStore, StoredReport } from '../execution/ports.js';
import { KeyedLock } from '../keyed-lock.js';
import type { AgreementRepository, Clock, JsonValue } from '../ports.js';
import type { AccountStore } from './ports.js';
import type { Settlement } from './settlement.js';

/** What a correction did: the term's new state, the correction as kept, and what the books took back. */
export interface CorrectionOutcome {
  agreementId: string;
  term: string;
  state: 'Fulfilled';
  correction: VerdictCorrection;
  /** The compensating ledger entry, when the penalty had been credited to a charge account. */
  withdrawn?: { account: string; amount: number; currency: string };
}

interface Correcting {
  agreement: Agreement;
  term: string;
  reason: string;
  caller: Caller;
  report?: StoredReport;
  correction?: VerdictCorrection;
  withdrawn?: CorrectionOutcome['withdrawn'];
}

/**
 * An operator corrects a violation the server recorded falsely (docs/operations.md,
 * "Correcting a false violation"). The steps run in order, each safe to run again, so a
 * correction cut short by a crash is finished by sending it again:
 * 0. the agreement must be Complete with its post-runtime report, the term not corrected yet;
 * 1. the agreement is settled first, so the penalty is in the books before it is taken back;
 * 2. the post-runtime report records the correction (the term Fulfilled, the penalty
 *    withdrawn, the totals summed again);
 * 3. the charge account gets one compensating entry (`penalty-withdrawal`, keyed by the
 *    agreement and term), exactly the penalty it was credited;
 * 4. the agreement's guarantee term becomes Fulfilled, with a `guarantee-corrected` entry in
 *    its audit trail (who, why, what was withdrawn); subscribers hear of it as of any change.
 */
export class VerdictCorrections {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly deps: {
      repository: Pick<AgreementRepository, 'get'>;
      agreements: Pick<AgreementService, 'change'>;
      reports: ReportStore;
      accounts: AccountStore;
      settlement: Pick<Settlement, 'agreementChanged'>;
      clock: Clock;
    },
  ) {}

  async correct(agreementId: string, term: string, reason: unknown, caller: Caller): Promise<CorrectionOutcome> {
    if (!caller.isAdmin)
      throw new NotAuthorized(`only operators (WSAG_ADMINS) correct guarantee verdicts; ${caller.identity} is not one`);
    const why = correctionReason(reason);
    return this.lock.run(agreementId, async () => {
      const run: Correcting = { agreement: await this.completed(agreementId), term, reason: why, caller };
      for (const step of [this.readReport, this.settleFirst, this.reviseReport, this.compensate, this.recordVerdict])
        await step.call(this, run);
      return {
        agreementId,
        term,
        state: 'Fulfilled',
        correction: run.correction as VerdictCorrection,
        ...(run.withdrawn ? { withdrawn: run.withdrawn } : {}),
      };
    });
  }

  private async completed(id: string): Promise<Agreement> {
    const agreement = await this.deps.repository.get(id);
    if (!agreement) throw new UnknownResource(`no agreement with id "${id}"`);
    if (agreement.state !== 'Complete') {
      throw new InvalidStateTransition(
        `agreement "${id}" is ${agreement.state}: only the verdicts of a Complete agreement (its post-runtime ` +
          `report written) can be corrected`,
      );
    }
    return agreement;
  }

  private async readReport(run: Correcting): Promise<void> {
    const stored = await this.deps.reports.read(run.agreement.id);
    if (!stored)
      throw new UnknownResource(
        `agreement "${run.agreement.id}" has no post-runtime report: nothing was judged, so there is no ` +
          `verdict to correct`,
      );
    const done = correctionOf(stored.report, run.term);
    if (done && run.agreement.guaranteeTerms.some((g) => g.termName === run.term && g.state === 'Fulfilled')) {
      throw new InvalidStateTransition(
        `guarantee term "${run.term}" of agreement "${run.agreement.id}" was corrected already, by ${done.by} ` +
          `at ${done.at}: ${done.reason}`,
      );
    }
    run.report = stored;
  }

  private async settleFirst(run: Correcting): Promise<void> {
    await this.deps.settlement.agreementChanged(run.agreement);
  }

  private async reviseReport(run: Correcting): Promise<void> {
    const stored = run.report as StoredReport;
    const earlier = correctionOf(stored.report, run.term);
    if (earlier) {
      // Sent again after a crash between the report and the agreement: finish with the correction already kept.
      run.correction = earlier;
      return;
    }
    const corrected = correctVerdict(stored.report, run.term, {
      by: run.caller.identity,
      at: this.deps.clock.now().toISOString(),
      reason: run.reason,
    });
    run.correction = corrected.correction;
    await this.deps.reports.save(run.agreement.id, { report: corrected.report, text: reportText(corrected.report) });
  }

  private async compensate(run: Correcting): Promise<void> {
    const accountId = run.agreement.request.chargeAccount?.account;
    const account = accountId === undefined ? undefined : await this.deps.accounts.account(accountId);
    const amount = account ? chargeCentsIn(run.correction?.withdrawnPenalty, account.currency) : 0;
    if (!account || amount <= 0) return;
    const key = `correction:${run.agreement.id}/${run.term}`;
    const note =
      `agreement ${run.agreement.id}: violation of ${run.term} corrected by ` +
      `${run.caller.identity}, penalty of ${formatMoney(amount, account.currency)} withdrawn: ${run.reason}`;
    await this.deps.accounts.apply(account.id, key, (a) =>
      withdrawPenaltyCredit(a, amount, this.deps.clock.now(), key, note),
    );
    run.withdrawn = { account: account.id, amount: amount / 100, currency: account.currency };
  }

  private async recordVerdict(run: Correcting): Promise<void> {
    const correction = run.correction as VerdictCorrection;
    const details: Record<string, JsonValue> = {
      term: run.term,
      from: 'Violated',
      guaranteeState: 'Fulfilled',
      reason: correction.reason,
    };
    if (correction.withdrawnPenalty)
      details.withdrawnPenalty = {
        amount: correction.withdrawnPenalty.amount,
        currency: correction.withdrawnPenalty.currency,
      };
    await this.deps.agreements.change(
      run.agreement.id,
      (a) => ({
        ...a,
        guaranteeTerms: a.guaranteeTerms.map((g) => (g.termName === run.term ? { ...g, state: 'Fulfilled' } : g)),
        updatedAt: this.deps.clock.now(),
      }),
      { actor: run.caller.identity, action: 'guarantee-corrected', details },
    );
  }
}
