import { MemoryIdempotencyRecords } from '../../src/store/memory-idempotency-records.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { idempotencyRecordsContract } from './idempotency-records.suite.js';

idempotencyRecordsContract('MemoryIdempotencyRecords', () => new MemoryIdempotencyRecords());
idempotencyRecordsContract('SqliteIdempotencyRecords', () => SqliteStore.memory().idempotency);
