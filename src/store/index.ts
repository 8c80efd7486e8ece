export { MemoryAgreementRepository } from './memory-agreement-repository.js';
export { MemoryAuditLog } from './memory-audit-log.js';
export { MemoryNegotiationRepository } from './memory-negotiation-repository.js';
export { SqliteAgreementRepository } from './sqlite-agreement-repository.js';
export { SqliteAuditLog } from './sqlite-audit-log.js';
export { SqliteConnection } from './sqlite-connection.js';
export { SqliteNegotiationRepository } from './sqlite-negotiation-repository.js';
export { SqliteStore } from './sqlite-store.js';
