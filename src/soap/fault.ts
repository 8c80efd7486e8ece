import { InternalError, MustUnderstand, WsagError } from '../domain/errors.js';
import { escapeXml } from '../xml/escape.js';
import { ns } from '../xml/namespaces.js';
import { envelope, type SoapVersion } from './envelope.js';

/**
 * A SOAP Fault for a WsagError. The code travels three ways so every client finds it:
 * the fault string starts with it, SOAP 1.2 carries it as a Subcode, and the detail holds
 * a WS-BaseFaults BaseFault with the code as ErrorCode and the message as Description (a
 * second Description holds the technical text behind a plain message, where there is one).
 * Errors that are not WsagErrors never show their text: the caller sees InternalError.
 * `addressing` holds the reply's WS-Addressing header blocks, when the request was addressed.
 */
export function faultEnvelope(
  version: SoapVersion,
  error: unknown,
  now: Date,
  addressing = '',
): { status: number; xml: string } {
  const fault =
    error instanceof WsagError && error.exposable
      ? error
      : new InternalError('the server could not process the request; the failure is logged');
  const text = `${fault.code}: ${fault.message}`;
  const detail =
    `<bf:BaseFault xmlns:bf="${ns.wsrfBf}"><bf:Timestamp>${now.toISOString()}</bf:Timestamp>` +
    `<bf:ErrorCode dialect="${ns.srv}/faults">${fault.code}</bf:ErrorCode>` +
    `<bf:Description>${escapeXml(fault.message)}</bf:Description>` +
    // The plain words first; a schema validator's own words after them, for whoever needs them.
    (fault.technicalDetail === undefined
      ? ''
      : `<bf:Description>${escapeXml(fault.technicalDetail)}</bf:Description>`) +
    '</bf:BaseFault>';
  const status =
    fault.code === 'MessageTooLarge'
      ? 413
      : fault.code === 'UnsupportedMediaType'
        ? 415
        : fault.code === 'ServiceUnavailable'
          ? 503
          : version === '1.2' && fault.isClientError
            ? 400
            : 500;
  const mustUnderstand = fault instanceof MustUnderstand;
  if (version === '1.1') {
    const code = mustUnderstand ? 'soap:MustUnderstand' : fault.isClientError ? 'soap:Client' : 'soap:Server';
    return {
      status,
      xml: envelope(
        version,
        `<soap:Fault><faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring><detail>` +
          `${detail}</detail></soap:Fault>`,
        addressing,
      ),
    };
  }
  const code = mustUnderstand ? 'soap:MustUnderstand' : fault.isClientError ? 'soap:Sender' : 'soap:Receiver';
  // SOAP 1.2 names each block it did not understand in an env:NotUnderstood header.
  const notUnderstood = mustUnderstand
    ? fault.notUnderstood
        .map((h) => `<soap:NotUnderstood xmlns:nu="${escapeXml(h.namespaceUri)}" qname="nu:${h.name}"/>`)
        .join('')
    : '';
  return {
    status,
    xml: envelope(
      version,
      `<soap:Fault><soap:Code><soap:Value>${code}</soap:Value><soap:Subcode><soap:Value xmlns:srv="` +
        `${ns.srv}">srv:${fault.code}</soap:Value></soap:Subcode></soap:Code>` +
        `<soap:Reason><soap:Text xml:lang="en">${escapeXml(text)}</soap:Text></soap:Reason><soap:Detail>` +
        `${detail}</soap:Detail></soap:Fault>`,
      addressing + notUnderstood,
    ),
  };
}
