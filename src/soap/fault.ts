import {
  ActionNotSupported,
  AddressingFault,
  InternalError,
  MustUnderstand,
  VersionMismatch,
  WsagError,
} from '../domain/errors.js';
import { escapeXml } from '../xml/escape.js';
import { ns } from '../xml/namespaces.js';
import { envelope, type SoapVersion } from './envelope.js';

/** The fault's SOAP code (SOAP 1.2 names; SOAP 1.1 calls Sender Client and Receiver Server). */
type SoapCode = 'VersionMismatch' | 'MustUnderstand' | 'Sender' | 'Receiver';

function soapCodeOf(fault: WsagError): SoapCode {
  if (fault instanceof VersionMismatch) return 'VersionMismatch';
  if (fault instanceof MustUnderstand) return 'MustUnderstand';
  return fault.isClientError ? 'Sender' : 'Receiver';
}

/**
 * The HTTP status of a fault. Three refusals are HTTP's own before SOAP is read (413, 415, 503, with Retry-After
 * where it applies). Otherwise SOAP 1.1 answers every fault 500 (WS-I Basic Profile 1.1 R1126); SOAP 1.2 answers a
 * Sender fault 400 and every other (Receiver, MustUnderstand, VersionMismatch) 500 (SOAP 1.2 part 2, table 20).
 */
export function faultStatus(fault: WsagError, version: SoapVersion): number {
  if (fault.code === 'MessageTooLarge') return 413;
  if (fault.code === 'UnsupportedMediaType') return 415;
  if (fault.code === 'ServiceUnavailable') return 503;
  return version === '1.2' && soapCodeOf(fault) === 'Sender' ? 400 : 500;
}

/**
 * WS-Addressing's own faults (and ActionNotSupported for a request that named its action in
 * wsa:Action) carry its subcode and problem detail (WS-Addressing 1.0 SOAP binding, section 6):
 * in SOAP 1.2 as the Subcode and a Detail child, in SOAP 1.1 as the faultcode and a
 * wsa:FaultDetail header block.
 */
function addressingProblem(fault: WsagError): { subcode: string; detail: string } | undefined {
  const wsa = `xmlns:wsa="${ns.wsa}"`;
  if (fault instanceof ActionNotSupported && fault.problemAction !== undefined)
    return {
      subcode: 'ActionNotSupported',
      detail: `<wsa:ProblemAction ${wsa}>${problemActionOf(fault.problemAction)}</wsa:ProblemAction>`,
    };
  if (fault instanceof AddressingFault)
    return {
      subcode: fault.code,
      detail: `<wsa:ProblemHeaderQName ${wsa}>${escapeXml(fault.problemHeader)}</wsa:ProblemHeaderQName>`,
    };
  return undefined;
}

const problemActionOf = (action: string) => `<wsa:Action>${escapeXml(action)}</wsa:Action>`;

/** Whether the fault is WS-Addressing's own, answered with its fault action rather than the operation's. */
export function isAddressingFault(error: unknown): boolean {
  return error instanceof WsagError && addressingProblem(error) !== undefined;
}

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
  const baseFault =
    `<bf:BaseFault xmlns:bf="${ns.wsrfBf}"><bf:Timestamp>${now.toISOString()}</bf:Timestamp>` +
    `<bf:ErrorCode dialect="${ns.srv}/faults">${fault.code}</bf:ErrorCode>` +
    `<bf:Description>${escapeXml(fault.message)}</bf:Description>` +
    // The plain words first; a schema validator's own words after them, for whoever needs them.
    (fault.technicalDetail === undefined
      ? ''
      : `<bf:Description>${escapeXml(fault.technicalDetail)}</bf:Description>`) +
    '</bf:BaseFault>';
  const status = faultStatus(fault, version);
  const soapCode = soapCodeOf(fault);
  const problem = addressingProblem(fault);
  if (version === '1.1') {
    const code = problem
      ? `wsa:${problem.subcode}`
      : `soap:${soapCode === 'Sender' ? 'Client' : soapCode === 'Receiver' ? 'Server' : soapCode}`;
    const headers = problem
      ? `${addressing}<wsa:FaultDetail xmlns:wsa="${ns.wsa}">${problem.detail}</wsa:FaultDetail>`
      : addressing;
    return {
      status,
      xml: envelope(
        version,
        `<soap:Fault><faultcode${problem ? ` xmlns:wsa="${ns.wsa}"` : ''}>${code}</faultcode>` +
          `<faultstring>${escapeXml(text)}</faultstring><detail>${baseFault}</detail></soap:Fault>`,
        headers,
      ),
    };
  }
  const subcode = problem
    ? `<soap:Value xmlns:wsa="${ns.wsa}">wsa:${problem.subcode}</soap:Value>`
    : `<soap:Value xmlns:srv="${ns.srv}">srv:${fault.code}</soap:Value>`;
  return {
    status,
    xml: envelope(
      version,
      `<soap:Fault><soap:Code><soap:Value>soap:${soapCode}</soap:Value><soap:Subcode>${subcode}</soap:Subcode>` +
        `</soap:Code><soap:Reason><soap:Text xml:lang="en">${escapeXml(text)}</soap:Text></soap:Reason>` +
        `<soap:Detail>${problem?.detail ?? ''}${baseFault}</soap:Detail></soap:Fault>`,
      addressing + soap12Headers(fault),
    ),
  };
}

/**
 * SOAP 1.2 names each block it did not understand in an env:NotUnderstood header (part 1
 * section 5.4.8), and the envelopes it does understand in an env:Upgrade header (section 5.4.7).
 */
function soap12Headers(fault: WsagError): string {
  if (fault instanceof MustUnderstand)
    return fault.notUnderstood
      .map((h) => `<soap:NotUnderstood xmlns:nu="${escapeXml(h.namespaceUri)}" qname="nu:${h.name}"/>`)
      .join('');
  if (fault instanceof VersionMismatch)
    return (
      `<soap:Upgrade><soap:SupportedEnvelope xmlns:v12="${ns.soap12}" qname="v12:Envelope"/>` +
      `<soap:SupportedEnvelope xmlns:v11="${ns.soap11}" qname="v11:Envelope"/></soap:Upgrade>`
    );
  return '';
}
