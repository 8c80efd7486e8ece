import { UnknownResource } from '../domain/errors.js';
import { escapeXml } from '../xml/escape.js';
import { ns } from '../xml/namespaces.js';
import type { OperationContext } from './operation.js';

/**
 * WS-Addressing endpoint references name each agreement and negotiation: the port's
 * address plus the resource id as a reference parameter (srv:AgreementId,
 * srv:NegotiationId), which clients send back as a SOAP header.
 */
export function endpointReference(
  element: string,
  elementNamespace: string,
  address: string,
  parameter: 'AgreementId' | 'NegotiationId',
  id: string,
): string {
  const [prefix] = element.split(':');
  return (
    `<${element} xmlns:${prefix}="${elementNamespace}" xmlns:wsa="${ns.wsa}" xmlns:srv="${ns.srv}">` +
    `<wsa:Address>${escapeXml(address)}</wsa:Address>` +
    `<wsa:ReferenceParameters><srv:${parameter}>${escapeXml(id)}</srv:${parameter}></wsa:ReferenceParameters>` +
    `</${element}>`
  );
}

/** The resource a request is addressed to: its reference parameter in the SOAP header. */
export function referenceParameter(ctx: OperationContext, parameter: 'AgreementId' | 'NegotiationId'): string {
  const header = ctx.request.headers.find((h) => h.namespaceUri === ns.srv && h.name === parameter);
  const id = header?.content.trim();
  if (!id) {
    const what = parameter === 'AgreementId' ? "agreement's" : "negotiation's";
    throw new UnknownResource(
      `no ${what === "agreement's" ? 'agreement' : 'negotiation'} addressed: send the srv:${parameter} ` +
        `reference parameter ({${ns.srv}}${parameter}) of the ${what} EPR as a SOAP header`,
    );
  }
  return id;
}
