/** Audit: the hash-chained audit trail, its notes, verification and export. */
export {
  canonicalJson,
  chained,
  chainEntry,
  chainRow,
  entryOf,
  type ChainedRow,
  genesisHash,
  hashedFieldsBetween,
  unchainedEntry,
  type ChainedEntry,
  type UnchainedEntry,
} from './audit-chain.js';
export { AuditService } from './audit-service.js';
export { unsignedAgreement } from './audit-service.js';
export type { AuditReport, SignatureCheck, SignatureVerdict } from './audit-service.js';
