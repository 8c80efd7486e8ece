import type { AgreementFactory } from '../engine/agreements/index.js';
import type { AgreementService } from '../engine/agreements/index.js';
import type { NegotiationService } from '../engine/negotiation/index.js';
import type { TemplateLibrary } from '../xml/template-library.js';
import type { AgreementOfferReader } from './agreement-offer-input.js';
import type { NegotiationOfferReader } from './negotiation-offer-input.js';

/** What the SOAP ports call into. */
export interface SoapServices {
  factory: AgreementFactory;
  agreements: AgreementService;
  negotiations: NegotiationService;
  templates: TemplateLibrary;
  /**
   * Reads the offers of CreateAgreement, CreatePendingAgreement, Negotiate and Advertise (on document threads when
   * there are some).
   */
  offers: AgreementOfferReader & NegotiationOfferReader;
}
