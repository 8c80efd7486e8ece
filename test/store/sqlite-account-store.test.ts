import { SqliteStore } from '../../src/store/index.js';
import { accountStoreContract } from './account-store.suite.js';

accountStoreContract('SqliteAccountStore', () => SqliteStore.memory().accounts);
