import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, projectRoot, type TestServer } from '../support/server.js';
import { lastJsonLine, pythonModuleProblem, requirePythonModule, runPython } from './python.js';

/**
 * Interoperability with a third-party SOAP stack: Python zeep (Debian python3-zeep) drives a
 * whole agreement lifecycle using nothing but the served WSDLs (test/interop/zeep_lifecycle.py).
 * Fails when /usr/bin/python3 or zeep is missing, unless WSAG_SKIP_INTEROP=1.
 */
const available = requirePythonModule('zeep');
const script = path.join(projectRoot, 'test/interop/zeep_lifecycle.py');

if (!available) {
  const reason = `skipped because WSAG_SKIP_INTEROP=1: ${pythonModuleProblem('zeep')}`;
  console.warn(`zeep lifecycle: ${reason}`);
  describe('zeep lifecycle', () => {
    it.skip(reason, () => {});
  });
}

describe.runIf(available)('a zeep client, from the WSDLs alone, runs an agreement lifecycle', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('templates -> CreateAgreement -> Terms -> Observed -> Terminate -> Terminated, over SOAP 1.1 and 1.2', {
    timeout: 90_000,
  }, async () => {
    const run = await runPython([script, server.url], 60_000);
    const result = lastJsonLine(run);
    // On failure, show what zeep saw (the JSON names each mismatch) and its traceback.
    expect({ code: run.code, error: result.error, mismatches: result.mismatches }, run.stderr).toEqual({
      code: 0,
      error: undefined,
      mismatches: [],
    });
    expect(result).toMatchObject({
      ok: true,
      templates: expect.arrayContaining(['deadline-job']),
      templateId: 'deadline-job-v1',
      eprAddress: `${server.url}/wsag/Agreement`,
      serviceTerms: ['Job'],
      guaranteeTerms: ['CompletionByDeadline'],
      nodeCount: 4,
      offered: expect.objectContaining({ nodeCount: 4, guaranteeLevel: 'Standard', interconnect: 'InfiniBand' }),
      stateBefore: { soap11: 'Observed', soap12: 'Observed' },
      stateAfter: { soap11: 'Terminated', soap12: 'Terminated' },
      faultCode: { soap11: 'InvalidResourcePropertyQName', soap12: 'InvalidResourcePropertyQName' },
    });
    expect(result.agreementId).toMatch(/\S/);
    expect(result.checks).toBeGreaterThanOrEqual(16);

    // The server agrees: the agreement zeep created exists and is terminated.
    const stored = await server.repository.get(result.agreementId as string);
    expect(stored?.state).toBe('Terminated');
    // ... and read zeep's offer as carrying the values zeep read from the template.
    const offered = result.offered as Record<string, unknown>;
    expect(stored?.request).toMatchObject({
      nodeCount: offered.nodeCount,
      interconnect: offered.interconnect,
      runtimeSeconds: offered.runtimeEstimate,
      guaranteeLevel: offered.guaranteeLevel,
      maxCoveredOutages: offered.maxCoveredOutages,
    });
    expect(stored?.request.deadline?.toISOString()).toBe(new Date(offered.deadline as string).toISOString());
  });
});
