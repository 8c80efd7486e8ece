/**
 * Shared helpers of the schema tests: where things are, and schema validation with xmllint
 * (reference schemas with their catalog; our schemas without any catalog).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const SCHEMA_DIR = join(PROJECT_ROOT, 'schemas');
export const OUR_ALL_XSD = join(SCHEMA_DIR, 'all.xsd');
export const CORPUS_DIR = join(PROJECT_ROOT, 'test', 'schemas', 'corpus');

/** The official schemas the tests validate against (test/reference/README.md); read-only reference data. */
export const REFERENCE_DIR = resolve(PROJECT_ROOT, 'test', 'reference', 'ws-agreement');
export const REFERENCE_ALL_XSD = join(REFERENCE_DIR, 'all.xsd');
export const REFERENCE_CATALOG = join(REFERENCE_DIR, 'catalog.xml');
export const REFERENCE_SAMPLE_TEMPLATE = join(REFERENCE_DIR, 'samples', 'wsag4j-sample-template.filled.xml');

export const NS = {
  xs: 'http://www.w3.org/2001/XMLSchema',
  xml: 'http://www.w3.org/XML/1998/namespace',
  wsa: 'http://www.w3.org/2005/08/addressing',
  wsrfBf: 'http://docs.oasis-open.org/wsrf/bf-2',
  wsrfRp: 'http://docs.oasis-open.org/wsrf/rp-2',
  wsag: 'http://schemas.ggf.org/graap/2007/03/ws-agreement',
  wsagNeg: 'http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation',
  jsdl: 'http://schemas.ggf.org/jsdl/2005/11/jsdl',
  jsdlPosix: 'http://schemas.ggf.org/jsdl/2005/11/jsdl-posix',
  arp: 'http://www.ogf.org/graap/AR/2009/04/',
  wsag4j: 'http://schemas.wsag4j.org/2009/07/wsag4j-scheduling-extensions',
  sla: 'http://schemas.wsag-server.org/2026/11/sla-terms',
  srv: 'http://schemas.wsag-server.org/2026/11/server',
} as const;

export interface Verdict {
  /** true if the document is schema-valid */
  valid: boolean;
  /** the validity errors, without the "file:line: element X: Schemas validity error : " prefix */
  errors: string[];
  /** everything xmllint wrote to stderr (for the whole run, when several documents were validated at once) */
  stderr: string;
}

let scratch: string | undefined;

/**
 * Run `xmllint --nonet --noout --schema SCHEMA DOC...` (execFileSync) once for many documents
 * and split its report per document. The schema is compiled once, which keeps the tests fast.
 * xmllint reports on stderr ("DOC validates" / "DOC fails to validate", errors prefixed with
 * "DOC:line:"), and execFileSync would drop the stderr of a successful run, so stderr goes to a
 * scratch file.
 */
function run(schema: string, docs: readonly string[], catalog: string): Map<string, Verdict> {
  scratch ??= mkdtempSync(join(tmpdir(), 'wsag-xmllint-'));
  const errFile = join(scratch, 'stderr.txt');
  const fd = openSync(errFile, 'w');
  let status: number;
  try {
    // XML_CATALOG_FILES="" means: no catalog at all (not even /etc/xml/catalog).
    execFileSync('xmllint', ['--nonet', '--noout', '--schema', schema, ...docs], {
      env: { ...process.env, XML_CATALOG_FILES: catalog },
      stdio: ['ignore', 'ignore', fd],
    });
    status = 0;
  } catch (e) {
    status = (e as { status?: number | null }).status ?? -1;
  } finally {
    closeSync(fd);
  }
  const stderr = readFileSync(errFile, 'utf8');
  if (status !== 0 && status !== 3) {
    // 1: a document is not well-formed, 5: schema failed to compile, ... - a broken test
    throw new Error(`xmllint exited with ${status} (schema ${schema}):\n${stderr}`);
  }
  const lines = stderr.split('\n');
  const verdicts = new Map<string, Verdict>();
  for (const doc of docs) {
    const own = lines.filter(
      (l) => l.startsWith(`${doc}:`) || l === `${doc} validates` || l === `${doc} fails to validate`,
    );
    const valid = own.includes(`${doc} validates`);
    if (!valid && !own.includes(`${doc} fails to validate`)) {
      throw new Error(`xmllint gave no verdict for ${doc} (schema ${schema}):\n${stderr}`);
    }
    const errors = own
      .filter((l) => l.includes('Schemas validity error'))
      .map((l) => l.replace(/^.*?Schemas validity error : /, ''));
    verdicts.set(doc, { valid, errors, stderr });
  }
  return verdicts;
}

function one(verdicts: Map<string, Verdict>, doc: string): Verdict {
  const v = verdicts.get(doc);
  if (v === undefined) throw new Error(`no verdict for ${doc}`);
  return v;
}

/** Remove the scratch directory (call from afterAll). */
export function cleanupScratch(): void {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
}

/** Validate documents with our schemas/all.xsd (or another of our entry files), offline, no catalog. */
export function validateAllWithOurs(docs: readonly string[], schema: string = OUR_ALL_XSD): Map<string, Verdict> {
  return run(schema, docs, '');
}

/** Validate documents with the reference all.xsd and its catalog. */
export function validateAllWithReference(docs: readonly string[]): Map<string, Verdict> {
  return run(REFERENCE_ALL_XSD, docs, REFERENCE_CATALOG);
}

/** Validate one document with our schemas/all.xsd (or another of our entry files). */
export function validateWithOurs(doc: string, schema: string = OUR_ALL_XSD): Verdict {
  return one(validateAllWithOurs([doc], schema), doc);
}

/** Validate one document with the reference schemas. */
export function validateWithReference(doc: string): Verdict {
  return one(validateAllWithReference([doc]), doc);
}

/** The qualified name ({ns}local) of the element the first error is about, if any. */
export function firstErrorElement(v: Verdict): string | undefined {
  const first = v.errors[0];
  if (first === undefined) return undefined;
  return /^Element '([^']+)'/.exec(first)?.[1];
}

/** The .xml files of a corpus sub-directory, sorted. */
export function corpusFiles(sub: string): string[] {
  const dir = join(CORPUS_DIR, sub);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.xml'))
    .sort()
    .map((f) => join(dir, f));
}

export function label(file: string): string {
  return basename(file);
}
