/** Negotiation: WS-Agreement Negotiation rounds, preparatory holds and their expiry. */
export { NegotiationService } from './negotiation-service.js';
