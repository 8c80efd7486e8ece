import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { TrustStore } from '../../src/crypto/trust-store.js';
import { verifyAgreementSignatures } from '../../src/crypto/xml-signature.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from './support.js';

describe('wsag countersign and wsag cert proxy together', () => {
  let server: TestServer;
  let pki: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-countersign-'));
    pki = path.join(dataDir, 'pki');
    await createDemoPki({ dir: pki, keyType: 'ec' });
    server = await startTestServer({
      config: {
        dataDir,
        tlsPort: 0,
        signAgreements: true,
        caFile: path.join(pki, 'ca.pem'),
        tlsCertFile: path.join(pki, 'server.pem'),
        tlsKeyFile: path.join(pki, 'server.key'),
      },
    });
    const proxyFile = path.join(dataDir, 'alice-proxy.pem');
    const proxy = await wsag([
      'cert',
      'proxy',
      '--cert',
      path.join(pki, 'alice.pem'),
      '--key',
      path.join(pki, 'alice.key'),
      '--hours',
      '1',
      '--out',
      proxyFile,
    ]);
    expect(proxy.code, proxy.stderr).toBe(0);
    env = { WSAG_URL: server.tlsUrl as string, WSAG_CERT: proxyFile, WSAG_CA: path.join(pki, 'ca.pem') };
  }, 60_000);
  afterAll(async () => server?.close());

  it('creates an agreement over TLS with a proxy, countersigns it, and the stored document carries both signatures', async () => {
    const created = await wsag(['create', '--template', 'advance-reservation', '--json'], { env });
    expect(created.code, created.stderr).toBe(0);
    const { agreementId } = JSON.parse(created.stdout) as { agreementId: string };
    const signed = await wsag(['countersign', agreementId], { env });
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stdout).toBe(
      `agreement ${agreementId}: countersigned by /C=DE/O=wsag-demo/OU=users/CN=alice; signed by the provider /C=DE/O=wsag-demo/OU=hosts/CN=localhost`,
    );
    const stored = await server.repository.get(agreementId);
    const trust = TrustStore.fromFile(path.join(pki, 'ca.pem'));
    const signatures = verifyAgreementSignatures(stored?.document ?? '', {
      validateChain: (c, at) => trust.validate(c, at),
      at: new Date(),
    });
    expect(signatures.initiator?.identity).toBe('/C=DE/O=wsag-demo/OU=users/CN=alice');
  });

  it('says why when the URL is not HTTPS or the credential is missing', async () => {
    const plain = await wsag(['countersign', 'x'], { env: { ...env, WSAG_URL: server.url } });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/over HTTPS/);
    const noCert = await wsag(['countersign', 'x'], {
      env: { WSAG_URL: server.tlsUrl as string, WSAG_CA: env.WSAG_CA as string },
    });
    expect(noCert.code).toBe(2);
    expect(noCert.stderr).toMatch(/WSAG_CERT/);
  });
});
