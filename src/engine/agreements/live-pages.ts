import { liveStates } from '../../domain/agreement-state-machine.js';
import type { Agreement } from '../../domain/agreement.js';
import type { AgreementFilter, AgreementRepository, ListPage } from '../ports.js';

/** Agreements per page at start-up: small enough that a page's garbage is a few megabytes. */
export const livePageSize = 2000;

/**
 * Every agreement `filter` selects, page by page in list order (creation time, then id), so
 * reading them all never holds more than a page at once.
 */
export async function* agreementPages(
  repository: Pick<AgreementRepository, 'list'>,
  filter: Omit<AgreementFilter, 'after' | 'limit'> = {},
  pageSize = livePageSize,
): AsyncGenerator<Agreement[]> {
  let after: ListPage['after'];
  for (;;) {
    const page = await repository.list({ ...filter, limit: pageSize, ...(after ? { after } : {}) });
    if (page.length > 0) yield page;
    const last = page.at(-1);
    if (!last || page.length < pageSize) return;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/**
 * Every live agreement without its document, page by page. Start-up reads them this way:
 * 100,000 read at once held about 500 MB at the peak only to be thrown away once the plan
 * and the watches were rebuilt (docs/benchmarks.md).
 */
export function liveAgreementPages(
  repository: Pick<AgreementRepository, 'list'>,
  pageSize = livePageSize,
): AsyncGenerator<Agreement[]> {
  return agreementPages(repository, { state: liveStates, withoutDocument: true }, pageSize);
}
