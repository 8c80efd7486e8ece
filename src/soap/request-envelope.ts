import type { XmlDocument, XmlElement } from 'libxml2-wasm';
import { elementChildren } from '../xml/item-constraint.js';
import { parseXml } from '../xml/libxml.js';
import type { LastChildOutline } from '../xml/raw-guard.js';
import { readEnvelope, type SoapRequest } from './envelope.js';

/** An operation element with less content than this is parsed with the envelope: leaving it out saves little. */
export const LEAVE_OUT_FROM_CHARS = 2048;

export interface ReceivedRequest {
  request: SoapRequest;
  /** The Body's element, by name: what the request is dispatched by. */
  operation: { namespaceUri: string; name: string };
  /** Frees the parsed documents (the request's elements with them). */
  dispose(): void;
}

/**
 * Reads a SOAP request whose `text` the raw guard has passed (with `outline`, what it saw of
 * the Body). Where the operation's Body will be read from the envelope's text on a
 * document thread (`readsBodyFromText`: the operation does so, and the threads take work
 * now), this thread parses the envelope without the operation
 * element's content, a fraction of the message, and parses the whole only if
 * `request.body` is asked for after all (the work stayed on this thread); a Body that is
 * not well-formed is then refused there, or by the thread that reads it, as MalformedMessage.
 * Anything unusual (another operation, a small Body, a Body that is not the envelope's one
 * last part with one element) is parsed whole at once, as before.
 */
export function readRequest(
  body: Buffer,
  text: string,
  outline: LastChildOutline,
  readsBodyFromText: (namespaceUri: string, name: string) => boolean,
  parse: (xml: Buffer | string, what: string) => XmlDocument = parseXml,
): ReceivedRequest {
  const documents: XmlDocument[] = [];
  const dispose = () => {
    for (const doc of documents.splice(0)) doc.dispose();
  };
  const parsed = (xml: Buffer | string) => {
    const doc = parse(xml, 'SOAP message');
    documents.push(doc);
    return readEnvelope(doc);
  };
  const whole = (): ReceivedRequest => {
    const request = { ...parsed(body), text };
    return { request, operation: request.body, dispose };
  };
  try {
    const content = outline.children === 1 ? outline.content : undefined;
    if (content === undefined || content.end < 0 || content.end - content.start < LEAVE_OUT_FROM_CHARS) return whole();
    const outer = parsed(text.slice(0, content.start) + text.slice(content.end));
    if (!isLastAndOnlyBody(outer.body) || !readsBodyFromText(outer.body.namespaceUri, outer.body.name)) {
      dispose();
      return whole();
    }
    let full: XmlElement | undefined;
    const request: SoapRequest = {
      version: outer.version,
      headers: outer.headers,
      text,
      get body() {
        return (full ??= parsed(body).body);
      },
    };
    return { request, operation: { namespaceUri: outer.body.namespaceUri, name: outer.body.name }, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/** The operation element's parent is the envelope's only Body and its last element: the part the guard outlined. */
function isLastAndOnlyBody(operation: XmlElement): boolean {
  const envelope = operation.parent?.parent;
  if (!envelope) return false;
  const parts = elementChildren(envelope);
  const isBody = (e: XmlElement | undefined) => e?.name === 'Body' && e.namespaceUri === envelope.namespaceUri;
  return parts.filter(isBody).length === 1 && isBody(parts.at(-1));
}
