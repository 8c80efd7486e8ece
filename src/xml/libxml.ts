import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ParseOption,
  RelaxNGValidator,
  XmlAttribute,
  XmlBufferInputProvider,
  XmlCData,
  XmlComment,
  XmlDocument,
  XmlDtd,
  XmlElement,
  XmlEntityReference,
  XmlParseError,
  xmlRegisterInputProvider,
  XmlText,
  XmlXPath,
  XsdValidator,
} from 'libxml2-wasm';
import { MalformedMessage } from '../domain/errors.js';

/** The project's own schemas/ folder. */
export const schemasDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schemas');

/**
 * libxml2 may read only our own schema files: they are served from memory, so no
 * document can make the parser or the schema compiler open another file or the network.
 */
let registered = false;
export function registerSchemaFiles(): void {
  if (registered) return;
  const buffers: Record<string, Uint8Array> = {};
  for (const file of fs.readdirSync(schemasDir)) {
    if (file.endsWith('.xsd')) buffers[path.join(schemasDir, file)] = fs.readFileSync(path.join(schemasDir, file));
  }
  xmlRegisterInputProvider(new XmlBufferInputProvider(buffers));
  registered = true;
}

/**
 * libxml2-wasm's classes are compiled from TypeScript decorators, whose emitted code renames
 * each class with Object.defineProperty(Class, 'name', ...). That leaves the constructor
 * with dictionary-mode properties, and V8 (Node 20) then never manages to optimise the code
 * that constructs them (every node wrapper: parent, root, children, XPath results): each
 * attempt is thrown away "due to dependency change" and tried again, thousands of times a
 * minute on the compiler threads, while the constructors run unoptimised. An object that
 * inherits from a class and gets a property of its own makes V8 give the class fast
 * properties, once per thread (test/xml/libxml-classes.test.ts).
 */
function giveFastProperties(classes: readonly object[]): void {
  for (const type of classes) {
    const heir = Object.create(type) as { made?: boolean };
    heir.made = true;
  }
}
giveFastProperties([
  XmlDocument,
  XmlElement,
  XmlAttribute,
  XmlText,
  XmlCData,
  XmlComment,
  XmlEntityReference,
  XmlDtd,
  XmlXPath,
  XsdValidator,
  RelaxNGValidator,
]);

/** Parser options: no network, no external entities, no entity substitution. */
const safeOptions = ParseOption.XML_PARSE_NONET | ParseOption.XML_PARSE_NO_XXE | ParseOption.XML_PARSE_NOBLANKS;

/**
 * Parses XML text, or its UTF-8 bytes; malformed XML becomes MalformedMessage naming line
 * and column. `keepBlanks` keeps whitespace-only text nodes, which XML signatures digest.
 *
 * Text is handed to libxml2 as bytes encoded by Buffer: libxml2-wasm's own string path
 * measures and encodes it a character at a time in JavaScript, a fifth of the parse of a
 * CreateAgreement envelope. The bytes are the same, and so is the document (libxml2 is
 * given no encoding either way: it reads UTF-8 unless a declaration says otherwise).
 */
export function parseXml(
  text: string | Uint8Array,
  what = 'message',
  url?: string,
  { keepBlanks = false } = {},
): XmlDocument {
  const option = keepBlanks ? safeOptions & ~ParseOption.XML_PARSE_NOBLANKS : safeOptions;
  try {
    return XmlDocument.fromBuffer(typeof text === 'string' ? Buffer.from(text, 'utf8') : text, { option, url });
  } catch (error) {
    if (error instanceof XmlParseError) {
      const detail = error.details[0];
      const where = detail ? ` at line ${detail.line}, column ${detail.col}` : '';
      throw new MalformedMessage(
        `${what} is not well-formed XML${where}: ${(detail?.message ?? error.message).trim()}`,
      );
    }
    throw error;
  }
}

/** Runs `use` on a parsed document and always frees the document's wasm memory. */
export function withXml<T>(
  text: string,
  what: string,
  use: (doc: XmlDocument) => T,
  options: { keepBlanks?: boolean } = {},
): T {
  const doc = parseXml(text, what, undefined, options);
  try {
    return use(doc);
  } finally {
    doc.dispose();
  }
}
