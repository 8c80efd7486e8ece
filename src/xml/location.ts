import { XmlXPath, type XmlDocument, type XmlNode } from 'libxml2-wasm';
import { namespacesNamedIn } from './xpath.js';

/**
 * A creation-constraint Location (WS-Agreement section 9.1): XPath 1.0 over the offer.
 * Two spellings are accepted:
 *  - plain XPath, prefixes taken from the Location element's in-scope namespaces;
 *  - the XQuery-style prologue other implementations write (WSAG4J):
 *    `declare namespace p='uri';... $this/p:AgreementOffer/...`, where `$this` is the offer document.
 */
export interface CompiledLocation {
  xpath: string;
  namespaces: Record<string, string>;
  /** Compiled at first use and kept with the template: every offer against it evaluates the same expressions. */
  compiled?: XmlXPath;
}

const declaration = /^\s*declare\s+namespace\s+([A-Za-z_][\w.-]*)\s*=\s*(['"])(.*?)\2\s*;/;

export function compileLocation(text: string, inScope: Record<string, string>): CompiledLocation {
  const declared: Record<string, string> = { ...inScope };
  let rest = text;
  for (let m = declaration.exec(rest); m; m = declaration.exec(rest)) {
    declared[m[1] as string] = m[3] as string;
    rest = rest.slice(m[0].length);
  }
  // `$this` names the offer document: `$this/a:B` is `/a:B`, a bare `$this` is `/`.
  const xpath = rest
    .trim()
    .replace(/\$this(?![\w.-])/g, (_m, offset: number, all: string) => (all[offset + 5] === '/' ? '' : '/'));
  // A template declares many namespaces; each evaluation registers those it is given.
  return { xpath, namespaces: namespacesNamedIn(xpath, declared) };
}

/** Nodes the Location selects in the offer document (evaluated from the document node). */
export function selectNodes(location: CompiledLocation, offerRoot: XmlNode): XmlNode[] {
  const result = evaluateLocation(location, offerRoot.doc);
  return Array.isArray(result) ? result : [];
}

/** The Location's expression evaluated at `node`. */
export function evaluateLocation(location: CompiledLocation, node: XmlNode | XmlDocument): ReturnType<XmlNode['eval']> {
  location.compiled ??= XmlXPath.compile(location.xpath, location.namespaces);
  return node.eval(location.compiled);
}
