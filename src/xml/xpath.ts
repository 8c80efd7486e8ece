import { XmlElement, XmlXPath, type XmlNode } from 'libxml2-wasm';
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
  const steps = childStepsOf(path);
  if (steps !== null && context instanceof XmlElement) return walked(context, steps);
  const result = evaluate(context, path);
  return Array.isArray(result) ? (result as XmlElement[]) : [];
}

/** One step down to child elements: a name in a namespace, any name in one (`p:*`), or any element (`*`). */
interface ChildStep {
  uri?: string;
  name?: string;
}

/** Paths read as child steps (or null: evaluated as XPath), by their text. */
const childSteps = new Map<string, readonly ChildStep[] | null>();
const childStep = /^(?:\*|([A-Za-z_][\w.-]*):([A-Za-z_][\w.-]*|\*))$/;

/**
 * The steps of a path made only of child steps over our prefixes (`wsag:Terms/wsag:All/*`),
 * which `all` walks in the tree: the same elements in the same (document) order as XPath
 * gives, without an XPath context made and namespaces registered for each evaluation
 * (reading an offer evaluates some 30 such paths; a one-step lookup takes half the time).
 * Null for any other path.
 */
function childStepsOf(path: string): readonly ChildStep[] | null {
  let steps = childSteps.get(path);
  if (steps === undefined) {
    const parsed = path.split('/').map((text): ChildStep | undefined => {
      const match = childStep.exec(text);
      if (!match) return undefined;
      if (match[1] === undefined) return {};
      const uri = prefixes[match[1]];
      return uri === undefined ? undefined : { uri, ...(match[2] === '*' ? {} : { name: match[2] }) };
    });
    steps = parsed.every((step) => step !== undefined) ? (parsed as ChildStep[]) : null;
    if (childSteps.size < maxCompiled) childSteps.set(path, steps);
  }
  return steps;
}

/** The elements `steps` lead to from `context`, parent by parent and child by child: document order. */
function walked(context: XmlElement, steps: readonly ChildStep[]): XmlElement[] {
  let current: XmlElement[] = [context];
  for (const step of steps) {
    const next: XmlElement[] = [];
    for (const parent of current) {
      for (let child = parent.firstChild; child; child = child.next) {
        if (
          child instanceof XmlElement &&
          (step.name === undefined || child.name === step.name) &&
          (step.uri === undefined || child.namespaceUri === step.uri)
        )
          next.push(child);
      }
    }
    current = next;
  }
  return current;
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
