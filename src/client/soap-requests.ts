import { escapeXml } from '../xml/escape.js';
import { ns } from '../xml/namespaces.js';

/** What a request addresses: an agreement or a negotiation, by the id the server gave it. */
export type ResourceRef = { parameter: 'AgreementId' | 'NegotiationId'; id: string };

/** The SOAP requests WsagClient sends, as text (benchmarks send the same ones). */

/**
 * The resource addressed, as the WS-Addressing reference parameter the server reads ('' for none); a string is an
 * agreement id.
 */
export function referenceParameter(resource?: string | ResourceRef): string {
  const ref = typeof resource === 'string' ? { parameter: 'AgreementId' as const, id: resource } : resource;
  return ref
    ? `<srv:${ref.parameter} xmlns:srv="${ns.srv}" xmlns:wsa="${ns.wsa}" wsa:IsReferenceParameter="true">` +
        `${escapeXml(ref.id)}</srv:${ref.parameter}>`
    : '';
}

/** The SOAP 1.1 envelope WsagClient sends when it does not sign: the resource addressed in the header. */
export function plainEnvelope(body: string, resource?: string | ResourceRef): string {
  const reference = referenceParameter(resource);
  return (
    `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${ns.soap11}">` +
    `${reference ? `<soap:Header>${reference}</soap:Header>` : ''}<soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}
