/**
 * Each schema document must include or import what it refers to. XSD allows a part to use
 * components only a sibling part declares (the entry file brings them together), and libxml2
 * accepts that; suds does not ("TypeNotFound: Template" on every WSDL) and strong-soap then
 * writes wsag:AgreementOffer unqualified. So every QName a file uses (ref, type, base,
 * substitutionGroup, itemType, memberTypes) must be declared by the file itself or by what it
 * includes or imports, followed transitively.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { XmlDocument, type XmlElement } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { NS, SCHEMA_DIR } from './helpers.js';

const XS = { xs: NS.xs };

interface SchemaFile {
  targetNamespace: string;
  /** "kind {ns}name" of each global component. */
  declares: Set<string>;
  /** Files it includes or imports. */
  reaches: string[];
  /** "kind {ns}name" of each component it refers to, with the attribute that refers. */
  uses: { wanted: string[]; where: string }[];
}

const referring: Record<string, (element: string) => string[]> = {
  ref: (element) => [element],
  type: () => ['complexType', 'simpleType'],
  base: () => ['complexType', 'simpleType'],
  substitutionGroup: () => ['element'],
  itemType: () => ['simpleType'],
  memberTypes: () => ['simpleType'],
};

function read(file: string): SchemaFile {
  const doc = XmlDocument.fromBuffer(readFileSync(join(SCHEMA_DIR, file)));
  try {
    const targetNamespace = String(doc.eval('string(/xs:schema/@targetNamespace)', XS));
    const declares = new Set<string>();
    for (const node of doc.find('/xs:schema/xs:*[@name]', XS)) {
      const e = node as XmlElement;
      declares.add(`${e.name} {${targetNamespace}}${e.attr('name')?.value}`);
    }
    const reaches = doc
      .find('/xs:schema/xs:import/@schemaLocation | /xs:schema/xs:include/@schemaLocation', XS)
      .map((a) => a.content);
    const uses: SchemaFile['uses'] = [];
    for (const [attribute, kinds] of Object.entries(referring)) {
      for (const node of doc.find(`//xs:*[@${attribute}]`, XS)) {
        const e = node as XmlElement;
        for (const qname of (e.attr(attribute)?.value ?? '').trim().split(/\s+/)) {
          const [prefix, local] = qname.includes(':') ? qname.split(':') : ['', qname];
          const namespace = e.namespaceForPrefix(prefix ?? '') ?? '';
          if (namespace === NS.xs) continue;
          uses.push({
            wanted: kinds(e.name).map((kind) => `${kind} {${namespace}}${local}`),
            where: `${e.name} @${attribute}="${qname}"`,
          });
        }
      }
    }
    return { targetNamespace, declares, reaches, uses };
  } finally {
    doc.dispose();
  }
}

const files = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.xsd'));
const schemas = new Map(files.map((f) => [f, read(f)]));

/** Everything declared by `file` and what it includes or imports, transitively. */
function visible(file: string): Set<string> {
  const seen = new Set<string>();
  const out = new Set<string>();
  const walk = (f: string) => {
    if (seen.has(f)) return;
    seen.add(f);
    const schema = schemas.get(f);
    if (!schema) throw new Error(`${file} reaches ${f}, which is not in schemas/`);
    for (const d of schema.declares) out.add(d);
    for (const next of schema.reaches) walk(next);
  };
  walk(file);
  return out;
}

describe('each schema document includes or imports what it refers to', () => {
  it.each(files)('%s', (file) => {
    const known = visible(file);
    const missing = (schemas.get(file) as SchemaFile).uses
      .filter((u) => !u.wanted.some((w) => known.has(w)))
      .map((u) => u.where);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('finds the references it checks (the check is not vacuous)', () => {
    const messages = schemas.get('ws-agreement-messages.xsd') as SchemaFile;
    expect(messages.uses.some((u) => u.where.includes('wsag:Template'))).toBe(true);
  });
});
