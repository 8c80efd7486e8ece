import { MemorySeenSignatures } from '../../src/store/memory-seen-signatures.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { seenSignaturesContract } from './seen-signatures.suite.js';

seenSignaturesContract('MemorySeenSignatures', () => new MemorySeenSignatures());
seenSignaturesContract('SqliteSeenSignatures', () => SqliteStore.memory().seenSignatures);
