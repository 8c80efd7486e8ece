import type { XmlElement, XmlDocument } from 'libxml2-wasm';
import { MalformedMessage, VersionMismatch } from '../domain/errors.js';
import { elementChildren } from '../xml/item-constraint.js';
import { ns } from '../xml/namespaces.js';

export type SoapVersion = '1.1' | '1.2';

export interface SoapRequest {
  version: SoapVersion;
  headers: XmlElement[];
  /** The single child of soap:Body (document/literal). */
  body: XmlElement;
  /** The envelope's text as received (WS-Security digests cover it exactly). */
  text?: string;
}

/** Finds Header and Body in a parsed envelope; anything else is MalformedMessage. */
export function readEnvelope(doc: XmlDocument): SoapRequest {
  const root = doc.root;
  const version: SoapVersion | undefined =
    root.namespaceUri === ns.soap11 ? '1.1' : root.namespaceUri === ns.soap12 ? '1.2' : undefined;
  if (root.name === 'Envelope' && !version)
    throw new VersionMismatch(
      `the Envelope is in namespace "${root.namespaceUri.slice(0, 200)}": this server reads SOAP 1.1 (${ns.soap11}) ` +
        `and SOAP 1.2 (${ns.soap12})`,
    );
  if (root.name !== 'Envelope' || !version) {
    throw new MalformedMessage(
      `expected a SOAP Envelope in namespace ${ns.soap11} (SOAP 1.1) or ${ns.soap12} (SOAP 1.2), found {` +
        `${root.namespaceUri}}${root.name}`,
    );
  }
  const parts = elementChildren(root);
  const header = parts.find((e) => e.name === 'Header' && e.namespaceUri === root.namespaceUri);
  const body = parts.find((e) => e.name === 'Body' && e.namespaceUri === root.namespaceUri);
  if (!body) throw new MalformedMessage('the SOAP Envelope has no Body');
  const payload = elementChildren(body);
  if (payload.length !== 1) {
    throw new MalformedMessage(
      `the SOAP Body must hold exactly one element (document/literal), found ${payload.length}`,
    );
  }
  return { version, headers: header ? elementChildren(header) : [], body: payload[0] as XmlElement };
}

export function envelope(version: SoapVersion, body: string, headers = ''): string {
  const soapNs = version === '1.1' ? ns.soap11 : ns.soap12;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<soap:Envelope xmlns:soap="${soapNs}">` +
    (headers ? `<soap:Header>${headers}</soap:Header>` : '') +
    `<soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}

export function contentType(version: SoapVersion): string {
  return version === '1.1' ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8';
}
