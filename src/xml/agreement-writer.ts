import type { AgreementDetails, AgreementDocumentWriter, ReceivedOffer } from '../engine/ports.js';
import { contextXml } from './agreement-context.js';
import { escapeXml } from './escape.js';
import { ns } from './namespaces.js';
import { XmlReceivedOffer } from './offer-reader.js';
import { acceptedOfferXml, chosenAlternativeXml } from './srv-elements.js';

/**
 * The agreement document: the accepted offer's Name and Terms unchanged (for one
 * alternative of an offer, that alternative's Terms), its Context completed with both
 * parties, and the agreement id. It is a wsag:AgreementOffer element carrying
 * wsag:AgreementId, the only global element of AgreementType. The Context records the
 * negotiation offer the agreement accepts (srv:AcceptedOffer) and which alternative was
 * chosen (srv:ChosenAlternative), so the agreement says where its terms came from.
 */
export class XmlAgreementWriter implements AgreementDocumentWriter {
  write(offer: ReceivedOffer, details: AgreementDetails): string {
    if (!(offer instanceof XmlReceivedOffer)) throw new Error('the agreement document is written from an XML offer');
    const provenance = [
      ...(offer.accepts ? [acceptedOfferXml(offer.accepts)] : []),
      ...(offer.alternative ? [chosenAlternativeXml(offer.alternative)] : []),
    ];
    return (
      `<wsag:AgreementOffer xmlns:wsag="${ns.wsag}" wsag:AgreementId="${escapeXml(details.agreementId)}">` +
      (offer.name === undefined ? '' : `<wsag:Name>${escapeXml(offer.name)}</wsag:Name>`) +
      contextXml(offer, details, provenance) +
      offer.termsSource +
      '</wsag:AgreementOffer>'
    );
  }
}
