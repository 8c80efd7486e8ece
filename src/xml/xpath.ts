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
    xpath = XmlXPath.compile(path, namespacesNamedIn(path, prefixes));
    compiled.set(path, xpath);
  }
  return xpath;
}

/**
 * The entries of `namespaces` whose prefixes `path` names (a superset: a literal may look
 * like one): libxml2-wasm registers an expression's namespaces in a fresh context at each
 * evaluation, and registering all of them cost more than the lookup itself.
 */
export function namespacesNamedIn(path: string, namespaces: Readonly<Record<string, string>>): Record<string, string> {
  const used: Record<string, string> = {};
  for (const [, prefix] of path.matchAll(/([A-Za-z_][\w.-]*):(?!:)/g)) {
    const uri = namespaces[prefix as string];
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
