import fs from 'node:fs';
import path from 'node:path';
import { XmlDocument, XsdValidator, XmlValidateError, type XmlElement } from 'libxml2-wasm';
import { SchemaViolation } from '../domain/errors.js';
import { parseXml, registerSchemaFiles, schemasDir } from './libxml.js';
import { plainSchemaMessage } from './plain-schema-message.js';

/**
 * Compiles an XSD held as text, resolving includes and imports against schemas/.
 * Compilation errors name the schema problem; they are the caller's to wrap.
 */
export function compileSchema(xsdText: string, virtualName = 'all.xsd'): XsdValidator {
  registerSchemaFiles();
  const doc = parseXml(xsdText, 'schema', path.join(schemasDir, virtualName));
  try {
    return XsdValidator.fromDoc(doc);
  } finally {
    doc.dispose();
  }
}

/** Schema-validation messages from libxml2, trimmed to what a client can act on. */
export function describeValidationError(error: unknown): string[] {
  if (error instanceof XmlValidateError) {
    return error.details.slice(0, 3).map((d) => `line ${d.line}: ${d.message.trim()}`);
  }
  throw error;
}

/** Every namespace the server understands, compiled once (schemas/all.xsd). */
export class SchemaSet {
  private static shared: SchemaSet | undefined;
  private constructor(private readonly validator: XsdValidator) {}

  static get(): SchemaSet {
    if (!SchemaSet.shared) {
      const text = fs.readFileSync(path.join(schemasDir, 'all.xsd'), 'utf8');
      SchemaSet.shared = new SchemaSet(compileSchema(text, 'all.xsd'));
    }
    return SchemaSet.shared;
  }

  /** Throws SchemaViolation naming the element and the constraint that failed. */
  validate(target: XmlDocument | XmlElement, what: string): void {
    try {
      if (target instanceof XmlDocument) this.validator.validate(target);
      else this.validator.validate(target);
    } catch (error) {
      const found = describeValidationError(error);
      throw new SchemaViolation(
        `${what} violates the schema: ${found.map(plainSchemaMessage).join('; ')}`,
        found.join('; '),
      );
    }
  }
}

/**
 * Names of every element a schema file declares (global or local): for catching misspelt terms that lax validation
 * skips.
 */
export function declaredElementNames(file: string): Set<string> {
  const text = fs.readFileSync(path.join(schemasDir, file), 'utf8');
  return new Set([...text.matchAll(/<xs:element\s+name="([^"]+)"/g)].map((m) => m[1] as string));
}
