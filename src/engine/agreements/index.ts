/**
 * Agreements: CreateAgreement and its flow, reading and ending agreements, pending decisions, reservations used,
 * expiry.
 */
export { ObservedAgreementRepository } from './agreement-changes.js';
export type { AgreementChange } from './agreement-changes.js';
export { AgreementExpiry } from './agreement-expiry.js';
export { AgreementFactory } from './agreement-factory.js';
export { AgreementService } from './agreement-service.js';
export { ReservationUse } from './reservation-use.js';
export { agreementPages, liveAgreementPages } from './live-pages.js';
