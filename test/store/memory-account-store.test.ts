import { MemoryAccountStore } from '../../src/store/index.js';
import { accountStoreContract } from './account-store.suite.js';

accountStoreContract('MemoryAccountStore', () => new MemoryAccountStore());
