import fs from 'node:fs';
import path from 'node:path';
import { XmlElement } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreementPorts } from '../../src/soap/agreement-ports.js';
import { wsdlDir } from '../../src/soap/http-endpoint.js';
import { negotiationPorts } from '../../src/soap/negotiation-ports.js';
import type { SoapServices } from '../../src/soap/services.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * What toolkits need of the WSDLs beyond the port types (wsdl.test.ts): the reference
 * parameter declared as a typed SOAP header (without it seven of eight stacks hand-wrote
 * srv:AgreementId), the srv schema imported, and a SOAP 1.1-only and a SOAP 1.2-only view
 * (Axis 1.x stops on the soap12 binding of the combined document).
 */
const ports = [...agreementPorts({} as SoapServices), ...negotiationPorts({} as SoapServices)];
const wsdlNs = {
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
  soap: 'http://schemas.xmlsoap.org/wsdl/soap/',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  xsd: ns.xs,
};

interface Described {
  /** `binding/operation` -> the element of each header part its input declares, `{ns}local`. */
  inputHeaders: Record<string, string[]>;
  bindings: { name: string; version: string }[];
  ports: { name: string; address: string }[];
  imports: string[];
}

function describeWsdl(text: string): Described {
  return withXml(text, 'WSDL', (doc) => {
    const elements = (context: { find: typeof doc.find }, xpath: string) =>
      context.find(xpath, wsdlNs).filter((n): n is XmlElement => n instanceof XmlElement);
    const value = (e: XmlElement, name: string) => e.attr(name)?.value ?? '';
    const qname = (e: XmlElement, q: string) => {
      const [prefix, local] = q.split(':') as [string, string];
      return `{${e.namespaceForPrefix(prefix)}}${local}`;
    };
    const partElement = (header: XmlElement) => {
      const message = qname(header, value(header, 'message')).replace(/^\{[^}]*\}/, '');
      const part = elements(doc, `/wsdl:definitions/wsdl:message[@name="${message}"]/wsdl:part`).find(
        (p) => value(p, 'name') === value(header, 'part'),
      );
      return part ? qname(part, value(part, 'element')) : `no part ${value(header, 'part')} in ${message}`;
    };
    const inputHeaders: Record<string, string[]> = {};
    const bindings = elements(doc, '/wsdl:definitions/wsdl:binding').map((b) => {
      for (const op of elements(b, 'wsdl:operation'))
        inputHeaders[`${value(b, 'name')}/${value(op, 'name')}`] = elements(
          op,
          'wsdl:input/soap:header | wsdl:input/soap12:header',
        ).map(partElement);
      return { name: value(b, 'name'), version: elements(b, 'soap12:binding').length > 0 ? '1.2' : '1.1' };
    });
    return {
      inputHeaders,
      bindings,
      ports: elements(doc, '/wsdl:definitions/wsdl:service/wsdl:port').map((p) => ({
        name: value(p, 'name'),
        address: value(elements(p, 'soap:address | soap12:address')[0] as XmlElement, 'location'),
      })),
      imports: elements(doc, '//xsd:import').map((i) => value(i, 'namespace')),
    };
  });
}

describe('each WSDL declares what toolkits generate typed code from', () => {
  it.each(ports.map((p) => [p.name, p] as const))('%s', (_name, port) => {
    const described = describeWsdl(fs.readFileSync(path.join(wsdlDir, port.wsdlFile), 'utf8'));
    expect(described.imports).toContain(ns.srv);
    const expected = port.referenceParameter ? [`{${ns.srv}}${port.referenceParameter}`] : [];
    expect(Object.keys(described.inputHeaders)).toHaveLength(port.operations.length * 2);
    for (const [operation, headers] of Object.entries(described.inputHeaders))
      expect(headers, `${port.wsdlFile} ${operation}`).toEqual(expected);
  });
});

describe('GET ?wsdl&soap=1.1 and &soap=1.2 serve one binding each', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const get = async (query: string, port = ports[0]) => {
    const response = await fetch(`${server.url}${port?.path}?${query}`);
    return { status: response.status, text: await response.text() };
  };

  it.each(ports.map((p) => [p.name, p] as const))('%s', async (_name, port) => {
    const both = describeWsdl((await get('wsdl', port)).text);
    expect(both.bindings.map((b) => b.version).sort()).toEqual(['1.1', '1.2']);
    for (const version of ['1.1', '1.2'] as const) {
      const answer = await get(`wsdl&soap=${version}`, port);
      expect(answer.status).toBe(200);
      const view = describeWsdl(answer.text);
      expect(view.bindings).toEqual(both.bindings.filter((b) => b.version === version));
      expect(view.ports).toEqual([
        { name: `${port.name}Soap${version.replace('.', '')}Port`, address: `${server.url}${port.path}` },
      ]);
      // Everything but the other version's binding and port is the combined document's.
      const other = both.bindings.find((b) => b.version !== version)?.name ?? '';
      expect(Object.keys(view.inputHeaders)).toEqual(
        Object.keys(both.inputHeaders).filter((k) => !k.startsWith(`${other}/`)),
      );
      expect(answer.text).not.toContain(version === '1.1' ? 'soap12:' : '<soap:');
    }
  });

  it('refuses another SOAP version by name, saying which views there are', async () => {
    const answer = await get('wsdl&soap=2.0');
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('soap=2.0 is not a SOAP version');
    expect(answer.text).toContain('?wsdl&soap=1.1');
  });
});
