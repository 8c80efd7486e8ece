import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsFetch } from '../../src/client/tls-fetch.js';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { createCa, issueEndEntity, type Issued } from '../../src/crypto/certificate-authority.js';
import { loadCredential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { nameFromParts, subjectName } from '../../src/crypto/distinguished-name.js';
import { certificatePem, privateKeyPem } from '../../src/crypto/pem.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A bad chain on any port is answered, never cut off. A certificate under
 * a forged CA of the trusted CA's name, the forged CA sent along, and a self-signed one each
 * get a NotAuthenticated fault on the SOAP ports (with a whole offer as the body) and 401 on
 * /api, naming what is wrong; the TLS handshake itself completes, so the caller hears why.
 */
let server: TestServer;
let pki = '';
const bad: Record<string, { chain: Issued['certificate'][]; key: Issued['privateKey'] }> = {};
const aliceName = nameFromParts([
  ['C', 'DE'],
  ['O', 'wsag-demo'],
  ['OU', 'users'],
  ['CN', 'alice'],
]);

beforeAll(async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bad-chains-'));
  pki = path.join(dataDir, 'pki');
  await createDemoPki({ dir: pki, keyType: 'ec' });
  const trusted = loadCredential(path.join(pki, 'ca.pem'), path.join(pki, 'ca.key'));
  const now = new Date();
  const forgedCa = await createCa({ subject: subjectName(trusted.certificate), keyType: 'ec', days: 10, now });
  const forged = await issueEndEntity({
    ca: forgedCa,
    subject: aliceName,
    keyType: 'ec',
    days: 5,
    now,
    purpose: 'client',
  });
  const selfCa = await createCa({ subject: aliceName, keyType: 'ec', days: 5, now });
  bad['a forged CA of the trusted name'] = { chain: [forged.certificate], key: forged.privateKey };
  bad['the forged CA sent along'] = { chain: [forged.certificate, forgedCa.certificate], key: forged.privateKey };
  bad['self-signed'] = { chain: [selfCa.certificate], key: selfCa.privateKey };
  server = await startTestServer({
    config: {
      dataDir,
      tlsPort: 0,
      anonymous: 'deny',
      caFile: path.join(pki, 'ca.pem'),
      tlsCertFile: path.join(pki, 'server.pem'),
      tlsKeyFile: path.join(pki, 'server.key'),
    },
  });
}, 60_000);
afterAll(async () => server?.close());

describe('bad certificate chains', () => {
  it('get a NotAuthenticated fault on the SOAP ports and 401 on /api, naming the fault', async () => {
    const alice = loadCredential(path.join(pki, 'alice.pem'), path.join(pki, 'alice.key'));
    const ca = fs.readFileSync(path.join(pki, 'ca.pem'), 'utf8');
    const good = new WsagClient(
      server.tlsUrl as string,
      tlsFetch({ cert: certificatePem(alice.certificate), key: privateKeyPem(alice.privateKey), ca }),
    );
    const offer = offerFromTemplate(
      (await good.templates()).find((t) => t.includes('advance-reservation')) as string,
      [],
    );
    for (const [name, { chain, key }] of Object.entries(bad)) {
      const fetcher = tlsFetch({ cert: chain.map(certificatePem).join(''), key: privateKeyPem(key), ca });
      const fault = await new WsagClient(server.tlsUrl as string, fetcher).createAgreement(offer).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(fault, name).toBeInstanceOf(WsagFault);
      expect([(fault as WsagFault).code, (fault as WsagFault).message], name).toEqual([
        'NotAuthenticated',
        expect.stringMatching(
          /^NotAuthenticated: the TLS client certificate is not accepted: certificate .+ is not a trusted CA/,
        ),
      ]);
      const answer = await fetcher(`${server.tlsUrl}/api/agreements`);
      expect([answer.status, ((await answer.json()) as { error: string }).error], name).toEqual([
        401,
        'NotAuthenticated',
      ]);
    }
  });
});
