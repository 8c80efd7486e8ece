import { ns } from '../../src/xml/namespaces.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { LEAVE_OUT_FROM_CHARS } from '../../src/soap/request-envelope.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { agreementHeader, createAgreementBody, faultOf, post, soap11, soap12 } from '../support/soap.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Every bad input gets a SOAP Fault with a code and a message naming the problem, never a
 * stack trace, and the server keeps serving (PROTOCOL.md "Faults"; issue acceptance).
 */
let server: TestServer;
let factory: string;
let deadlineTemplate: string;

beforeAll(async () => {
  server = await startTestServer();
  factory = `${server.url}/wsag/AgreementFactory`;
  const templates = await new WsagClient(server.url).templates();
  deadlineTemplate = templates.find((t) => t.includes('<wsag:Name>deadline-job</wsag:Name>')) as string;
});
afterAll(async () => server.close());

async function expectFault(body: string | Buffer, code: string, mentions: RegExp, url = factory, contentType?: string) {
  const response = await post(url, body, contentType);
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.text).toContain('Fault>');
  expect(response.text).not.toMatch(/at .*\.(ts|js):\d+/); // no stack trace
  const fault = faultOf(response.text);
  expect(fault.code).toBe(code);
  expect(fault.message).toMatch(mentions);
  // ...and the server still serves a good request.
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  return fault;
}

function offerWith(edit: (offer: string) => string): string {
  return soap11(createAgreementBody(edit(offerFromTemplate(deadlineTemplate))));
}

describe('bad input is answered with a fault that names the problem', () => {
  it('malformed XML', async () => {
    await expectFault(
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><a></b></soap:Body></soap:Envelope>',
      'MalformedMessage',
      /not well-formed XML at line 1/,
    );
  });

  it('malformed XML inside an offer the event loop leaves to the document thread (readRequest), read there or here', async () => {
    const padding = `<!-- ${'x'.repeat(LEAVE_OUT_FROM_CHARS)} -->`;
    const broken = offerWith((offer) => offer.replace('</wsag:Terms>', `${padding}<a></b></wsag:Terms>`));
    const threaded = await startTestServer({ config: { documentThreads: 1 } });
    try {
      // Several at once, so that some are read on the document thread and some on the event loop.
      const faults = await Promise.all(
        Array.from({ length: 12 }, (_, i) => post(i % 2 ? factory : `${threaded.url}/wsag/AgreementFactory`, broken)),
      );
      for (const response of faults) {
        expect(faultOf(response.text)).toMatchObject({
          code: 'MalformedMessage',
          message: expect.stringMatching(
            /not well-formed XML at line \d+, column \d+: Opening and ending tag mismatch: a/,
          ),
        });
      }
      const metrics = await (await fetch(`${threaded.url}/metrics`)).text();
      expect(
        Number(/wsag_document_work_seconds_count\{work="read-offer",on="thread"\} (\d+)/.exec(metrics)?.[1]),
      ).toBeGreaterThan(0);
    } finally {
      await threaded.close();
    }
  });

  it('a DOCTYPE with an external entity', async () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>${soap11('<x>&x;</x>').replace(/^<\?xml[^>]*\?>/, '')}`;
    await expectFault(xxe, 'MalformedMessage', /DOCTYPE is not allowed/);
  });

  it('an entity-expansion bomb', async () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>`;
    await expectFault(lol, 'MalformedMessage', /DOCTYPE is not allowed/);
  });

  it('an offer declaring a relative namespace name, which no signed or canonical document could hold', async () => {
    const relative = offerWith((offer) => offer.replace('<wsag:Terms', '<wsag:Terms xmlns:mine="terms/local"'));
    await expectFault(relative, 'MalformedMessage', /namespace name xmlns:mine="terms\/local" is a relative URI/);
  });

  it('a 10 MiB body', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, ' ');
    const response = await post(factory, Buffer.concat([Buffer.from(soap11('<x/>')), big]));
    expect(response.status).toBe(413);
    expect(faultOf(response.text)).toEqual({
      code: 'MessageTooLarge',
      message: expect.stringMatching(/limit is 1048576 bytes/),
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('10,000-deep nesting', async () => {
    const deep = '<a>'.repeat(10_000) + '</a>'.repeat(10_000);
    await expectFault(soap11(deep), 'MalformedMessage', /nesting deeper than 64 elements/);
  });

  it('a body element in the wrong namespace', async () => {
    const body = '<wsag:CreateAgreementInput xmlns:wsag="http://example.org/not-wsag"/>';
    await expectFault(
      soap11(body),
      'ActionNotSupported',
      /no operation for \{http:\/\/example.org\/not-wsag\}CreateAgreementInput/,
    );
  });

  it('an envelope in the wrong namespace', async () => {
    await expectFault('<Envelope xmlns="urn:nope"><Body/></Envelope>', 'VersionMismatch', /namespace "urn:nope"/);
  });

  it('a root that is not an Envelope', async () => {
    await expectFault(`<soap:Body xmlns:soap="${ns.soap11}"/>`, 'MalformedMessage', /expected a SOAP Envelope/);
  });

  it('an unknown template', async () => {
    const fault = await expectFault(
      offerWith((o) =>
        o.replace(/<wsag:TemplateId>[^<]*<\/wsag:TemplateId>/, '<wsag:TemplateId>no-such</wsag:TemplateId>'),
      ),
      'UnknownTemplate',
      /TemplateId "no-such"/,
    );
    expect(fault.message).toContain('deadline-job');
  });

  it('a value violating an ItemConstraint facet names the Item and the facet', async () => {
    const fault = await expectFault(
      offerWith((o) =>
        o.replace(/<jsdl:TotalResourceCount><jsdl:Exact>4</, '<jsdl:TotalResourceCount><jsdl:Exact>512<'),
      ),
      'CreationConstraintViolation',
      /^Item NodeCount: 512 is more than 64, the most allowed$/,
    );
    expect(fault.technicalDetail).toMatch(/^Item 'NodeCount' at .*: value "512" violates facet maxInclusive/);
  });

  it('a guarantee term whose value fails its XSD type', async () => {
    const fault = await expectFault(
      offerWith((o) => o.replace(/<sla:Amount>50<\/sla:Amount>/, '<sla:Amount>fifty</sla:Amount>')),
      'SchemaViolation',
      /Amount/,
    );
    expect(fault.message).toMatch(/sla:Amount 'fifty' is not an amount such as 12\.50/);
    expect(fault.technicalDetail).toMatch(/'fifty' is not a valid value/);
  });

  it('a service description term whose value fails its XSD type', async () => {
    await expectFault(
      offerWith((o) => o.replace(/<sla:GuaranteeLevel>Standard</, '<sla:GuaranteeLevel>Platinum<')),
      'SchemaViolation',
      /GuaranteeLevel/,
    );
  });

  it('a misspelt term element that lax validation would skip', async () => {
    await expectFault(
      offerWith((o) =>
        o.replace(/<sla:ServiceLevel>/, '<sla:Servicelevel>').replace(/<\/sla:ServiceLevel>/, '</sla:Servicelevel>'),
      ),
      'SchemaViolation',
      /sla:Servicelevel is not an element of the term language/,
    );
  });

  it('a runtime of zero names the facet it breaks', async () => {
    await expectFault(
      offerWith((o) => o.replace(/<sla:RuntimeEstimate>3600</, '<sla:RuntimeEstimate>0<')),
      'SchemaViolation',
      /sla:RuntimeEstimate 0 is less than 1, the least allowed/,
    );
  });

  it('an unknown agreement id', async () => {
    const body =
      '<rp:GetResourceProperty xmlns:rp="http://docs.oasis-open.org/wsrf/rp-2" xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement">wsag:AgreementState</rp:GetResourceProperty>';
    await expectFault(
      soap11(body, agreementHeader('no-such-agreement')),
      'UnknownResource',
      /no agreement with id "no-such-agreement"/,
      `${server.url}/wsag/AgreementState`,
    );
  });

  it('a request to an agreement port without the reference parameter', async () => {
    const body =
      '<wsag:TerminateInput xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement"><wsag:Reason/></wsag:TerminateInput>';
    await expectFault(
      soap11(body),
      'UnknownResource',
      /srv:AgreementId reference parameter/,
      `${server.url}/wsag/Agreement`,
    );
  });

  it('an unknown resource property', async () => {
    const body =
      '<rp:GetResourceProperty xmlns:rp="http://docs.oasis-open.org/wsrf/rp-2" xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement">wsag:Nothing</rp:GetResourceProperty>';
    await expectFault(
      soap11(body),
      'InvalidResourcePropertyQName',
      /no property \{http:\/\/schemas.ggf.org\/graap\/2007\/03\/ws-agreement\}Nothing/,
    );
  });

  it('a SOAPAction that does not match the body', async () => {
    const response = await fetch(factory, {
      method: 'POST',
      headers: { 'content-type': 'text/xml', soapaction: '"urn:something-else"' },
      body: soap11('<rp:GetResourcePropertyDocument xmlns:rp="http://docs.oasis-open.org/wsrf/rp-2"/>'),
    });
    expect(faultOf(await response.text()).code).toBe('ActionNotSupported');
  });

  it('a wsa:Action header that does not match the body', async () => {
    const header = '<wsa:Action xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:wrong</wsa:Action>';
    await expectFault(
      soap11('<rp:GetResourcePropertyDocument xmlns:rp="http://docs.oasis-open.org/wsrf/rp-2"/>', header),
      'ActionNotSupported',
      /wsa:Action "urn:wrong" does not match GetResourcePropertyDocument/,
    );
  });

  it('SOAP 1.2 faults carry the code as a Subcode and use HTTP 400 for sender faults', async () => {
    const response = await post(factory, soap12('<x:Unknown xmlns:x="urn:x"/>'), 'application/soap+xml; charset=utf-8');
    expect(response.status).toBe(400);
    expect(response.contentType).toContain('application/soap+xml');
    expect(response.text).toContain('<soap:Value>soap:Sender</soap:Value>');
    expect(response.text).toContain('srv:ActionNotSupported');
  });

  it('an offer whose deadline has passed is refused by the scheduler with the reason', async () => {
    await expectFault(
      offerWith((o) => o.replace(/<sla:Deadline>[^<]*</, '<sla:Deadline>2000-01-01T00:00:00Z<')),
      'CannotSatisfy',
      /deadline 2000-01-01T00:00:00Z has already passed \(now /,
    );
  });

  it('an offer whose deadline cannot be met is refused by the scheduler with the reason', async () => {
    const fault = await expectFault(
      offerWith((o) => o.replace(/<sla:RuntimeEstimate>3600</, '<sla:RuntimeEstimate>600000<')),
      'CannotSatisfy',
      /deadline \S+ cannot be met: /,
    );
    expect(fault.message).toMatch(/with 1 covered outage\(s\), but only \d+ s remain until the deadline/);
  });
});

describe('a good request after all of that', () => {
  it('still creates an agreement', async () => {
    const response = await post(factory, soap11(createAgreementBody(offerFromTemplate(deadlineTemplate))));
    expect(response.status).toBe(200);
    expect(response.text).toContain('CreatedAgreementEPR');
  });
});
