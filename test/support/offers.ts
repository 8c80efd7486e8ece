import { CreationConstraintViolation } from '../../src/domain/errors.js';
import { withXml } from '../../src/xml/libxml.js';
import { readOffer, type XmlReceivedOffer } from '../../src/xml/offer-reader.js';

/** Parses an AgreementOffer document the way CreateAgreement does (after schema validation). */
export function receivedOffer(offerXml: string): XmlReceivedOffer {
  return withXml(offerXml, 'offer', (doc) => readOffer(doc.root));
}

/** The CreationConstraintViolation message a check throws, or undefined when the offer passes. */
export function violationOf(check: () => void): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    // The verdict as checked (the fault's detail); its message says the same in plain words.
    if (error instanceof CreationConstraintViolation) return error.technicalDetail ?? error.message;
    throw error;
  }
}
