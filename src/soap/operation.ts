import type { Caller } from '../domain/identity.js';
import type { SoapRequest } from './envelope.js';

/** What a handler gets: the request, who sent it, and where the server is reachable. */
export interface OperationContext {
  request: SoapRequest;
  caller: Caller;
  /** Public base URL, for EPR addresses. */
  baseUrl: string;
  now: Date;
}

/** One document/literal operation: selected by the QName of the Body's child element. */
export interface Operation {
  name: string;
  namespace: string;
  element: string;
  /** wsa:Action / SOAPAction of the request, as the WSDL declares it. */
  action: string;
  /** wsa:Action of the response. */
  responseAction: string;
  /**
   * The operation reads its Body only through the document readers (SoapServices.offers),
   * which parse the envelope's text again, on a document thread: the endpoint then leaves
   * the Body's content out of its own parse (readRequest).
   */
  readsBodyFromText?: true;
  /** Returns the response Body content. */
  handle(ctx: OperationContext): Promise<string>;
}

/**
 * The wsa:Action of an operation's fault, as the WSDL declares it (WS-Addressing 1.0 Metadata's default pattern:
 * namespace, port type, operation, Fault, fault name).
 */
export function faultAction(port: Port, operation: Operation): string {
  return `${port.targetNamespace}/${port.name}/${operation.name}/Fault/BaseFault`;
}

/** WS-Addressing's own fault action, for a fault before an operation was known. */
export const addressingFaultAction = 'http://www.w3.org/2005/08/addressing/fault';

/** A WSDL port: one port type at one exact URL path. */
export interface Port {
  name: string;
  /** The WSDL's target namespace: with the port type's and the operation's names it makes the fault action. */
  targetNamespace: string;
  path: string;
  wsdlFile: string;
  /** The reference parameter (a SOAP header) that names the port's resource, declared as a header part in the WSDL. */
  referenceParameter?: 'AgreementId' | 'NegotiationId';
  operations: Operation[];
}
