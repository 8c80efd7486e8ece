export { FairUse, type BookingKind } from './fair-use.js';
