import type { MigrationRecord } from '../../domain/agreement.js';
import { formatCharge } from '../../domain/compensation.js';
import type { Money } from '../../domain/negotiation.js';
import { peerRequestFor } from './migration-jobs.js';
import type { Peer } from './peers.js';
import type { PeerQuote } from './ports.js';
import type { MigrationControllerDeps, MigrationCase, MigrationRun } from './migration-model.js';
import { conclude } from './migration-cases.js';

export interface Quoted {
  peer: Peer;
  quote: PeerQuote;
}

/**
 * Every target asked at once; the answers in price order (cheapest first, then the
 * targets' order). Offers in another currency than the site's cannot be weighed: they are
 * declined and noted as refusals.
 */
export async function quoteAll(c: MigrationCase, run: MigrationRun, deps: MigrationControllerDeps): Promise<Quoted[]> {
  c.report.offers = [];
  const answers = await Promise.all(
    c.targets.map(async (peer) => ({
      peer,
      answer: await deps.providers.quote(peer, peerRequestFor(c.job, peer.bandwidthMBps, run.now, deps.providerName)),
    })),
  );
  const quoted: Quoted[] = [];
  for (const { peer, answer } of answers) {
    if (!answer.quoted) {
      c.report.offers.push({ peer: peer.name, refused: answer.reason });
      continue;
    }
    const currency = answer.quote.price.currency;
    const penaltyCurrency = run.penalties.get(c.job.agreementId)?.currency ?? deps.currency;
    if (currency && currency !== penaltyCurrency) {
      c.report.offers.push({
        peer: peer.name,
        refused: `${peer.name} priced its offer in ${currency}, which cannot be weighed against ${penaltyCurrency}`,
      });
      await deps.providers.decline(peer, answer.quote).catch(() => undefined);
      continue;
    }
    c.report.offers.push({ peer: peer.name, price: answer.quote.price });
    quoted.push({ peer, quote: answer.quote });
  }
  return quoted.sort((a, b) => a.quote.price.amount - b.quote.price.amount);
}

export async function declineAll(
  quotes: readonly Quoted[],
  deps: MigrationControllerDeps,
  c: MigrationCase,
): Promise<void> {
  for (const { peer, quote } of quotes) {
    try {
      await deps.providers.decline(peer, quote);
    } catch (error) {
      (c.report.warnings ??= []).push(
        `declining the offer of ${peer.name} failed: ${(error as Error).message}; its hold expires by itself`,
      );
    }
  }
}

/**
 * Tries the affordable offers cheapest first until one works; every offer not taken is
 * declined (those accepted and then ended after a failed transfer need not be).
 * `worth` says what the move saves, for the report.
 */
export async function migrateToCheapest(
  c: MigrationCase,
  affordable: readonly Quoted[],
  all: readonly Quoted[],
  run: MigrationRun,
  deps: MigrationControllerDeps,
  worth: { penalty: Money; text: string },
): Promise<void> {
  const failures: string[] = [];
  const accepted = new Set<Quoted>();
  let taken: Quoted | undefined;
  for (const offer of affordable) {
    try {
      await migrateTo(c, offer, run, deps, worth, () => accepted.add(offer));
      taken = offer;
      break;
    } catch (error) {
      failures.push(`${offer.peer.name}: ${(error as Error).message}`);
    }
  }
  await declineAll(
    all.filter((q) => q !== taken && !accepted.has(q)),
    deps,
    c,
  );
  if (!taken) conclude(c, 'failed', `not migrated: every affordable offer failed (${failures.join('; ')})`);
  else if (failures.length > 0)
    (c.report.warnings ??= []).push(...failures.map((f) => `a cheaper migration failed first: ${f}`));
}

/** Accept, send the checkpoint, record, release. A failed transfer ends the new agreement again. */
export async function migrateTo(
  c: MigrationCase,
  { peer, quote }: Quoted,
  run: MigrationRun,
  deps: MigrationControllerDeps,
  worth: { penalty: Money; text: string },
  onAccepted: () => void,
): Promise<void> {
  const id = c.job.agreementId;
  const remote = await deps.providers.accept(peer, quote);
  onAccepted();
  try {
    const checkpoint = await deps.checkpointOf(id);
    if (checkpoint) await deps.providers.transferCheckpoint(peer, remote.agreementId, checkpoint);
  } catch (error) {
    await deps.providers
      .terminate(peer, remote, `the migration of agreement ${id} failed: ${(error as Error).message}`)
      .catch(() => undefined);
    throw error;
  }
  c.done = true;
  Object.assign(c.report, {
    migrated: true,
    peer: peer.name,
    remoteAgreementId: remote.agreementId,
    price: quote.price,
  });
  delete c.report.reason;
  c.report.detail =
    `migrated to ${peer.name} (agreement ${remote.agreementId}) for ` + `${formatCharge(quote.price)}, ${worth.text}`;
  const record: MigrationRecord = {
    peer: peer.name,
    remoteAgreementId: remote.agreementId,
    remoteAddress: remote.address,
    at: run.now,
    price: quote.price,
    penalty: worth.penalty,
  };
  for (const [what, action] of [
    ['recording the migration on the agreement', () => deps.record(id, record)],
    ['releasing the job here', () => deps.release(id)],
  ] as const) {
    try {
      await action();
    } catch (error) {
      (c.report.warnings ??= []).push(`${what} failed: ${(error as Error).message}`);
    }
  }
}

export function solvedWithout(
  assumed: readonly MigrationCase[],
  problems: ReadonlySet<string>,
  deps: MigrationControllerDeps,
): string[] {
  const after = new Set(deps.schedule.problematicWithout(assumed.map((c) => c.job.agreementId)).map((p) => p.id));
  return [...problems].filter((id) => !after.has(id));
}

export function sum(amounts: readonly Money[], currency: string): Money {
  return { amount: Math.round(amounts.reduce((total, m) => total + m.amount, 0) * 100) / 100, currency };
}
