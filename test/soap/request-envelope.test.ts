import { describe, expect, it } from 'vitest';
import { MalformedMessage } from '../../src/domain/errors.js';
import { readEnvelope } from '../../src/soap/envelope.js';
import { LEAVE_OUT_FROM_CHARS, readRequest } from '../../src/soap/request-envelope.js';
import { c14n } from '../../src/xml/item-constraint.js';
import { parseXml } from '../../src/xml/libxml.js';
import { guardRawXml, type LastChildOutline } from '../../src/xml/raw-guard.js';

const soap = 'http://schemas.xmlsoap.org/soap/envelope/';
const big = 'x'.repeat(LEAVE_OUT_FROM_CHARS);
const operation = (content: string) => `<op:Create xmlns:op="urn:op"><op:Offer>${content}</op:Offer></op:Create>`;
const envelope = (body: string, after = '') =>
  `<soap:Envelope xmlns:soap="${soap}"><soap:Header><h:MessageID xmlns:h="urn:h">m-1</h:MessageID></soap:Header><soap:Body>${body}</soap:Body>${after}</soap:Envelope>`;

/** The Body's element of `xml` parsed whole, as canonical XML. */
function wholeBody(xml: string): string {
  const doc = parseXml(xml, 'expected');
  try {
    return c14n(readEnvelope(doc).body);
  } finally {
    doc.dispose();
  }
}

/** Reads `xml` as the endpoint does, counting the documents parsed and the characters parsed in each. */
function read(xml: string, readsBodyFromText = true) {
  const bytes = Buffer.from(xml);
  const outline: LastChildOutline = { children: 0 };
  const text = guardRawXml(bytes, { maxBytes: 1 << 20, maxDepth: 32 }, outline);
  const parses: number[] = [];
  const received = readRequest(
    bytes,
    text,
    outline,
    (namespace, name) => readsBodyFromText && namespace === 'urn:op' && name === 'Create',
    (input, what) => {
      parses.push(input.length);
      return parseXml(input, what);
    },
  );
  return { received, parses };
}

describe('reading a SOAP request (readRequest)', () => {
  it("parses the envelope without a large operation element's content, and the whole only when the Body is asked for", () => {
    const xml = envelope(operation(big));
    const { received, parses } = read(xml);
    try {
      expect(received.operation).toEqual({ namespaceUri: 'urn:op', name: 'Create' });
      expect(received.request.headers.map((h) => [h.name, h.content])).toEqual([['MessageID', 'm-1']]);
      expect(received.request.text).toBe(xml);
      expect(parses).toEqual([xml.length - operation(big).length + '<op:Create xmlns:op="urn:op"></op:Create>'.length]);
      expect(c14n(received.request.body)).toBe(wholeBody(xml));
      expect(parses).toHaveLength(2);
      void received.request.body;
      expect(parses).toHaveLength(2);
    } finally {
      received.dispose();
    }
  });

  it('refuses a Body that is not well-formed when it is asked for (the thread reading the text refuses it alike)', () => {
    const { received } = read(envelope(operation(`<a>${big}</b>`)));
    try {
      expect(received.operation.name).toBe('Create');
      expect(() => received.request.body).toThrow(MalformedMessage);
      expect(() => received.request.body).toThrow(/Opening and ending tag mismatch: a/);
    } finally {
      received.dispose();
    }
  });

  it('parses the whole at once for a small Body, another operation, a part after the Body, or two Body elements', () => {
    for (const [xml, readsBodyFromText] of [
      [envelope(operation('small')), true],
      [envelope(operation(big)), false],
      [envelope(operation(big), '<x:After xmlns:x="urn:x"/>'), true],
    ] as const) {
      const { received, parses } = read(xml, readsBodyFromText);
      try {
        expect(parses[parses.length - 1]).toBe(Buffer.byteLength(xml));
        expect(c14n(received.request.body)).toBe(wholeBody(xml));
      } finally {
        received.dispose();
      }
    }
    // The guard outlines the last Body; readEnvelope reads the first.
    const twoBodies = `<soap:Envelope xmlns:soap="${soap}"><soap:Body>${operation('first')}</soap:Body><soap:Body>${operation(big)}</soap:Body></soap:Envelope>`;
    const { received, parses } = read(twoBodies);
    try {
      expect(parses).toEqual([twoBodies.length - `<op:Offer>${big}</op:Offer>`.length, twoBodies.length]);
      expect(c14n(received.request.body)).toBe(wholeBody(twoBodies));
    } finally {
      received.dispose();
    }
  });

  it('answers what readEnvelope answers for a Body of two elements', () => {
    expect(() => read(envelope(operation(big) + operation(big)))).toThrow(
      /the SOAP Body must hold exactly one element \(document\/literal\), found 2/,
    );
  });
});
