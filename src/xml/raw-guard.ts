import { isUtf8 } from 'node:buffer';
import { MalformedMessage, MessageTooLarge, UnsupportedMediaType } from '../domain/errors.js';

export interface RawGuardLimits {
  maxBytes: number;
  maxDepth: number;
}

/**
 * What the guard saw of the root's last child element (a SOAP envelope's Body): how many
 * child elements it has, and where the first one's content lies (from just after its start
 * tag to its end tag; none when it is empty or written `<x/>`).
 */
export interface LastChildOutline {
  children: number;
  content?: { start: number; end: number };
}

/**
 * Checks a request body before any XML parser sees it: size, no DTD (so no entity
 * declarations, no external entities, no expansion bombs), no processing instruction
 * other than the XML declaration, element nesting depth, and namespace names that are
 * absolute URIs. One linear pass.
 */
export function guardRawXml(body: Buffer, limits: RawGuardLimits, outline?: LastChildOutline): string {
  if (body.length > limits.maxBytes) {
    throw new MessageTooLarge(`request body is ${body.length} bytes; the limit is ${limits.maxBytes} bytes`);
  }
  if (body.length === 0) throw new MalformedMessage('request body is empty: a SOAP envelope is required');
  // Strict UTF-8: a byte sequence that is not UTF-8 is refused, never silently replaced.
  if (!isUtf8(body))
    throw new MalformedMessage(
      `request body is not valid UTF-8 (byte ${firstInvalidUtf8(body)} starts a sequence that is not): send UTF-8`,
    );
  const text = body.toString('utf8');
  const declared = /^\uFEFF?<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']/.exec(text)?.[1];
  if (declared !== undefined && !/^utf-?8$/i.test(declared)) {
    throw new UnsupportedMediaType(
      `the XML declaration says encoding "${declared.slice(0, 40)}"; this server reads UTF-8 only`,
    );
  }
  let depth = 0;
  let i = 0;
  let nextXmlns = text.indexOf('xmlns');
  const n = text.length;
  while (i < n) {
    const lt = text.indexOf('<', i);
    if (lt < 0) break;
    const next = text[lt + 1];
    const markup = markupAt(text, lt);
    if (markup) {
      if (markup.what === 'declaration') {
        if (/^<!DOCTYPE/i.test(text.slice(lt, lt + 9))) {
          throw new MalformedMessage(
            'DOCTYPE is not allowed in SOAP messages: no DTDs, entity declarations or external entities are processed',
          );
        }
        throw new MalformedMessage(`markup declaration "${text.slice(lt, lt + 10)}" is not allowed`);
      }
      if (markup.end < 0) throw new MalformedMessage(`unterminated ${markup.what}`);
      if (
        markup.what === 'processing instruction' &&
        (!/^<\?xml[\s?]/.test(text.slice(lt, lt + 6)) || lt !== firstNonSpace(text))
      ) {
        throw new MalformedMessage('processing instructions are not allowed in SOAP messages');
      }
      i = markup.end;
      continue;
    }
    const close = tagEnd(text, lt + 1);
    if (next === '/') {
      depth--;
      // The first child's content ends at the end tag that brings the depth back (later children have no outline).
      if (outline && depth === 2 && outline.content?.end === -1) outline.content.end = lt;
    } else {
      const empty = text[close - 1] === '/';
      if (outline && depth === 1) {
        // A child of the root begins: the outline is of the last one.
        outline.children = 0;
        delete outline.content;
      } else if (outline && depth === 2 && ++outline.children === 1 && !empty) {
        outline.content = { start: close + 1, end: -1 };
      }
      if (!empty) {
        depth++;
        if (depth > limits.maxDepth) {
          throw new MalformedMessage(`XML nesting deeper than ${limits.maxDepth} elements is not accepted`);
        }
      }
    }
    if (nextXmlns >= 0 && nextXmlns < close) {
      if (next !== '/') checkNamespaceNames(text.slice(lt, close));
      nextXmlns = text.indexOf('xmlns', close);
    }
    i = close + 1;
  }
  return text;
}

/**
 * Namespace names must be absolute URIs: Namespaces in XML deprecates relative ones, and
 * Canonical XML (what signatures and stored documents are made of) cannot write them, so
 * they are refused here, naming the declaration, before any document is built from them.
 * libxml2 checks the URI syntax itself when it parses; this checks for the scheme.
 */
function checkNamespaceNames(tag: string): void {
  // Attribute by attribute (name, =, quoted value), so text inside another value is never taken for a declaration.
  const attribute = /\s+([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
  attribute.lastIndex = tag.search(/[\s/>]|$/);
  for (let m = attribute.exec(tag); m; m = attribute.exec(tag)) {
    const name = m[1] as string;
    if (name !== 'xmlns' && !name.startsWith('xmlns:')) continue;
    const value = decodeReferences(m[2] ?? m[3] ?? '');
    if (value !== '' && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) {
      throw new MalformedMessage(
        `namespace name ${name}="${value.slice(0, 80)}" is a relative URI: namespace names must be absolute ` +
          `URIs (with a scheme, such as urn: or http:)`,
      );
    }
  }
}

const namedReferences: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

/** An attribute value's character and predefined entity references replaced (there is no DTD to declare others). */
function decodeReferences(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
    return namedReferences[ref] ?? whole;
  });
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence. */
function firstInvalidUtf8(b: Buffer): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i] as number;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > b.length || !isUtf8(b.subarray(i, i + n))) return i;
    i += n;
  }
  return b.length;
}

/**
 * What starts at `lt` (a `<`) when it is not a tag: a comment, CDATA section or processing
 * instruction with the index just past it (-1 when it never ends), or another markup
 * declaration (a DOCTYPE). Undefined for a tag.
 */
export function markupAt(
  text: string,
  lt: number,
): { what: 'comment' | 'CDATA section' | 'processing instruction'; end: number } | { what: 'declaration' } | undefined {
  const next = text[lt + 1];
  if (next !== '!' && next !== '?') return undefined; // a tag: the usual case, answered first
  const past = (terminator: string, from: number) => {
    const end = text.indexOf(terminator, from);
    return end < 0 ? -1 : end + terminator.length;
  };
  if (text.startsWith('<!--', lt)) return { what: 'comment', end: past('-->', lt + 4) };
  if (text.startsWith('<![CDATA[', lt)) return { what: 'CDATA section', end: past(']]>', lt + 9) };
  if (text.startsWith('<?', lt)) return { what: 'processing instruction', end: past('?>', lt + 2) };
  if (text.startsWith('<!', lt)) return { what: 'declaration' };
  return undefined;
}

/** Index of the `>` ending the tag that starts before `from`, skipping quoted attribute values. */
export function tagEnd(text: string, from: number): number {
  let quote: string | undefined;
  for (let j = from; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return j;
    }
  }
  throw new MalformedMessage('unterminated tag at end of message');
}

function firstNonSpace(text: string): number {
  const m = /\S/.exec(text);
  return m ? m.index : 0;
}
