import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadCredential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { wsag } from '../cli/support.js';
import { projectRoot } from '../support/server.js';
import { requireTool } from '../support/tools.js';

const available = requireTool('xmlsec1');

/**
 * Acceptance, end to end: an agreement the server signed and stored in SQLite is
 * exported by `wsag audit export`; xmlsec1 verifies it with the CA file alone; one changed
 * character in its Terms makes both xmlsec1 and `wsag audit verify` fail.
 */
describe.runIf(available)('an exported agreement verifies with xmlsec1 and the CA file alone', () => {
  let dataDir: string;
  let server: RunningServer;
  let agreementId: string;
  const providerSignature = "/*[local-name()='AgreementOffer']/*[local-name()='Context']/*[local-name()='Signature']";

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-signed-'));
    await createDemoPki({ dir: path.join(dataDir, 'pki') });
    server = await startServer(
      loadConfig({}, { port: 0, dataDir, templatesDir: path.join(projectRoot, 'templates'), logLevel: 'silent' }),
      { logger: pino({ level: 'silent' }) },
    );
    const alice = loadCredential(path.join(dataDir, 'pki', 'alice.pem'), path.join(dataDir, 'pki', 'alice.key'));
    const client = new WsagClient(server.url, fetch, { key: alice.privateKey, chain: [alice.certificate] });
    const [template] = await client.templates();
    agreementId = (await client.createAgreement(offerFromTemplate(template as string, []))).agreementId;
  }, 60_000);
  afterAll(async () => server?.close());

  const xmlsec1Accepts = (file: string): boolean => {
    try {
      execFileSync(
        'xmlsec1',
        [
          '--verify',
          '--trusted-pem',
          path.join(dataDir, 'pki', 'ca.pem'),
          '--enabled-reference-uris',
          'empty',
          '--node-xpath',
          providerSignature,
          file,
        ],
        { stdio: 'pipe' },
      );
      return true;
    } catch {
      return false;
    }
  };

  it('signed by default once the server has a certificate and key; the audit trail and signatures check out', async () => {
    const file = path.join(dataDir, 'agreement.xml');
    const exported = await wsag(['audit', 'export', agreementId, '--out', file], { env: { WSAG_DATA_DIR: dataDir } });
    expect(exported.code, exported.stderr).toBe(0);
    expect(xmlsec1Accepts(file)).toBe(true);
    const verified = await wsag(['audit', 'verify'], { env: { WSAG_DATA_DIR: dataDir } });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it('one changed character in the Terms: xmlsec1 and wsag audit verify both fail', async () => {
    const file = path.join(dataDir, 'agreement.xml');
    const document = fs.readFileSync(file, 'utf8');
    const terms = document.indexOf('<wsag:Terms');
    const at = document.indexOf('>', document.indexOf('<wsag:ServiceDescriptionTerm', terms)) + 1;
    const changed = `${document.slice(0, at)} ${document.slice(at)}`;
    const changedFile = path.join(dataDir, 'changed.xml');
    fs.writeFileSync(changedFile, changed);
    expect(xmlsec1Accepts(changedFile)).toBe(false);

    const db = new Database(path.join(dataDir, 'wsag.db'));
    db.prepare('UPDATE agreements SET document = ? WHERE id = ?').run(changed, agreementId);
    db.close();
    const verified = await wsag(['audit', 'verify'], { env: { WSAG_DATA_DIR: dataDir } });
    expect(verified.code).toBe(1);
    expect(verified.stdout + verified.stderr).toMatch(/provider signature: digest mismatch/);
  });
});
