import type { Agreement } from './agreement.js';

/**
 * When an agreement ends unless something happens first: its wsag:ExpirationTime, and for a
 * Pending one also the end of the time the provider has to decide (`pendingSeconds` from its
 * creation), whichever is sooner.
 */
export function endOf(
  agreement: Pick<Agreement, 'state' | 'expiresAt' | 'createdAt'>,
  pendingSeconds?: number,
): Date | undefined {
  const decideBy =
    agreement.state === 'Pending' && pendingSeconds !== undefined
      ? new Date(agreement.createdAt.getTime() + pendingSeconds * 1000)
      : undefined;
  if (!agreement.expiresAt) return decideBy;
  return decideBy && decideBy < agreement.expiresAt ? decideBy : agreement.expiresAt;
}
