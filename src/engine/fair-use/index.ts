export { FairUse, openNegotiations, type BookingKind, type FairUseStanding } from './fair-use.js';
