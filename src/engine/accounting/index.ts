/**
 * Accounting: accounts and holds of funds, settlement, usage records, VO usage SLAs. Its ports (the books, usage
 * records) are in ports.ts.
 */
export { AccountService } from './account-service.js';
export type { AccountView, NewAccount } from './account-service.js';
export { Charging } from './charging.js';
export { FollowedNegotiations } from './followed-negotiations.js';
export type { AccountStore, StatementPage, StoredUsageRecord, UsageRecordStore } from './ports.js';
export { Settlement } from './settlement.js';
export { UsageRecording } from './usage-recording.js';
export { VoUsage } from './vo-usage.js';
export { VerdictCorrections } from './verdict-corrections.js';
export type { CorrectionOutcome } from './verdict-corrections.js';
