import type { Charge } from './compensation.js';
import { InvalidStateTransition, InvalidTerms, UnknownResource } from './errors.js';
import type { PostRuntimeReport, ReportAdditions, VerdictCorrection } from './post-runtime-report.js';

/**
 * An operator's correction of a guarantee verdict the server got wrong (a violation
 * recorded for a gap the plan itself caused, before preparation was planned): the term
 * becomes Fulfilled, its penalty is withdrawn, and the report keeps what was corrected, by
 * whom, when and why, next to the original explanation. Nothing is erased.
 */
export type CorrectedReport = PostRuntimeReport & ReportAdditions;

/** The longest reason kept: a sentence or two, not a file. */
export const maxReasonLength = 1000;

/** The reason as it is kept: trimmed, one line; refused when empty or too long. */
export function correctionReason(reason: unknown): string {
  const text = typeof reason === 'string' ? reason.replace(/\s+/g, ' ').trim() : '';
  if (text === '')
    throw new InvalidTerms(
      'a correction needs a reason: say why the violation was false (it is kept in the audit trail and the report)',
    );
  if (text.length > maxReasonLength)
    throw new InvalidTerms(`the reason is ${text.length} characters long; at most ${maxReasonLength}`);
  return text;
}

/** The correction already made to `term`, if any. */
export function correctionOf(report: CorrectedReport, term: string): VerdictCorrection | undefined {
  return report.corrections?.find((c) => c.term === term);
}

/**
 * `report` with `term`'s violation corrected to Fulfilled: its penalty withdrawn (kept on the
 * correction), the totals summed again. Refused when the report has no such term, or the
 * term was not Violated.
 */
export function correctVerdict(
  report: CorrectedReport,
  term: string,
  by: { by: string; at: string; reason: string },
): { report: CorrectedReport; correction: VerdictCorrection } {
  const judged = report.guarantees.find((g) => g.term === term);
  if (!judged) {
    const names = report.guarantees.map((g) => g.term);
    throw new UnknownResource(
      `agreement "${report.agreementId}" has no judged guarantee term "${term}"` +
        `${names.length ? `; its terms: ${names.join(', ')}` : ' (its terms were not judged)'}`,
    );
  }
  if (judged.state !== 'Violated')
    throw new InvalidStateTransition(
      `guarantee term "${term}" of agreement "${report.agreementId}" is ${judged.state}: only a violation can ` +
        `be corrected`,
    );
  const correction: VerdictCorrection = {
    term,
    from: 'Violated',
    to: 'Fulfilled',
    ...by,
    ...(judged.penalty ? { withdrawnPenalty: judged.penalty } : {}),
  };
  const guarantees = report.guarantees.map((g) => {
    if (g !== judged) return g;
    const { penalty: _withdrawn, ...rest } = g;
    return {
      ...rest,
      state: 'Fulfilled',
      explanation: `${g.explanation} [corrected to Fulfilled by ${by.by} at ${by.at}: ${by.reason}]`,
    };
  });
  return {
    report: {
      ...report,
      guarantees,
      totals: { ...report.totals, penalties: subtract(report.totals.penalties, judged.penalty) },
      corrections: [...(report.corrections ?? []), correction],
    },
    correction,
  };
}

/** What `charge` added to `totals`, taken out again line by line in each line's currency. */
function subtract(
  totals: PostRuntimeReport['totals']['penalties'],
  charge: Charge | undefined,
): PostRuntimeReport['totals']['penalties'] {
  const sums = new Map(totals.map((m) => [m.currency, m.amount]));
  for (const line of charge?.lines ?? [])
    sums.set(line.currency, Math.round(((sums.get(line.currency) ?? 0) - line.amount) * 100) / 100);
  return [...sums].filter(([, amount]) => amount > 0).map(([currency, amount]) => ({ amount, currency }));
}

/** What of `charge` is in `currency`, in cents (what the books credited for it). */
export function chargeCentsIn(charge: Charge | undefined, currency: string): number {
  return (charge?.lines ?? [])
    .filter((l) => l.currency === currency)
    .reduce((sum, l) => sum + Math.round(l.amount * 100), 0);
}
