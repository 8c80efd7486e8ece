import { MemoryAgreementRepository } from '../../src/store/index.js';
import { agreementRepositoryContract } from './agreement-repository.suite.js';

agreementRepositoryContract('MemoryAgreementRepository', () => new MemoryAgreementRepository());
