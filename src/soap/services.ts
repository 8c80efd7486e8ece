import type { AgreementFactory } from '../engine/agreements/agreement-factory.js';
import type { AgreementService } from '../engine/agreements/agreement-service.js';
import type { NegotiationService } from '../engine/negotiation/negotiation-service.js';
import type { TemplateLibrary } from '../xml/template-library.js';

/** What the SOAP ports call into. */
export interface SoapServices {
  factory: AgreementFactory;
  agreements: AgreementService;
  negotiations: NegotiationService;
  templates: TemplateLibrary;
}
