/** Who acts. Until security is configured every caller is the anonymous party. */
export interface Caller {
  identity: string;
  isAdmin: boolean;
}

export const anonymousCaller: Caller = { identity: 'anonymous', isAdmin: false };

/**
 * What belongs to a party: its initiator, and the identities the initiator named as eligible (Hovestadt 2006, section
 * 2.3.2.1).
 */
export interface Owned {
  initiator: string;
  eligibleParties?: string[];
}

/** Operators act on everything; other callers only on what they initiated or were named eligible for. */
export function mayActOn(caller: Caller, owned: Owned): boolean {
  return (
    caller.isAdmin || owned.initiator === caller.identity || (owned.eligibleParties?.includes(caller.identity) ?? false)
  );
}
