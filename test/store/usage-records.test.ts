import { MemoryUsageRecords } from '../../src/store/memory-usage-records.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { usageRecordStoreContract } from './usage-records.suite.js';

usageRecordStoreContract('MemoryUsageRecords', () => new MemoryUsageRecords());
usageRecordStoreContract('SqliteUsageRecords', () => SqliteStore.memory().usageRecords);
