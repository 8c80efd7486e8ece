import type { AgreementFactory } from '../engine/agreements/index.js';
import type { AgreementService } from '../engine/agreements/index.js';
import type { NegotiationService } from '../engine/negotiation/index.js';
import type { TemplateLibrary } from '../xml/template-library.js';

/** What the SOAP ports call into. */
export interface SoapServices {
  factory: AgreementFactory;
  agreements: AgreementService;
  negotiations: NegotiationService;
  templates: TemplateLibrary;
}
