import fs from 'node:fs';
import path from 'node:path';
import { XmlElement, type XmlDocument } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreementPorts } from '../../src/soap/agreement-ports.js';
import { addressPlaceholder, wsdlDir } from '../../src/soap/http-endpoint.js';
import { schemasDir } from '../../src/xml/libxml.js';
import type { Port } from '../../src/soap/operation.js';
import type { SoapServices } from '../../src/soap/services.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { lastJsonLine, pythonModuleProblem, requirePythonModule, runPython } from './python.js';

/**
 * wsdl/*.wsdl against the server that serves them: the addresses are rewritten, every
 * operation the server dispatches is declared with the same Body element and the same
 * SOAPAction / wsa:Action in both the SOAP 1.1 and the SOAP 1.2 binding, and Python zeep loads
 * each WSDL (from disk and from the server) and sees the same operations.
 */

// Only the ports' metadata (paths, element names, actions) is read; no handler runs.
const ports: Port[] = agreementPorts({} as SoapServices);

const wsdlNs = {
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
  soap: 'http://schemas.xmlsoap.org/wsdl/soap/',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  xsd: ns.xs,
  wsam: 'http://www.w3.org/2007/05/addressing/metadata',
  rp: ns.wsrfRp,
};

/** The resource property document each port type names (WS-ResourceProperties section 4). */
const resourcePropertyDocuments: Record<string, string | undefined> = {
  AgreementFactory: `{${ns.wsag}}AgreementFactoryProperties`,
  PendingAgreementFactory: `{${ns.wsag}}AgreementFactoryProperties`,
  AgreementAcceptance: undefined,
  Agreement: `{${ns.wsag}}AgreementProperties`,
  AgreementState: `{${ns.wsag}}AgreementStateProperties`,
};

interface WsdlOperation {
  name: string;
  input: string;
  output: string;
  inputAction: string;
  outputAction: string;
  faults: string[];
}

interface WsdlSummary {
  targetNamespace: string;
  portTypes: string[];
  resourceProperties: string | undefined;
  operations: WsdlOperation[];
  bindings: { name: string; version: '1.1' | '1.2'; portType: string; style: string; soapActions: Record<string, string>; literal: boolean }[];
  ports: { name: string; binding: string; version: '1.1' | '1.2' | 'none'; address: string }[];
  imports: { namespace: string; schemaLocation: string }[];
}

/** `prefix:local` in the scope of `element`, as `{uri}local`. */
function qname(element: XmlElement, value: string): string {
  const [prefix, local] = value.includes(':') ? (value.split(':') as [string, string]) : ['', value];
  const uri = element.namespaces[prefix];
  if (uri === undefined) throw new Error(`prefix "${prefix}" of ${value} is not declared on ${element.name}`);
  return `{${uri}}${local}`;
}

const attr = (element: XmlElement, name: string, namespace = '') =>
  element.attrs.find((a) => a.name === name && (a.namespaceUri ?? '') === namespace)?.value ?? '';
const elements = (context: XmlDocument | XmlElement, xpath: string) => context.find(xpath, wsdlNs).filter((n): n is XmlElement => n instanceof XmlElement);

function summarize(text: string, label: string): WsdlSummary {
  return withXml(text, label, (doc) => {
    const root = doc.root;
    if (root.namespaceUri !== wsdlNs.wsdl || root.name !== 'definitions') throw new Error(`${label}: root is {${root.namespaceUri}}${root.name}`);
    const tns = attr(root, 'targetNamespace');
    const messageElement = (ref: string, owner: XmlElement) => {
      const name = qname(owner, ref);
      const local = name.slice(name.indexOf('}') + 1);
      const part = elements(doc, `/wsdl:definitions/wsdl:message[@name='${local}']/wsdl:part`);
      if (name !== `{${tns}}${local}` || part.length !== 1) throw new Error(`${label}: message ${ref} is not one part in the target namespace`);
      return qname(part[0] as XmlElement, attr(part[0] as XmlElement, 'element'));
    };
    const portTypes = elements(doc, '/wsdl:definitions/wsdl:portType');
    const portType = portTypes[0] as XmlElement;
    const rpAttr = attr(portType, 'ResourceProperties', wsdlNs.rp);
    const operations = elements(portType, 'wsdl:operation').map((op) => {
      const input = elements(op, 'wsdl:input')[0] as XmlElement;
      const output = elements(op, 'wsdl:output')[0] as XmlElement;
      return {
        name: attr(op, 'name'),
        input: messageElement(attr(input, 'message'), input),
        output: messageElement(attr(output, 'message'), output),
        inputAction: attr(input, 'Action', wsdlNs.wsam),
        outputAction: attr(output, 'Action', wsdlNs.wsam),
        faults: elements(op, 'wsdl:fault').map((f) => messageElement(attr(f, 'message'), f)),
      };
    });
    const bindings = elements(doc, '/wsdl:definitions/wsdl:binding').map((b) => {
      const soap11 = elements(b, 'soap:binding')[0];
      const soap12 = elements(b, 'soap12:binding')[0];
      const prefix = soap12 ? 'soap12' : 'soap';
      const ops = elements(b, 'wsdl:operation');
      return {
        name: `{${tns}}${attr(b, 'name')}`,
        version: (soap12 ? '1.2' : '1.1') as '1.1' | '1.2',
        portType: qname(b, attr(b, 'type')),
        style: attr((soap12 ?? soap11) as XmlElement, 'style'),
        soapActions: Object.fromEntries(ops.map((o) => [attr(o, 'name'), attr(elements(o, `${prefix}:operation`)[0] as XmlElement, 'soapAction')])),
        // input body, output body and the BaseFault fault: all literal
        literal: ops.every((o) => {
          const uses = elements(o, `*/${prefix}:body | */${prefix}:fault`).map((e) => attr(e, 'use'));
          return uses.length === 3 && uses.every((u) => u === 'literal');
        }),
      };
    });
    const servicePorts = elements(doc, '/wsdl:definitions/wsdl:service/wsdl:port').map((p) => {
      const a11 = elements(p, 'soap:address')[0];
      const a12 = elements(p, 'soap12:address')[0];
      return {
        name: attr(p, 'name'),
        binding: qname(p, attr(p, 'binding')),
        version: (a12 ? '1.2' : a11 ? '1.1' : 'none') as '1.1' | '1.2' | 'none',
        address: attr((a12 ?? a11) as XmlElement, 'location'),
      };
    });
    return {
      targetNamespace: tns,
      portTypes: portTypes.map((p) => attr(p, 'name')),
      resourceProperties: rpAttr ? qname(portType, rpAttr) : undefined,
      operations,
      bindings,
      ports: servicePorts,
      imports: elements(doc, '/wsdl:definitions/wsdl:types/xsd:schema/xsd:import').map((i) => ({ namespace: attr(i, 'namespace'), schemaLocation: attr(i, 'schemaLocation') })),
    };
  });
}

let server: TestServer;
const served: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer();
  for (const port of ports) {
    const response = await fetch(`${server.url}${port.path}?wsdl`);
    expect(response.status, `GET ${port.path}?wsdl`).toBe(200);
    served[port.name] = await response.text();
  }
});
afterAll(async () => server?.close());

describe('the served WSDLs match the operations the server dispatches', () => {
  it('there is one WSDL file per port, and no other', () => {
    expect(fs.readdirSync(wsdlDir).filter((f) => f.endsWith('.wsdl')).sort()).toEqual(ports.map((p) => p.wsdlFile).sort());
  });

  describe.each(ports.map((p) => [p.name, p] as const))('%s', (name, port) => {
    const wsdl = () => summarize(served[name] as string, `${name}.wsdl (served)`);

    it('is well-formed, names one port type, and its addresses were rewritten to the server URL', () => {
      const text = served[name] as string;
      expect(text).not.toContain(addressPlaceholder);
      const summary = wsdl();
      expect(summary.targetNamespace).toBe(ns.wsag);
      expect(summary.portTypes).toEqual([name]);
      expect(summary.ports.map((p) => [p.version, p.address]).sort()).toEqual([
        ['1.1', `${server.url}${port.path}`],
        ['1.2', `${server.url}${port.path}`],
      ]);
      // On disk the same file holds the placeholder the server rewrites.
      const onDisk = fs.readFileSync(path.join(wsdlDir, port.wsdlFile), 'utf8');
      expect(onDisk.split(addressPlaceholder).join(server.url)).toBe(text);
      expect(summarize(onDisk, `${name}.wsdl`).ports.every((p) => p.address === `${addressPlaceholder}${port.path}`)).toBe(true);
    });

    it('declares exactly the server operations, with the same Body elements, wsa:Actions and a bf:BaseFault fault', () => {
      const summary = wsdl();
      expect(summary.operations.map((o) => o.name).sort()).toEqual(port.operations.map((o) => o.name).sort());
      for (const op of port.operations) {
        const declared = summary.operations.find((o) => o.name === op.name) as WsdlOperation;
        expect(declared, op.name).toMatchObject({
          input: `{${op.namespace}}${op.element}`,
          inputAction: op.action,
          outputAction: op.responseAction,
          faults: [`{${ns.wsrfBf}}BaseFault`],
        });
        expect(declared.output.startsWith(`{${op.namespace}}`), `${op.name} output ${declared.output}`).toBe(true);
      }
    });

    it('has a SOAP 1.1 and a SOAP 1.2 document/literal binding whose soapAction is each operation action', () => {
      const summary = wsdl();
      expect(summary.bindings.map((b) => b.version).sort()).toEqual(['1.1', '1.2']);
      const expected = Object.fromEntries(port.operations.map((o) => [o.name, o.action]));
      for (const binding of summary.bindings) {
        expect(binding.portType).toBe(`{${ns.wsag}}${name}`);
        expect(binding.style).toBe('document');
        expect(binding.literal).toBe(true);
        expect(binding.soapActions, `${binding.name} (SOAP ${binding.version})`).toEqual(expected);
        expect(summary.ports.filter((p) => p.binding === binding.name).map((p) => p.version)).toEqual([binding.version]);
      }
    });

    it('names its resource property document (wsrf-rp:ResourceProperties), a global element of the wsag schema', () => {
      const document = wsdl().resourceProperties;
      expect(document).toBe(resourcePropertyDocuments[name]);
      if (!document) return;
      const local = document.slice(document.indexOf('}') + 1);
      const wsagSchemas = fs
        .readdirSync(schemasDir)
        .filter((f) => f.endsWith('.xsd'))
        .map((f) => fs.readFileSync(path.join(schemasDir, f), 'utf8'))
        .filter((text) => text.includes(`targetNamespace="${ns.wsag}"`));
      expect(wsagSchemas.some((text) => text.includes(`<xs:element name="${local}"`)), `${local} in the wsag schemas`).toBe(true);
    });

    it('imports the project schemas by a relative location that resolves on disk and on the server', async () => {
      const imports = wsdl().imports;
      expect(imports.map((i) => i.namespace)).toEqual(expect.arrayContaining([ns.wsag, ns.wsa, ns.wsrfRp, ns.wsrfBf, ns.jsdl, ns.arp, ns.sla]));
      for (const { namespace, schemaLocation } of imports) {
        expect(schemaLocation).toMatch(/^\.\.\/schemas\/[\w.-]+\.xsd$/);
        const file = path.resolve(wsdlDir, schemaLocation);
        expect(fs.readFileSync(file, 'utf8'), schemaLocation).toContain(`targetNamespace="${namespace}"`);
        const url = new URL(schemaLocation, `${server.url}${port.path}?wsdl`).toString();
        expect(url).toBe(`${server.url}/schemas/${path.basename(file)}`);
        const response = await fetch(url);
        expect(response.status, url).toBe(200);
      }
    });
  });
});

/**
 * zeep loads each WSDL from disk and from the server (schemas resolved relative to each) and
 * reports what it understood: per binding, each operation's soapAction, wsa:Action and Body
 * element. Printed as one JSON line.
 */
const zeepView = String.raw`
import json, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import zeep
out = {}
for location in sys.argv[1:]:
    client = zeep.Client(wsdl=location)
    view = {"services": {}, "bindings": {}}
    for service in client.wsdl.services.values():
        view["services"][service.name] = {p.name: {"binding": str(p.binding.name), "address": p.binding_options["address"]} for p in service.ports.values()}
    for qname, binding in client.wsdl.bindings.items():
        ops = {}
        for name, op in binding._operations.items():
            ops[name] = {"soapAction": op.soapaction, "wsaAction": op.abstract.wsa_action,
                         "input": str(op.input.body.qname), "output": str(op.output.body.qname)}
        view["bindings"][qname] = {"kind": type(binding).__name__, "operations": ops}
    out[location] = view
print(json.dumps(out))
`;

const zeepAvailable = requirePythonModule('zeep');
if (!zeepAvailable) {
  const reason = `skipped because WSAG_SKIP_INTEROP=1: ${pythonModuleProblem('zeep')}`;
  console.warn(`zeep loads each WSDL: ${reason}`);
  describe('zeep loads each WSDL', () => {
    it.skip(reason, () => {});
  });
}

describe.runIf(zeepAvailable)('zeep loads each WSDL, from disk and from the server', () => {
  it('and sees both bindings with the server actions and Body elements', { timeout: 90_000 }, async () => {
    const locations = ports.flatMap((p) => [path.join(wsdlDir, p.wsdlFile), `${server.url}${p.path}?wsdl`]);
    const run = await runPython(['-c', zeepView, ...locations], 60_000);
    expect(run.code, run.stderr).toBe(0);
    const views = lastJsonLine(run) as Record<string, { services: Record<string, Record<string, { binding: string; address: string }>>; bindings: Record<string, { kind: string; operations: Record<string, Record<string, string | null>> }> }>;

    for (const port of ports) {
      for (const [location, address] of [
        [path.join(wsdlDir, port.wsdlFile), `${addressPlaceholder}${port.path}`],
        [`${server.url}${port.path}?wsdl`, `${server.url}${port.path}`],
      ] as const) {
        const view = views[location];
        expect(view, location).toBeDefined();
        if (!view) continue;
        expect(Object.keys(view.services)).toEqual([`${port.name}Service`]);
        const servicePorts = view.services[`${port.name}Service`] ?? {};
        expect(Object.keys(servicePorts).sort()).toEqual([`${port.name}Soap11Port`, `${port.name}Soap12Port`]);
        expect(Object.values(servicePorts).map((p) => p.address)).toEqual([address, address]);
        expect(Object.values(view.bindings).map((b) => b.kind).sort()).toEqual(['Soap11Binding', 'Soap12Binding']);
        for (const binding of Object.values(view.bindings)) {
          const expected = Object.fromEntries(
            port.operations.map((o) => [o.name, { soapAction: o.action, wsaAction: o.action, input: `{${o.namespace}}${o.element}` }]),
          );
          const seen = Object.fromEntries(
            Object.entries(binding.operations).map(([name, o]) => [name, { soapAction: o['soapAction'], wsaAction: o['wsaAction'], input: o['input'] }]),
          );
          expect(seen, `${location} ${binding.kind}`).toEqual(expected);
        }
      }
    }
  });
});
