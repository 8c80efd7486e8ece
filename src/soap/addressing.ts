import type { XmlElement } from 'libxml2-wasm';
import { MessageAddressingHeaderRequired, OnlyAnonymousAddressSupported } from '../domain/errors.js';
import { escapeXml } from '../xml/escape.js';
import { elementChildren } from '../xml/item-constraint.js';
import { ns } from '../xml/namespaces.js';

/** The one reply address a synchronous HTTP server can honour (WS-Addressing 1.0 Core, section 2.1). */
export const anonymousAddress = `${ns.wsa}/anonymous`;

type Header = Pick<XmlElement, 'namespaceUri' | 'name' | 'content'>;

const wsaHeader = (headers: readonly Header[], name: string) =>
  headers.find((h) => h.namespaceUri === ns.wsa && h.name === name);

/** The request's wsa:Action, if it sent one. */
export function addressingAction(headers: readonly Header[]): string | undefined {
  return wsaHeader(headers, 'Action')?.content.trim() || undefined;
}

/** What a reply needs of the request's addressing: its MessageID, and whether it was addressed at all. */
export interface ReplyAddressing {
  messageId: string | undefined;
  action: boolean;
}

export function addressingOf(headers: readonly Header[]): ReplyAddressing {
  return {
    messageId: wsaHeader(headers, 'MessageID')?.content.trim(),
    action: wsaHeader(headers, 'Action') !== undefined,
  };
}

/** WS-Addressing replies: when the request carried a MessageID, the response names it in RelatesTo. */
export function addressingHeaders({ messageId, action }: ReplyAddressing, responseAction: string): string {
  if (!messageId && !action) return '';
  const wsa = `xmlns:wsa="${ns.wsa}"`;
  return (
    `<wsa:Action ${wsa}>${responseAction}</wsa:Action>` +
    `${messageId ? `<wsa:RelatesTo ${wsa}>${escapeXml(messageId)}</wsa:RelatesTo>` : ''}`
  );
}

/**
 * WS-Addressing 1.0 SOAP binding, section 6: a request that uses addressing carries
 * wsa:Action; one that asks for a reply or a fault elsewhere (ReplyTo, FaultTo) carries a
 * MessageID, and, as every answer here goes back on the request's own connection, names the
 * anonymous address there. wsa:To alone is checked where it is read (the message counts only
 * where it was sent).
 */
export function checkAddressing(headers: readonly XmlElement[]): void {
  const replyTo = wsaHeader(headers, 'ReplyTo') as XmlElement | undefined;
  const faultTo = wsaHeader(headers, 'FaultTo') as XmlElement | undefined;
  const messageId = wsaHeader(headers, 'MessageID');
  if ((messageId || replyTo || faultTo) && !wsaHeader(headers, 'Action'))
    throw new MessageAddressingHeaderRequired(
      'the message uses WS-Addressing (wsa:MessageID, ReplyTo or FaultTo) but has no wsa:Action header: send ' +
        "the operation's action there",
      'wsa:Action',
    );
  if ((replyTo || faultTo) && !messageId)
    throw new MessageAddressingHeaderRequired(
      'a message that names a wsa:ReplyTo or wsa:FaultTo needs a wsa:MessageID for the answer to relate to',
      'wsa:MessageID',
    );
  for (const [name, header] of [
    ['ReplyTo', replyTo],
    ['FaultTo', faultTo],
  ] as const) {
    if (!header) continue;
    const address = elementChildren(header)
      .find((e) => e.namespaceUri === ns.wsa && e.name === 'Address')
      ?.content.trim();
    if (address !== anonymousAddress)
      throw new OnlyAnonymousAddressSupported(
        `wsa:${name} is ${address ? `"${address.slice(0, 200)}"` : 'without an Address'}: this server answers on ` +
          `the request's own connection only; send ${anonymousAddress} or leave wsa:${name} out`,
        `wsa:${name}`,
      );
  }
}
