/**
 * Static checks of schemas/: offline-only relative imports, one entry file per namespace,
 * every entry compiles on its own (libxml2-wasm, as the server does, and xmllint), and every
 * global component the reference schemas declare in a namespace is declared by ours too.
 * These checks need no external tool except the xmllint compile check.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { XmlDocument, XsdValidator, xmlCleanupInputProvider } from 'libxml2-wasm';
import { xmlRegisterFsInputProviders } from 'libxml2-wasm/lib/nodejs.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../support/tools.js';
import { NS, REFERENCE_DIR, SCHEMA_DIR, cleanupScratch, validateWithOurs } from './helpers.js';

const XS = { xs: NS.xs };

/** Our entry file per namespace (the only file any schema may import for that namespace). */
const ENTRY: Record<string, string> = {
  [NS.xml]: 'xml.xsd',
  [NS.wsa]: 'ws-addressing.xsd',
  [NS.wsrfBf]: 'wsrf-bf.xsd',
  [NS.wsrfRp]: 'wsrf-rp.xsd',
  [NS.wsag]: 'ws-agreement.xsd',
  [NS.wsagNeg]: 'ws-agreement-negotiation.xsd',
  [NS.jsdl]: 'jsdl.xsd',
  [NS.jsdlPosix]: 'jsdl-posix.xsd',
  [NS.arp]: 'ogf-advance-reservation.xsd',
  [NS.wsag4j]: 'wsag4j-scheduling.xsd',
  [NS.sla]: 'sla-terms.xsd',
  [NS.srv]: 'wsag-server.xsd',
};
/** Parts of a namespace, xs:include'd by its entry file. */
const PARTS: Record<string, string> = {
  'ws-agreement-types.xsd': 'ws-agreement.xsd',
  'ws-agreement-state.xsd': 'ws-agreement.xsd',
  'ws-agreement-messages.xsd': 'ws-agreement.xsd',
};
/** Parts that also include the parts they refer to (test/schemas/self-contained.test.ts says why). */
const PART_INCLUDES = [
  'ws-agreement-messages.xsd -> ws-agreement-state.xsd',
  'ws-agreement-messages.xsd -> ws-agreement-types.xsd',
];

/** Which reference files declare each namespace, and which of our files must match them. */
const REFERENCE_FILES: Record<string, { ref: string[]; ours: string[] }> = {
  [NS.wsag]: {
    ref: [
      'xsd/ws-agreement-xsd-types.xsd',
      'xsd/ws-agreement-state-xsd-types.xsd',
      'xsd/ws-agreement-factory-wsdl-types.xsd',
      'xsd/ws-agreement-pending-agreement-factory-wsdl-types.xsd',
      'xsd/ws-agreement-acceptance-wsdl-types.xsd',
      'xsd/ws-agreement-wsdl-types.xsd',
      'xsd/ws-agreement-state-wsdl-types.xsd',
    ],
    ours: ['ws-agreement-types.xsd', 'ws-agreement-state.xsd', 'ws-agreement-messages.xsd'],
  },
  [NS.wsagNeg]: {
    ref: ['xsd/ws-agreement-negotiation-types.xsd', 'xsd/ws-agreement-negotiation-wsdl-types.xsd'],
    ours: ['ws-agreement-negotiation.xsd'],
  },
  [NS.wsa]: { ref: ['catalog/ws-addr.xsd'], ours: ['ws-addressing.xsd'] },
  [NS.wsrfBf]: { ref: ['catalog/bf-2.xsd'], ours: ['wsrf-bf.xsd'] },
  [NS.xml]: { ref: ['catalog/xml.xsd'], ours: ['xml.xsd'] },
  [NS.jsdl]: { ref: ['domain/jsdl.xsd-18.xsd'], ours: ['jsdl.xsd'] },
  [NS.jsdlPosix]: { ref: ['domain/jsdl-posix.xsd-6.xsd'], ours: ['jsdl-posix.xsd'] },
  [NS.arp]: { ref: ['domain/ogf-advance-reservation-profile-types.xsd'], ours: ['ogf-advance-reservation.xsd'] },
  [NS.wsag4j]: { ref: ['domain/wsag4j-scheduling-types.xsd'], ours: ['wsag4j-scheduling.xsd'] },
};

const KINDS = ['element', 'complexType', 'simpleType', 'attribute', 'attributeGroup', 'group'] as const;

function parse(path: string): XmlDocument {
  return XmlDocument.fromBuffer(readFileSync(path), { url: pathToFileURL(path).href });
}

/** "kind name" of every top-level component of the given schema files. */
function globals(paths: string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const doc = parse(p);
    try {
      for (const kind of KINDS) {
        for (const n of doc.find(`/xs:schema/xs:${kind}/@name`, XS)) out.add(`${kind} ${n.content}`);
      }
    } finally {
      doc.dispose();
    }
  }
  return [...out].sort();
}

interface Ref {
  from: string;
  kind: 'import' | 'include' | 'redefine';
  namespace: string;
  location: string;
}

const schemaFiles = readdirSync(SCHEMA_DIR)
  .filter((f) => f.endsWith('.xsd'))
  .sort();

function references(): Ref[] {
  const out: Ref[] = [];
  for (const f of schemaFiles) {
    const doc = parse(join(SCHEMA_DIR, f));
    try {
      for (const kind of ['import', 'include', 'redefine'] as const) {
        const nodes = doc.find(`/xs:schema/xs:${kind}`, XS);
        nodes.forEach((_, i) => {
          const at = `/xs:schema/xs:${kind}[${i + 1}]`;
          out.push({
            from: f,
            kind,
            namespace: String(doc.eval(`string(${at}/@namespace)`, XS)),
            location: String(doc.eval(`string(${at}/@schemaLocation)`, XS)),
          });
        });
      }
    } finally {
      doc.dispose();
    }
  }
  return out;
}

function targetNamespace(file: string): string {
  const doc = parse(join(SCHEMA_DIR, file));
  try {
    return String(doc.eval('string(/xs:schema/@targetNamespace)', XS));
  } finally {
    doc.dispose();
  }
}

describe('schemas/ imports and includes', () => {
  const refs = references();

  it('contains exactly the entry files, their parts and all.xsd', () => {
    expect(schemaFiles).toEqual([...Object.values(ENTRY), ...Object.keys(PARTS), 'all.xsd'].sort());
  });

  it('uses only relative locations of sibling files, never a URL, never XMLSchema.xsd', () => {
    for (const r of refs) {
      expect(r.location, `${r.from}: ${r.kind} without schemaLocation`).not.toBe('');
      expect(r.location, `${r.from}: ${r.location}`).toMatch(/^[A-Za-z0-9._-]+\.xsd$/);
      expect(schemaFiles, `${r.from}: ${r.location} does not exist`).toContain(r.location);
      expect(r.namespace).not.toBe(NS.xs);
    }
    for (const f of schemaFiles) {
      expect(readFileSync(join(SCHEMA_DIR, f), 'utf8'), f).not.toMatch(/schemaLocation="[a-z]+:/i);
    }
  });

  it('imports each namespace from its one entry file, whose targetNamespace it is', () => {
    for (const r of refs.filter((x) => x.kind === 'import')) {
      expect(ENTRY[r.namespace], `${r.from} imports unknown namespace ${r.namespace}`).toBeDefined();
      expect(r.location, `${r.from} imports ${r.namespace}`).toBe(ENTRY[r.namespace]);
    }
    for (const [ns, file] of Object.entries(ENTRY)) expect(targetNamespace(file), file).toBe(ns);
  });

  it('includes the parts of ws-agreement from ws-agreement.xsd, each once, and from parts that need them', () => {
    expect(refs.filter((r) => r.kind === 'redefine')).toEqual([]);
    const includes = refs.filter((r) => r.kind === 'include');
    expect(includes.map((r) => `${r.from} -> ${r.location}`).sort()).toEqual(
      [...Object.entries(PARTS).map(([part, entry]) => `${entry} -> ${part}`), ...PART_INCLUDES].sort(),
    );
    for (const [part, entry] of Object.entries(PARTS)) expect(targetNamespace(part)).toBe(targetNamespace(entry));
  });

  it('all.xsd imports every namespace exactly once', () => {
    const imports = refs.filter((r) => r.from === 'all.xsd');
    expect(imports.every((r) => r.kind === 'import')).toBe(true);
    expect(imports.map((r) => r.namespace).sort()).toEqual(Object.keys(ENTRY).sort());
  });
});

describe('schemas/ declares every global component of the reference schemas', () => {
  it.each(Object.entries(REFERENCE_FILES))('namespace %s', (_ns, files) => {
    const ref = globals(files.ref.map((f) => join(REFERENCE_DIR, f)));
    const ours = globals(files.ours.map((f) => join(SCHEMA_DIR, f)));
    expect(ref.length).toBeGreaterThan(0);
    expect(ours).toEqual(ref);
  });
});

describe('every entry file compiles on its own with libxml2-wasm (no catalog)', () => {
  beforeAll(() => {
    xmlRegisterFsInputProviders();
  });
  afterAll(() => {
    xmlCleanupInputProvider();
  });

  it.each([...Object.values(ENTRY), 'all.xsd'])('%s', (file) => {
    const doc = parse(join(SCHEMA_DIR, file));
    try {
      const validator = XsdValidator.fromDoc(doc);
      validator.dispose();
    } finally {
      doc.dispose();
    }
  });
});

const haveXmllint = requireTool('xmllint');
if (!haveXmllint) {
  it.skip('xmllint is not on PATH and WSAG_SKIP_INTEROP=1: xmllint compile checks skipped', () => {});
}

describe.runIf(haveXmllint)('every entry file compiles on its own with xmllint, no catalog, no warning', () => {
  afterAll(cleanupScratch);
  const probe = join(REFERENCE_DIR, 'samples', 'wsag4j-sample-template.filled.xml');

  it.each([...Object.values(ENTRY), 'all.xsd'])('%s', (file) => {
    // validating any document compiles the schema; a compile failure throws (exit 5)
    const v = validateWithOurs(probe, join(SCHEMA_DIR, file));
    expect(v.stderr).not.toMatch(/warning|failed to compile/i);
    // only schemas that know wsag:Template can accept the probe
    const knowsWsag = ['ws-agreement.xsd', 'ws-agreement-negotiation.xsd', 'all.xsd'].includes(file);
    if (file === 'all.xsd') expect(v.valid).toBe(true);
    if (!knowsWsag) expect(v.valid).toBe(false);
  });
});
