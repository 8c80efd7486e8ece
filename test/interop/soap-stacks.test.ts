import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreementPorts } from '../../src/soap/agreement-ports.js';
import { negotiationPorts } from '../../src/soap/negotiation-ports.js';
import type { SoapServices } from '../../src/soap/services.js';
import { ns } from '../../src/xml/namespaces.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireTool } from '../support/tools.js';
import { python, requirePythonModule } from './python.js';
import { nodeSoapScenario } from './stacks/node-soap-scenario.js';
import type { StackResult } from './stacks/stack-result.js';

/**
 * SOAP stacks nobody here wrote, each from the served WSDLs alone: Python suds, PHP ext/soap,
 * node-soap run the whole scenario (templates, create, state, terminate, negotiate Advisory and
 * Solicited, accept, a typed fault), each loading all seven WSDLs without a warning; gSOAP's
 * wsdl2h and soapcpp2 generate a client from the SOAP 1.1 views without a warning. The only
 * XML any of them writes by hand is the terms' content (the broker's job description).
 * docs/interop.md has what each stack needs.
 */
const stacksDir = path.join(import.meta.dirname, 'stacks');
const portNames = [...agreementPorts({} as SoapServices), ...negotiationPorts({} as SoapServices)]
  .map((p) => p.name)
  .sort();

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/** The terms' content of an advance reservation of 2 nodes, `hours` from now, for an hour. */
function terms(hours: number): string {
  const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  return (
    `<wsag:All xmlns:wsag="${ns.wsag}" xmlns:jsdl="${ns.jsdl}" xmlns:sla="${ns.sla}" xmlns:arp="${ns.arp}">` +
    '<wsag:ServiceDescriptionTerm wsag:Name="Nodes" wsag:ServiceName="Reservation"><jsdl:JobDefinition>' +
    '<jsdl:JobDescription><jsdl:Resources><jsdl:TotalResourceCount><jsdl:Exact>2</jsdl:Exact>' +
    '</jsdl:TotalResourceCount></jsdl:Resources><sla:ServiceLevel><sla:GuaranteeLevel>Legacy</sla:GuaranteeLevel>' +
    '</sla:ServiceLevel></jsdl:JobDescription></jsdl:JobDefinition></wsag:ServiceDescriptionTerm>' +
    '<wsag:ServiceDescriptionTerm wsag:Name="Window" wsag:ServiceName="Reservation"><arp:AllocationTimeConstraint>' +
    `<arp:StartTime>${at(hours)}</arp:StartTime><arp:EndTime>${at(hours + 1)}</arp:EndTime>` +
    '</arp:AllocationTimeConstraint></wsag:ServiceDescriptionTerm></wsag:All>'
  );
}

function run(command: string, args: string[], cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 120_000, maxBuffer: 16 << 20, cwd }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(new Error(`${command} did not finish: ${error.message}`));
      else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

async function scriptResult(command: string, script: string, hours: number): Promise<StackResult> {
  const input = JSON.stringify({ base: server.url, terms: terms(hours) });
  const { stdout, stderr } = await run(command, [path.join(stacksDir, script), input]);
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as StackResult;
  } catch {
    throw new Error(`${script} printed no result:\n${stdout}\n${stderr}`);
  }
}

async function expectScenario(result: StackResult): Promise<void> {
  expect(result.error, `${result.stack} failed`).toBeUndefined();
  expect(result.loaded).toEqual(portNames);
  expect(result.warnings).toEqual([]);
  expect(result.templates).toEqual(expect.arrayContaining(['advance-reservation', 'deadline-job']));
  expect(result.created).toEqual({ address: `${server.url}/wsag/Agreement`, state: 'Observed' });
  expect(result.terminated).toBe('Terminated');
  expect(result.advisory?.length).toBeGreaterThan(0);
  for (const slot of result.advisory ?? []) {
    expect(slot.state).toBe('Advisory');
    expect(slot.price?.currency).toBe('EUR');
    expect(slot.price?.amount).toBeGreaterThan(0);
  }
  expect(result.solicited?.state).toBe('Acceptable');
  expect(result.solicited?.expirationTime).toBeTruthy();
  expect(result.solicited?.price?.amount).toBeGreaterThan(0);
  expect(result.accepted?.state).toBe('Observed');
  expect(result.fault).toEqual({ code: 'UnknownResource' });
  // The server saw the same: the accepted agreement is the held offer, booked once.
  const stored = await server.repository.get(result.accepted?.agreementId as string);
  expect(stored?.state).toBe('Observed');
}

const haveSuds = requirePythonModule('suds');
const havePhp = requireTool('php');
const haveGsoap = requireTool('wsdl2h') && requireTool('soapcpp2');

describe('SOAP stacks run the scenario from the WSDLs alone', () => {
  it.runIf(haveSuds)('Python suds (SOAP 1.1 views)', { timeout: 120_000 }, async () => {
    await expectScenario(await scriptResult(python, 'suds_scenario.py', 3));
  });

  it.runIf(havePhp)('PHP ext/soap (SOAP 1.1 views)', { timeout: 120_000 }, async () => {
    await expectScenario(await scriptResult('php', 'php_scenario.php', 5));
  });

  it('node-soap (the combined WSDLs)', { timeout: 120_000 }, async () => {
    await expectScenario(await nodeSoapScenario(server.url, terms(7)));
  });

  it.runIf(haveGsoap)(
    'gSOAP generates a client from the SOAP 1.1 views without a warning',
    {
      timeout: 120_000,
    },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-gsoap-'));
      try {
        // xs:decimal (money, bids) is a string to gSOAP unless mapped: the ranges are within a double's.
        const typemap = fs.readFileSync('/usr/share/gsoap/WS/typemap.dat', 'utf8');
        fs.writeFileSync(path.join(dir, 'typemap.dat'), `${typemap}\nxsd__decimal = | double\n`);
        const urls = portNames.map((name) => `${server.url}/wsag/${name}?wsdl&soap=1.1`);
        const generated = await run('wsdl2h', ['-t', 'typemap.dat', '-o', 'wsag.h', ...urls], dir);
        expect(generated.code, generated.stderr).toBe(0);
        const header = fs.readFileSync(path.join(dir, 'wsag.h'), 'utf8');
        expect(`${generated.stdout}${generated.stderr}`).not.toMatch(/warning/i);
        expect(header).not.toMatch(/@warning:/);
        const compiled = await run('soapcpp2', ['-j', '-C', '-x', '-I/usr/share/gsoap/import', 'wsag.h'], dir);
        expect(compiled.code, compiled.stderr).toBe(0);
        expect(`${compiled.stdout}${compiled.stderr}`).not.toMatch(/warning/i);
        // Every port's operations became proxy methods; the reference parameter a typed header.
        const proxies = fs.readdirSync(dir).filter((f) => f.endsWith('Proxy.h'));
        const declared = proxies.map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
        for (const operation of ['CreateAgreement', 'Terminate', 'InitiateNegotiation', 'Negotiate'])
          expect(declared).toContain(operation);
        const stub = fs.readFileSync(path.join(dir, 'soapStub.h'), 'utf8');
        // The SOAP header struct holds the reference parameters, typed (gSOAP sends them mustUnderstand).
        const soapHeader = /SOAP_ENV__Header\(\) : [^{]*/.exec(stub)?.[0] ?? '';
        expect(soapHeader).toMatch(/ns\d+__AgreementId\(\)/);
        expect(soapHeader).toMatch(/ns\d+__NegotiationId\(\)/);
        expect(stub).toMatch(/ns\d+__AgreementIdType \*ns\d+__AgreementId;/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
