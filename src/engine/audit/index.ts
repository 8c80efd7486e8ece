/** Audit: the hash-chained audit trail, its notes, verification and export. */
export { canonicalJson, chainEntry, type ChainedEntry } from './audit-chain.js';
export { AuditService } from './audit-service.js';
export type { AuditReport, SignatureCheck } from './audit-service.js';
