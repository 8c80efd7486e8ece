import type { IncomingMessage } from 'node:http';
import { MalformedMessage, UnsupportedMediaType } from '../domain/errors.js';
import type { SoapVersion } from './envelope.js';

/**
 * The SOAP version a Content-Type names: text/xml is SOAP 1.1, application/soap+xml SOAP 1.2
 * (WS-I Basic Profile R1115, SOAP 1.2 part 2 section 7.1.4); anything else is refused with 415,
 * so JSON or a form posted to a SOAP port is never read as SOAP.
 */
export function soapVersionOf(req: IncomingMessage): SoapVersion {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'text/xml') return '1.1';
  if (type === 'application/soap+xml') return '1.2';
  throw new UnsupportedMediaType(
    `Content-Type ${type ? `"${type.slice(0, 60)}"` : 'missing'}: a SOAP port reads text/xml (SOAP 1.1) or ` +
      'application/soap+xml (SOAP 1.2)',
  );
}

/** The version to answer a refusal in before the envelope was read: the one the Content-Type names, else 1.1. */
export function likelySoapVersion(req: IncomingMessage): SoapVersion {
  return (req.headers['content-type'] ?? '').toLowerCase().includes('application/soap+xml') ? '1.2' : '1.1';
}

type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'latin1';

const names: Record<string, Encoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'us-ascii': 'utf-8',
  ascii: 'utf-8',
  'utf-16': 'utf-16le',
  'utf-16le': 'utf-16le',
  'utf-16be': 'utf-16be',
  'iso-8859-1': 'latin1',
  'iso8859-1': 'latin1',
  latin1: 'latin1',
};

/**
 * The request's bytes as UTF-8, which the raw guard and libxml2 read. XML 1.0 parsers must
 * read UTF-16 (and WS-I Basic Profile R1012 allows it); ISO-8859-1 is common among older
 * stacks. The encoding is, in order: a byte order mark, the Content-Type's charset, the XML
 * declaration's encoding; else UTF-8. A UTF-16 or ISO-8859-1 body is decoded and its XML
 * declaration rewritten to say UTF-8; another charset, or UTF-16 bytes that are not, is refused
 * by name. Content-Encoding (compression) is not read on SOAP ports.
 */
export function utf8Body(req: IncomingMessage, body: Buffer): Buffer {
  const contentEncoding = req.headers['content-encoding'];
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity')
    throw new UnsupportedMediaType(
      `Content-Encoding "${contentEncoding.slice(0, 40)}" is not supported on SOAP ports: send the message ` +
        'uncompressed',
    );
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  const declaration = declaredName(body);
  const marked = byteOrderMark(body);
  const encoding =
    marked ??
    named(charset, 'the Content-Type charset') ??
    named(declaration, 'the XML declaration encoding') ??
    'utf-8';
  if (encoding.startsWith('utf-16') && marked === undefined)
    throw new MalformedMessage(
      'the message says it is UTF-16, but it does not start as UTF-16 does (a byte order mark, or "<" as two bytes)',
    );
  if (encoding === 'utf-8' && (declaration === undefined || /^utf-?8$/i.test(declaration))) return body;
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw new MalformedMessage(`request body is not valid ${encoding.toUpperCase()}, as its encoding says it is`);
  }
  const withDeclaration = text.replace(/^(<\?xml[^>]*?\sencoding\s*=\s*)(["'])[^"']*\2/, '$1$2UTF-8$2');
  return Buffer.from(withDeclaration, 'utf8');
}

function byteOrderMark(body: Buffer): Encoding | undefined {
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  // No mark, but '<' as UTF-16 (XML 1.0 appendix F): a declaration without a BOM.
  if (body[0] === 0x00 && body[1] === 0x3c) return 'utf-16be';
  if (body[0] === 0x3c && body[1] === 0x00) return 'utf-16le';
  return undefined;
}

function named(name: string | undefined, where: string): Encoding | undefined {
  if (name === undefined) return undefined;
  const encoding = names[name.toLowerCase()];
  if (!encoding)
    throw new UnsupportedMediaType(
      `${where} "${name.slice(0, 40)}" is not read here: send the SOAP message as UTF-8 (UTF-16 and ISO-8859-1 ` +
        'are read too)',
    );
  return encoding;
}

/** The encoding an ASCII-compatible body's XML declaration names. */
function declaredName(body: Buffer): string | undefined {
  const head = body.subarray(0, 200).toString('latin1');
  return /^(?:\xef\xbb\xbf)?<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']/.exec(head)?.[1];
}
