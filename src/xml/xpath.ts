import { XmlXPath, type XmlElement, type XmlNode } from 'libxml2-wasm';
import { prefixes } from './namespaces.js';

/** XPath over our own prefixes (namespaces.ts), for reading documents. */

/** Compiled expressions by their text: reading an offer evaluates the same few dozen paths every time. */
const compiled = new Map<string, XmlXPath>();
/** Paths built from a document's own names are cached too; the cache stays bounded, oldest out first. */
const maxCompiled = 1024;

/** `path` compiled once over our prefixes. */
export function compiledPath(path: string): XmlXPath {
  let xpath = compiled.get(path);
  if (!xpath) {
    if (compiled.size >= maxCompiled) {
      const [oldest, expression] = compiled.entries().next().value as [string, XmlXPath];
      compiled.delete(oldest);
      expression.dispose();
    }
    xpath = XmlXPath.compile(path, prefixesIn(path));
    compiled.set(path, xpath);
  }
  return xpath;
}

/**
 * Only the prefixes `path` uses: each evaluation registers the expression's namespaces in
 * a fresh libxml2 context, and registering all of ours cost more than the lookup itself.
 */
function prefixesIn(path: string): Record<string, string> {
  const used: Record<string, string> = {};
  for (const [, prefix] of path.matchAll(/([A-Za-z_][\w.-]*):(?!:)/g)) {
    const uri = (prefixes as Record<string, string>)[prefix as string];
    if (uri !== undefined) used[prefix as string] = uri;
  }
  return used;
}

/** Evaluates `path` (compiled once) at `context`. */
export function evaluate(context: XmlNode, path: string): ReturnType<XmlNode['eval']> {
  return context.eval(compiledPath(path));
}

export function all(context: XmlNode, path: string): XmlElement[] {
  const result = evaluate(context, path);
  return Array.isArray(result) ? (result as XmlElement[]) : [];
}

export function one(context: XmlNode, path: string): XmlElement | undefined {
  return all(context, path)[0];
}

/** The XPath string value of `path` (compiled once) at `context`, trimmed: '' when nothing matches. */
export function stringAt(context: XmlNode, path: string): string {
  return String(evaluate(context, `string(${path})`)).trim();
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
