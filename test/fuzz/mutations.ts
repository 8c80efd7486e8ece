import fc from 'fast-check';
import type { FuzzRequest } from './seeds.js';

/**
 * What the fuzzer does to a valid request: structure (drop, repeat, rename or
 * move an element into another namespace), values (hostile text in any element or
 * attribute), bytes (flip, cut, insert invalid UTF-8 or control characters), SOAP headers
 * (unknown mustUnderstand blocks, odd MessageIDs and Actions) and HTTP (method, path,
 * Content-Type, charset, Content-Encoding, SOAPAction, a Content-Length over the limit).
 * Each case applies one to three of them to one seed.
 */
export const hostileValues = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e309',
  '-1e309',
  'NaN',
  'Infinity',
  '9007199254740993',
  '99999999999999999999',
  '2147483648',
  '-0',
  '0x10',
  '1 000',
  '99999-01-01T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '-2026-11-21T12:00:00Z',
  '0000-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-11-21T24:00:00Z',
  '2026-11-21T12:00:00+25:00',
  '1969-12-31T23:59:59Z',
  '2126-11-21T12:00:00Z',
  '2026-11-21T12:00:00',
  'P9999999Y',
  'PT0S',
  '-PT1H',
  'P',
  'PT1H30',
  'true',
  'false',
  'yes',
  'Full',
  'Background',
  'NonBinding',
  'Preparatory',
  'HardenedNode',
  'x'.repeat(5000),
  ']]>',
  '&amp;&lt;',
  '\u0000',
  '\u0001\u001f',
  '\ud800',
  '\uffff',
  '\u202e',
  '😀',
  'a\nb',
  '../../etc/passwd',
  '%00',
  '${now+PT1H}',
  '<![CDATA[x]]>',
];

const elementNames = [
  'TotalResourceCount',
  'Exact',
  'Deadline',
  'StartTime',
  'EndTime',
  'Duration',
  'GuaranteeLevel',
  'RequestKind',
  'NodesAvailable',
  'CompletedBy',
  'Terms',
  'All',
  'Context',
  'AgreementId',
  'NegotiationOffer',
  'x',
];
const namespaces = [
  'urn:example:other',
  'http://schemas.ggf.org/graap/2007/03/ws-agreement',
  'http://schemas.ggf.org/jsdl/2005/11/jsdl',
  '',
];

type Mutation = (request: FuzzRequest) => FuzzRequest;

/** Element spans (start of the start tag, end of the end tag) in an XML text; tags matched by name and depth. */
function elementSpans(text: string): Array<{ start: number; end: number; name: string }> {
  const spans: Array<{ start: number; end: number; name: string }> = [];
  const open: Array<{ start: number; name: string }> = [];
  const tag = /<(\/?)([\w.-]+(?::[\w.-]+)?)([^<>]*?)(\/?)>/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const [whole, close, name, , selfClosing] = m as unknown as [string, string, string, string, string];
    if (close) {
      const i = open.map((o) => o.name).lastIndexOf(name);
      if (i >= 0) spans.push({ start: (open[i] as { start: number }).start, end: m.index + whole.length, name });
      open.length = Math.max(0, i);
    } else if (selfClosing) {
      spans.push({ start: m.index, end: m.index + whole.length, name });
    } else {
      open.push({ start: m.index, name });
    }
  }
  return spans;
}

const withBody = (request: FuzzRequest, body: string | Buffer): FuzzRequest => ({
  ...request,
  body: typeof body === 'string' ? Buffer.from(body) : body,
});
const text = (request: FuzzRequest) => request.body?.toString() ?? '';

const structure: fc.Arbitrary<Mutation> = fc
  .tuple(
    fc.constantFrom('drop', 'repeat', 'rename', 'renamespace', 'nest'),
    fc.nat(),
    fc.constantFrom(...elementNames),
    fc.constantFrom(...namespaces),
  )
  .map(([kind, pick, newName, namespace]) => (request) => {
    const body = text(request);
    const spans = elementSpans(body);
    if (spans.length === 0) return request;
    const span = spans[pick % spans.length] as { start: number; end: number; name: string };
    const element = body.slice(span.start, span.end);
    const local = span.name.includes(':') ? (span.name.split(':')[1] as string) : span.name;
    switch (kind) {
      case 'drop':
        return withBody(request, body.slice(0, span.start) + body.slice(span.end));
      case 'repeat':
        return withBody(request, body.slice(0, span.end) + element.repeat(1 + (pick % 40)) + body.slice(span.end));
      case 'rename':
        return withBody(request, body.slice(0, span.start) + element.split(local).join(newName) + body.slice(span.end));
      case 'renamespace':
        return withBody(
          request,
          body.slice(0, span.start) +
            element
              .replace(/^<([\w.-]+:)?([\w.-]+)/, `<$2 xmlns="${namespace}"`)
              .replace(/<\/([\w.-]+:)?([\w.-]+)>$/, '</$2>') +
            body.slice(span.end),
        );
      default:
        return withBody(
          request,
          body.slice(0, span.start) +
            `<${newName}>`.repeat(70) +
            element +
            `</${newName}>`.repeat(70) +
            body.slice(span.end),
        );
    }
  });

const value: fc.Arbitrary<Mutation> = fc
  .tuple(fc.nat(), fc.constantFrom(...hostileValues), fc.boolean())
  .map(([pick, hostile, escape]) => (request) => {
    const body = text(request);
    const texts = [...body.matchAll(/>([^<>]+)</g)];
    const attributes = [...body.matchAll(/="([^"]*)"/g)];
    const written = escape ? hostile.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;') : hostile;
    const all = [
      ...texts.map((m) => ({ at: (m.index as number) + 1, length: (m[1] as string).length })),
      ...attributes.map((m) => ({ at: (m.index as number) + 2, length: (m[1] as string).length })),
    ];
    if (all.length === 0) return withBody(request, body + written);
    const spot = all[pick % all.length] as { at: number; length: number };
    return withBody(request, body.slice(0, spot.at) + written + body.slice(spot.at + spot.length));
  });

const bytes: fc.Arbitrary<Mutation> = fc
  .tuple(fc.constantFrom('flip', 'cut', 'utf8', 'control', 'bom'), fc.nat(), fc.integer({ min: 0, max: 255 }))
  .map(([kind, pick, byte]) => (request) => {
    const body = Buffer.from(request.body ?? Buffer.alloc(0));
    const at = body.length === 0 ? 0 : pick % body.length;
    switch (kind) {
      case 'flip':
        if (body.length > 0) body[at] = byte;
        return withBody(request, body);
      case 'cut':
        return withBody(request, body.subarray(0, at));
      case 'utf8':
        return withBody(
          request,
          Buffer.concat([
            body.subarray(0, at),
            Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]),
            body.subarray(at),
          ]),
        );
      case 'control':
        return withBody(request, Buffer.concat([body.subarray(0, at), Buffer.from([byte % 32]), body.subarray(at)]));
      default:
        return withBody(request, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]));
    }
  });

const soapHeader: fc.Arbitrary<Mutation> = fc
  .tuple(
    fc.constantFrom('mustUnderstand', 'messageId', 'action', 'twoBodies', 'doctype'),
    fc.constantFrom(...hostileValues),
  )
  .map(([kind, hostile]) => (request) => {
    const body = text(request);
    const escaped = hostile.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    const soap = /xmlns:soap="([^"]+)"/.exec(body)?.[1] ?? 'http://schemas.xmlsoap.org/soap/envelope/';
    const header = (block: string) =>
      body.includes('<soap:Header>')
        ? body.replace('<soap:Header>', `<soap:Header>${block}`)
        : body.replace('<soap:Body>', `<soap:Header>${block}</soap:Header><soap:Body>`);
    switch (kind) {
      case 'mustUnderstand':
        return withBody(
          request,
          header(
            `<x:Tx xmlns:x="urn:x" xmlns:s="${soap}" s:mustUnderstand="${hostile === '' ? '1' : escaped.slice(0, 10)}">1</x:Tx>`,
          ),
        );
      case 'messageId':
        return withBody(
          request,
          header(
            `<wsa:MessageID xmlns:wsa="http://www.w3.org/2005/08/addressing">${escaped}</wsa:MessageID><wsa:Action xmlns:wsa="http://www.w3.org/2005/08/addressing">${escaped}</wsa:Action>`,
          ),
        );
      // HTTP header values are visible ASCII (a client cannot send others).
      case 'action':
        return {
          ...request,
          headers: { ...request.headers, soapaction: `"${hostile.replace(/[^\x20-\x7e]|"/g, '').slice(0, 200)}"` },
        };
      case 'twoBodies':
        return withBody(request, body.replace(/<soap:Body>([\s\S]*)<\/soap:Body>/, '<soap:Body>$1$1</soap:Body>'));
      default:
        return withBody(
          request,
          `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${body.replace(/^<\?xml[^>]*\?>/, '')}`,
        );
    }
  });

const contentTypes = [
  'text/xml',
  'text/xml; charset=utf-8',
  'text/xml; charset=iso-8859-1',
  'text/xml; charset=klingon',
  'application/soap+xml; charset=utf-8',
  'application/json',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  '',
  'text/plain',
];

const http: fc.Arbitrary<Mutation> = fc
  .tuple(
    fc.constantFrom('method', 'path', 'contentType', 'encoding', 'tooLong'),
    fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'POST', 'HEAD'),
    fc.constantFrom(...contentTypes),
    fc.constantFrom(
      '%E0%A4%A',
      '%00',
      '..%2F..%2Fetc',
      'x'.repeat(3000),
      '%',
      ';',
      '?limit=99999',
      '?after=%FF',
      '?state=Nope',
      '?limit=1&limit=2',
      '?wsdl&x',
    ),
  )
  .map(([kind, method, contentType, junk]) => (request) => {
    switch (kind) {
      case 'method':
        return { ...request, method };
      case 'path':
        return {
          ...request,
          path: junk.startsWith('?') ? request.path.split('?')[0] + junk : `${request.path.split('?')[0]}/${junk}`,
        };
      case 'contentType':
        return { ...request, headers: { ...request.headers, 'content-type': contentType } };
      case 'encoding':
        return {
          ...request,
          headers: { ...request.headers, 'content-encoding': contentType.includes('json') ? 'deflate' : 'gzip' },
        };
      default:
        return { ...request, headers: { ...request.headers, 'x-declared-length': String(50_000_000) } };
    }
  });

/** A case: a seed and one to three mutations, applied in order. */
export function fuzzCase(seeds: readonly FuzzRequest[]): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      fc.nat({ max: seeds.length - 1 }),
      fc.array(fc.oneof(structure, value, value, bytes, soapHeader, http), { minLength: 1, maxLength: 3 }),
    )
    .map(([i, mutations]) => mutations.reduce((request, mutate) => mutate(request), seeds[i] as FuzzRequest));
}
