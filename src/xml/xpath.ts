import type { XmlElement, XmlNode } from 'libxml2-wasm';
import { prefixes } from './namespaces.js';

/** XPath over our own prefixes (namespaces.ts), for reading documents. */

export function all(context: XmlNode, path: string): XmlElement[] {
  const result = context.eval(path, prefixes);
  return Array.isArray(result) ? (result as XmlElement[]) : [];
}

export function one(context: XmlNode, path: string): XmlElement | undefined {
  return all(context, path)[0];
}

/** Trimmed text of the first match. */
export function text(context: XmlNode, path: string): string | undefined {
  const node = one(context, path);
  return node ? node.content.trim() : undefined;
}

/** The element's name as written (prefix:local), for messages. */
export function qname(element: XmlElement): string {
  return element.prefix ? `${element.prefix}:${element.name}` : element.name;
}
