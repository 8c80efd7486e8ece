import { escapeXml } from './escape.js';
import type { XmlReceivedOffer } from './offer-reader.js';

export interface ContextParties {
  initiator: string;
  responder: string;
  templateId: string;
  templateName: string;
}

/**
 * The wsag:Context of a document the server writes about an offer (an agreement or a
 * counter-offer): both parties and the template filled in, the offer's own extensions
 * kept, `extra` elements appended. Expects the wsag prefix to be declared by the caller.
 */
export function contextXml(offer: XmlReceivedOffer, parties: ContextParties, extra: string[] = []): string {
  const w = (name: string, value: string | undefined): string =>
    value === undefined ? '' : `<wsag:${name}>${escapeXml(value)}</wsag:${name}>`;
  return (
    '<wsag:Context>' +
    w('AgreementInitiator', parties.initiator) +
    w('AgreementResponder', parties.responder) +
    w('ServiceProvider', offer.context.serviceProvider) +
    w('ExpirationTime', offer.context.expirationTime) +
    w('TemplateId', parties.templateId) +
    w('TemplateName', parties.templateName) +
    offer.context.extensions.join('') +
    extra.join('') +
    '</wsag:Context>'
  );
}
