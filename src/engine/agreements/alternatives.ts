import { CreationConstraintViolation } from '../../domain/errors.js';
import type { AgreementTemplate } from '../../domain/template.js';
import type { ReceivedOffer, TemplateCatalog } from '../ports.js';

/**
 * "alternative 2 of 3 (Nodes, Window): " for messages about one alternative of an offer; empty without alternatives.
 */
export function alternativeLabel(offer: ReceivedOffer): string {
  const a = offer.alternative;
  return a ? `alternative ${a.index} of ${a.count} (${a.terms.join(', ')}): ` : '';
}

/**
 * The offer's alternatives (ExactlyOne / OneOrMore) that meet the template's creation
 * constraints, in the initiator's order, and why the others do not. An offer without
 * alternatives fails with its own violation; if no alternative passes, the fault lists each.
 */
export function alternativesMeetingConstraints(
  templates: TemplateCatalog,
  template: AgreementTemplate,
  offer: ReceivedOffer,
): { candidates: ReceivedOffer[]; reasons: string[] } {
  const alternatives = offer.alternatives();
  const candidates: ReceivedOffer[] = [];
  const reasons: string[] = [];
  for (const alternative of alternatives) {
    try {
      templates.checkCreationConstraints(template, alternative);
      candidates.push(alternative);
    } catch (error) {
      if (alternatives.length === 1 || !(error instanceof CreationConstraintViolation)) throw error;
      reasons.push(`${alternativeLabel(alternative)}${error.message}`);
    }
  }
  if (candidates.length === 0) {
    throw new CreationConstraintViolation(
      `no alternative meets the template's creation constraints: ${reasons.join('; ')}`,
    );
  }
  return { candidates, reasons };
}
