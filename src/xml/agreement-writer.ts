import type { AgreementDetails, AgreementDocumentWriter, ReceivedOffer } from '../engine/ports.js';
import { escapeXml } from './escape.js';
import { ns } from './namespaces.js';
import { XmlReceivedOffer } from './offer-reader.js';

/**
 * The agreement document: the accepted offer's Name and Terms unchanged, its Context
 * completed with both parties, and the agreement id. It is a wsag:AgreementOffer element
 * carrying wsag:AgreementId, the only global element of AgreementType.
 */
export class XmlAgreementWriter implements AgreementDocumentWriter {
  write(offer: ReceivedOffer, details: AgreementDetails): string {
    if (!(offer instanceof XmlReceivedOffer)) throw new Error('the agreement document is written from an XML offer');
    const w = (name: string, value: string | undefined): string =>
      value === undefined ? '' : `<wsag:${name}>${escapeXml(value)}</wsag:${name}>`;
    return (
      `<wsag:AgreementOffer xmlns:wsag="${ns.wsag}" wsag:AgreementId="${escapeXml(details.agreementId)}">` +
      w('Name', offer.name) +
      '<wsag:Context>' +
      w('AgreementInitiator', details.initiator) +
      w('AgreementResponder', details.responder) +
      w('ServiceProvider', offer.context.serviceProvider) +
      w('ExpirationTime', offer.context.expirationTime) +
      w('TemplateId', details.templateId) +
      w('TemplateName', details.templateName) +
      offer.context.extensions.join('') +
      '</wsag:Context>' +
      offer.termsXml +
      '</wsag:AgreementOffer>'
    );
  }
}
