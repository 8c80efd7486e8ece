export { MemoryAgreementRepository } from './memory-agreement-repository.js';
export { SqliteAgreementRepository } from './sqlite-agreement-repository.js';
