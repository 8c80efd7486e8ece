import type { XmlElement } from 'libxml2-wasm';
import { ns } from '../xml/namespaces.js';
import { readOffer, type XmlReceivedOffer } from '../xml/offer-reader.js';
import { SchemaSet } from '../xml/schema-set.js';
import { requiredChildren } from './body-children.js';
import type { SoapRequest } from './envelope.js';

/** The Body elements that carry an agreement offer to read. */
export type AgreementOfferInput = 'CreateAgreementInput' | 'CreatePendingAgreementInput';

/**
 * Reads the offer of a CreateAgreement or CreatePendingAgreement request: on this thread, or on another (src/workers).
 */
export interface AgreementOfferReader {
  readAgreementOffer(request: SoapRequest, input: AgreementOfferInput): Promise<XmlReceivedOffer>;
}

/** The Body validated against our schemas, then its wsag:AgreementOffer mapped to the domain. */
export function readAgreementOfferInput(body: XmlElement, input: AgreementOfferInput): XmlReceivedOffer {
  SchemaSet.get().validate(body, `wsag:${input}`);
  return readOffer(agreementOfferElement(body));
}

/** The wsag:AgreementOffer of a CreateAgreement or CreatePendingAgreement Body. */
export function agreementOfferElement(body: XmlElement): XmlElement {
  return requiredChildren(body, ns.wsag, 'wsag:AgreementOffer')[0] as XmlElement;
}

/** Reads offers on the calling thread, from the envelope already parsed. */
export const sameThreadOfferReader: AgreementOfferReader = {
  async readAgreementOffer(request, input) {
    return readAgreementOfferInput(request.body, input);
  },
};
