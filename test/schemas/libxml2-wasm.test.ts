/**
 * The server validates with libxml2-wasm (no catalog support), not xmllint: the same corpus
 * and the same sla: cases must get the same verdicts there, with errors naming the element.
 * Needs no external tool.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { XmlDocument, XsdValidator, xmlCleanupInputProvider } from 'libxml2-wasm';
import { xmlRegisterFsInputProviders } from 'libxml2-wasm/lib/nodejs.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, OUR_ALL_XSD, REFERENCE_SAMPLE_TEMPLATE, corpusFiles, label } from './helpers.js';
import { INVALID_SLA_CASES, VALID_SLA_CASES } from './sla-docs.js';

let schemaDoc: XmlDocument | undefined;
let validator: XsdValidator | undefined;

beforeAll(() => {
  // relative schemaLocations are resolved against the schema's URL, read from the file system
  xmlRegisterFsInputProviders();
  schemaDoc = XmlDocument.fromBuffer(readFileSync(OUR_ALL_XSD), { url: pathToFileURL(OUR_ALL_XSD).href });
  validator = XsdValidator.fromDoc(schemaDoc);
});

afterAll(() => {
  validator?.dispose();
  schemaDoc?.dispose();
  xmlCleanupInputProvider();
});

/** undefined if valid, else the validation error message */
function check(xml: Uint8Array | string): string | undefined {
  if (validator === undefined) throw new Error('schema not compiled');
  const doc = typeof xml === 'string' ? XmlDocument.fromString(xml) : XmlDocument.fromBuffer(xml);
  try {
    validator.validate(doc);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    doc.dispose();
  }
}

describe('schemas/all.xsd under libxml2-wasm', () => {
  const valid = [REFERENCE_SAMPLE_TEMPLATE, ...corpusFiles('valid'), ...corpusFiles('differences')];
  const invalid = corpusFiles('invalid');

  it.each(valid.map((f) => [label(f), f]))('accepts %s', (_name, file) => {
    expect(check(readFileSync(file))).toBeUndefined();
  });

  it.each(invalid.map((f) => [label(f), f]))('rejects %s', (_name, file) => {
    expect(check(readFileSync(file))).toBeDefined();
  });

  it.each(VALID_SLA_CASES)('accepts sla case: $name', (c) => {
    expect(check(c.xml)).toBeUndefined();
  });

  it.each(INVALID_SLA_CASES)('rejects sla case: $name, naming the element', (c) => {
    const message = check(c.xml);
    expect(message).toBeDefined();
    expect(message).toContain(`{${NS.sla}}${c.rejects ?? '?'}'`);
  });
});
