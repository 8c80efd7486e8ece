import { MemoryNegotiationRepository } from '../../src/store/index.js';
import { negotiationRepositoryContract } from './negotiation-repository.suite.js';

negotiationRepositoryContract('MemoryNegotiationRepository', () => new MemoryNegotiationRepository());
