import { MemoryAgreementRepository, MemoryAuditLog, MemoryNegotiationRepository } from '../../src/store/index.js';
import { auditLogContract } from './audit-log.suite.js';

auditLogContract('MemoryAuditLog', () => {
  const audit = new MemoryAuditLog();
  return {
    audit,
    agreements: new MemoryAgreementRepository(audit),
    negotiations: new MemoryNegotiationRepository(audit),
    close: async () => {},
  };
});
