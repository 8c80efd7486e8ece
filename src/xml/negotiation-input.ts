import { escapeXml } from './escape.js';
import { ns } from './namespaces.js';

/**
 * The wsag-neg:InitiateNegotiationInput of a negotiation, or with `renegotiate` of a renegotiation of that agreement at
 * `agreementAddress`.
 */
export function initiateNegotiationInput(
  options: { renegotiate?: string; expirationTime?: string },
  agreementAddress: string,
): string {
  const type =
    options.renegotiate === undefined
      ? '<wsag-neg:Negotiation></wsag-neg:Negotiation>'
      : '<wsag-neg:Renegotiation><wsag-neg:ResponderAgreementEPR>' +
        `<wsa:Address>${escapeXml(agreementAddress)}</wsa:Address>` +
        `<wsa:ReferenceParameters><srv:AgreementId>${escapeXml(options.renegotiate)}</srv:AgreementId>` +
        `</wsa:ReferenceParameters>` +
        '</wsag-neg:ResponderAgreementEPR></wsag-neg:Renegotiation>';
  return (
    `<wsag-neg:InitiateNegotiationInput xmlns:wsag-neg="${ns.wsagNeg}" xmlns:wsa="${ns.wsa}" xmlns:srv="` +
    `${ns.srv}"><wsag-neg:NegotiationContext>` +
    `<wsag-neg:NegotiationType>${type}</wsag-neg:NegotiationType>` +
    (options.expirationTime
      ? `<wsag-neg:ExpirationTime>${escapeXml(options.expirationTime)}</wsag-neg:ExpirationTime>`
      : '') +
    '<wsag-neg:AgreementResponder>NegotiationResponder</wsag-neg:AgreementResponder>' +
    '</wsag-neg:NegotiationContext></wsag-neg:InitiateNegotiationInput>'
  );
}
