import type { XmlElement } from 'libxml2-wasm';
import { InvalidResourcePropertyQName, SchemaViolation } from '../domain/errors.js';
import { ns } from '../xml/namespaces.js';
import type { Operation, OperationContext } from './operation.js';

/**
 * WS-ResourceProperties 1.2: GetResourceProperty (one property by QName) and
 * GetResourcePropertyDocument (all of them). `properties` maps a property's
 * `{namespace}local` to the XML elements it currently holds.
 */
export type PropertyReader = (ctx: OperationContext) => Promise<Record<string, string[]>>;

const rpw = 'http://docs.oasis-open.org/wsrf/rpw-2';

export function resourcePropertyOperations(
  readProperties: PropertyReader,
  readDocument: (ctx: OperationContext) => Promise<string>,
): Operation[] {
  return [
    {
      name: 'GetResourceProperty',
      namespace: ns.wsrfRp,
      element: 'GetResourceProperty',
      action: `${rpw}/GetResourceProperty/GetResourcePropertyRequest`,
      responseAction: `${rpw}/GetResourceProperty/GetResourcePropertyResponse`,
      async handle(ctx) {
        const wanted = resolveQName(ctx.request.body);
        const properties = await readProperties(ctx);
        const values = properties[wanted];
        if (!values) {
          const known = Object.keys(properties).join(', ');
          throw new InvalidResourcePropertyQName(`this resource has no property ${wanted}; it has ${known}`);
        }
        return (
          `<rp:GetResourcePropertyResponse xmlns:rp="${ns.wsrfRp}">${values.join('')}` +
          `</rp:GetResourcePropertyResponse>`
        );
      },
    },
    {
      name: 'GetResourcePropertyDocument',
      namespace: ns.wsrfRp,
      element: 'GetResourcePropertyDocument',
      action: `${rpw}/GetResourcePropertyDocument/GetResourcePropertyDocumentRequest`,
      responseAction: `${rpw}/GetResourcePropertyDocument/GetResourcePropertyDocumentResponse`,
      async handle(ctx) {
        return (
          `<rp:GetResourcePropertyDocumentResponse xmlns:rp="${ns.wsrfRp}">${await readDocument(ctx)}` +
          `</rp:GetResourcePropertyDocumentResponse>`
        );
      },
    },
  ];
}

/** The xs:QName text of rp:GetResourceProperty, resolved with the element's in-scope namespaces. */
function resolveQName(element: XmlElement): string {
  const text = element.content.trim();
  const m = /^(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)$/.exec(text);
  if (!m) throw new SchemaViolation(`rp:GetResourceProperty must hold a QName such as wsag:Template, found "${text}"`);
  const [, prefix, local] = m;
  const uri = element.namespaces[prefix ?? ''];
  if (uri === undefined) {
    throw new SchemaViolation(
      `rp:GetResourceProperty names "${text}" but the prefix "${prefix ?? ''}" is not declared`,
    );
  }
  return `{${uri}}${local}`;
}

export function propertyKey(namespace: string, local: string): string {
  return `{${namespace}}${local}`;
}
