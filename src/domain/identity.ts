/** Who acts. Until security is configured every caller is the anonymous party. */
export interface Caller {
  identity: string;
  isAdmin: boolean;
}

export const anonymousCaller: Caller = { identity: 'anonymous', isAdmin: false };
