import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ActionNotSupported,
  CannotSatisfy,
  InternalError,
  MalformedMessage,
  MessageAddressingHeaderRequired,
  MessageTooLarge,
  MustUnderstand,
  NotAuthenticated,
  OnlyAnonymousAddressSupported,
  ServiceUnavailable,
  UnsupportedMediaType,
  VersionMismatch,
  type WsagError,
} from '../../src/domain/errors.js';
import { faultEnvelope } from '../../src/soap/fault.js';
import { addressingFaultAction } from '../../src/soap/operation.js';
import { ns } from '../../src/xml/namespaces.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { faultOf, post, soap11, soap12 } from '../support/soap.js';

/**
 * What the SOAP ports do on the wire beyond the operations: HTTP status codes per fault and
 * SOAP version, encodings other than UTF-8, media types, VersionMismatch, WS-Addressing's
 * own faults, and dot segments in paths.
 */
let server: TestServer;
let factory: string;
beforeAll(async () => {
  server = await startTestServer();
  factory = `${server.url}/wsag/AgreementFactory`;
});
afterAll(async () => server?.close());

const soap11Type = 'text/xml; charset=utf-8';
const soap12Type = 'application/soap+xml; charset=utf-8';
const getProperty = (name: string) =>
  `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">${name}</rp:GetResourceProperty>`;
const rpAction = 'http://docs.oasis-open.org/wsrf/rpw-2/GetResourceProperty/GetResourcePropertyRequest';
const wsa = `xmlns:wsa="${ns.wsa}"`;
const messageId = 'urn:uuid:0d8f5a8e-8a53-4c39-b5c3-1c2a7d9e4f10';
const header = (xml: string, name: string) =>
  new RegExp(`<wsa:${name}[^>]*>([^<]*)</wsa:${name}>`).exec(xml.slice(0, xml.indexOf('Body>')))?.[1];

describe('HTTP status of each fault, SOAP 1.1 and 1.2', () => {
  // SOAP 1.1: 500 for every fault (WS-I BP 1.1 R1126); SOAP 1.2: Sender 400, every other code 500
  // (SOAP 1.2 part 2, table 20); three refusals are HTTP's own, before SOAP is read.
  const table: [WsagError, number, number][] = [
    [new MalformedMessage('x'), 500, 400],
    [new CannotSatisfy('x'), 500, 500],
    [new NotAuthenticated('x'), 500, 400],
    [new ActionNotSupported('x', 'urn:a'), 500, 400],
    [new OnlyAnonymousAddressSupported('x', 'wsa:ReplyTo'), 500, 400],
    [new MessageAddressingHeaderRequired('x', 'wsa:Action'), 500, 400],
    [new MustUnderstand('x', [{ namespaceUri: 'urn:x', name: 'T' }]), 500, 500],
    [new VersionMismatch('x'), 500, 500],
    [new InternalError('x'), 500, 500],
    [new MessageTooLarge('x'), 413, 413],
    [new UnsupportedMediaType('x'), 415, 415],
    [new ServiceUnavailable('x'), 503, 503],
  ];
  it.each(table.map(([e, s11, s12]) => [e.code, e, s11, s12] as const))('%s', (_code, error, s11, s12) => {
    expect(faultEnvelope('1.1', error, new Date()).status).toBe(s11);
    expect(faultEnvelope('1.2', error, new Date()).status).toBe(s12);
  });

  it('a SOAP 1.2 MustUnderstand fault is answered 500 on the wire, a Sender fault 400', async () => {
    const unknown = `<x:T xmlns:x="urn:x" xmlns:s="${ns.soap12}" s:mustUnderstand="true">1</x:T>`;
    expect((await post(factory, soap12(getProperty('wsag:Template'), unknown), soap12Type)).status).toBe(500);
    expect((await post(factory, soap12(getProperty('wsag:Nothing')), soap12Type)).status).toBe(400);
    expect((await post(factory, soap11(getProperty('wsag:Nothing')), soap11Type)).status).toBe(500);
  });
});

describe('encodings and media types', () => {
  // The property name carries a non-ASCII letter; the fault names it, so the answer shows it was decoded.
  const named = (envelope: typeof soap11) => envelope(getProperty('wsag:Tëmplate'));

  it.each([
    ['UTF-16LE with a byte order mark', 'utf-16le', true],
    ['UTF-16BE with a byte order mark', 'utf-16be', true],
    ['UTF-16LE without one', 'utf-16le', false],
  ] as const)('reads %s', async (_name, encoding, bom) => {
    const utf16 = (text: string) => {
      const le = Buffer.from(
        `${bom ? '\uFEFF' : ''}${text.replace('encoding="UTF-8"', 'encoding="UTF-16"')}`,
        'utf16le',
      );
      return encoding === 'utf-16le' ? le : le.swap16();
    };
    const ok = await post(factory, utf16(soap11(getProperty('wsag:Template'))), 'text/xml; charset=utf-16');
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Template');
    const fault = await post(factory, utf16(named(soap11)), 'text/xml; charset=utf-16');
    expect(faultOf(fault.text).message).toContain('Tëmplate');
  });

  it('reads ISO-8859-1, named by the charset or by the XML declaration', async () => {
    const latin1 = named(soap12).replace('encoding="UTF-8"', 'encoding="ISO-8859-1"');
    const byCharset = await post(
      factory,
      Buffer.from(named(soap12), 'latin1'),
      'application/soap+xml; charset=iso-8859-1',
    );
    expect(faultOf(byCharset.text).message).toContain('Tëmplate');
    const byDeclaration = await post(factory, Buffer.from(latin1, 'latin1'), 'application/soap+xml');
    expect(faultOf(byDeclaration.text).message).toContain('Tëmplate');
  });

  it('refuses UTF-16 that is not, by name', async () => {
    const answer = await post(factory, soap11(getProperty('wsag:Template')), 'text/xml; charset=utf-16');
    expect(faultOf(answer.text)).toMatchObject({
      code: 'MalformedMessage',
      message: expect.stringContaining('UTF-16'),
    });
  });

  it.each(['application/json', 'application/xml', 'application/octet-stream'])('refuses %s with 415', async (type) => {
    const answer = await post(factory, soap11(getProperty('wsag:Template')), type);
    expect(answer.status).toBe(415);
    expect(faultOf(answer.text)).toMatchObject({
      code: 'UnsupportedMediaType',
      message: expect.stringContaining('text/xml (SOAP 1.1) or application/soap+xml (SOAP 1.2)'),
    });
  });
});

describe('VersionMismatch', () => {
  const foreign = `<e:Envelope xmlns:e="http://example.org/soap/3"><e:Body>${getProperty('wsag:Template')}</e:Body></e:Envelope>`;

  it('SOAP 1.1: faultcode VersionMismatch, 500', async () => {
    const answer = await post(factory, foreign, soap11Type);
    expect(answer.status).toBe(500);
    expect(answer.text).toContain('<faultcode>soap:VersionMismatch</faultcode>');
  });

  it('SOAP 1.2: Code VersionMismatch with an Upgrade header naming both envelopes, 500', async () => {
    const answer = await post(factory, foreign, soap12Type);
    expect(answer.status).toBe(500);
    expect(answer.text).toContain('<soap:Value>soap:VersionMismatch</soap:Value>');
    expect(answer.text).toContain(`<soap:SupportedEnvelope xmlns:v12="${ns.soap12}" qname="v12:Envelope"/>`);
    expect(answer.text).toContain(`<soap:SupportedEnvelope xmlns:v11="${ns.soap11}" qname="v11:Envelope"/>`);
  });
});

describe("WS-Addressing's own faults", () => {
  const addressed = (action: string, extra = '') =>
    `<wsa:Action ${wsa}>${action}</wsa:Action><wsa:MessageID ${wsa}>${messageId}</wsa:MessageID>${extra}`;

  it('an unknown wsa:Action is wsa:ActionNotSupported with wsa:ProblemAction (SOAP 1.2)', async () => {
    const answer = await post(
      factory,
      soap12(getProperty('wsag:Template'), addressed('urn:no-such-action')),
      soap12Type,
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(`<soap:Value xmlns:wsa="${ns.wsa}">wsa:ActionNotSupported</soap:Value>`);
    expect(answer.text).toContain('<wsa:ProblemAction');
    expect(answer.text).toContain('<wsa:Action>urn:no-such-action</wsa:Action></wsa:ProblemAction>');
    expect(header(answer.text, 'Action')).toBe(addressingFaultAction);
    expect(header(answer.text, 'RelatesTo')).toBe(messageId);
    expect(faultOf(answer.text).code).toBe('ActionNotSupported');
  });

  it('SOAP 1.1 carries the subcode as faultcode and the detail in a wsa:FaultDetail header', async () => {
    const answer = await post(
      factory,
      soap11(getProperty('wsag:Template'), addressed('urn:no-such-action')),
      soap11Type,
    );
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(/<faultcode xmlns:wsa="[^"]+">wsa:ActionNotSupported<\/faultcode>/);
    expect(answer.text.slice(0, answer.text.indexOf('Body>'))).toContain('<wsa:FaultDetail');
  });

  it('a ReplyTo other than anonymous is wsa:OnlyAnonymousAddressSupported; anonymous is answered', async () => {
    const replyTo = (address: string) => `<wsa:ReplyTo ${wsa}><wsa:Address>${address}</wsa:Address></wsa:ReplyTo>`;
    const refused = await post(
      factory,
      soap12(getProperty('wsag:Template'), addressed(rpAction, replyTo('http://broker.example.org/replies'))),
      soap12Type,
    );
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('wsa:OnlyAnonymousAddressSupported</soap:Value>');
    expect(refused.text).toContain('>wsa:ReplyTo</wsa:ProblemHeaderQName>');
    expect(faultOf(refused.text).message).toContain('http://broker.example.org/replies');
    const answered = await post(
      factory,
      soap12(getProperty('wsag:Template'), addressed(rpAction, replyTo(`${ns.wsa}/anonymous`))),
      soap12Type,
    );
    expect(answered.status).toBe(200);
    expect(header(answered.text, 'RelatesTo')).toBe(messageId);
  });

  it('a MessageID without wsa:Action is wsa:MessageAddressingHeaderRequired naming wsa:Action', async () => {
    const answer = await post(
      factory,
      soap12(getProperty('wsag:Template'), `<wsa:MessageID ${wsa}>${messageId}</wsa:MessageID>`),
      soap12Type,
    );
    expect(answer.text).toContain('wsa:MessageAddressingHeaderRequired</soap:Value>');
    expect(answer.text).toContain('>wsa:Action</wsa:ProblemHeaderQName>');
  });
});

describe('paths with dot segments', () => {
  it('GET /wsag/../schemas/x.xsd serves /schemas/x.xsd (a relative location joined unresolved)', async () => {
    const { port } = new URL(server.url);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/wsag/../schemas/ws-agreement.xsd' }, (res) => {
          res.resume();
          resolve(res.statusCode);
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
  });
});
