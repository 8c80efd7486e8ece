/**
 * Execution: agreements follow their jobs on the run time; notifications and lease notices. Its ports (the executor,
 * reports, subscriptions) are in ports.ts.
 */
export { ExecutionService } from './execution-service.js';
export { LeaseNotices, leaseEnd } from './lease-notices.js';
export { NotificationService } from './notifications.js';
export type { StateNotification } from './notifications.js';
export type {
  ExecutionEvent,
  ExecutionTerms,
  HandOver,
  JobExecutor,
  ReportStore,
  ResumePoint,
  StoredReport,
  Subscription,
  SubscriptionStore,
} from './ports.js';
