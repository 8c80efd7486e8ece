import { InvalidTerms } from '../../domain/errors.js';
import type { ServiceRequest } from '../../domain/terms.js';

/**
 * Terms the server refuses rather than parse and ignore (docs/terms.md, "Where each term
 * is enforced").
 */

/** A bid buys spare capacity without a time promise; a job with one is priced by the curve (docs/pricing.md). */
export function refuseBidWithTimePromise(request: ServiceRequest): void {
  if (request.bid !== undefined && (request.window || request.deadline || request.interactive)) {
    throw new InvalidTerms(
      'sla:Bid is for best-effort and background work (no window, deadline or sla:Interactive): a job with a ' +
        "time promise is priced by the site's price curve (docs/pricing.md)",
    );
  }
}

/**
 * CreateAgreement and CreatePendingAgreement make a binding agreement (Hovestadt 2006, section
 * 3.1): a non-binding quote or a preparatory hold is what negotiation is for.
 */
export function requireBindingRequest(request: ServiceRequest): void {
  if (request.requestKind === 'NonBinding') {
    throw new InvalidTerms(
      'sla:RequestKind NonBinding asks for a quote without obligation, but CreateAgreement makes a binding ' +
        'agreement: send an Advisory offer to the NegotiationFactory for start slots and prices, or make the ' +
        'request Binding',
    );
  }
  if (request.requestKind === 'Preparatory') {
    throw new InvalidTerms(
      'sla:RequestKind Preparatory asks to hold capacity for a fee, but CreateAgreement makes a binding ' +
        'agreement: send a Solicited offer in a negotiation to hold capacity, then accept it, or make the ' +
        'request Binding',
    );
  }
}
