import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadCredential, type Credential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { projectRoot } from '../support/server.js';

/**
 * A signed message counts once. Alice's CreateAgreement, signed with
 * WS-Security, is posted again word for word by someone else on the plain HTTP port: the
 * copies are refused by name, before and after a restart of the server (the signatures seen
 * are kept in its SQLite database until the message would have expired), and her account
 * holds the price once.
 */
describe('a signed message posted again', () => {
  let dataDir: string;
  let alice: Credential;
  let server: RunningServer | undefined;
  const start = async (port = 0) => {
    server = await startServer(
      loadConfig(
        {},
        {
          port,
          dataDir,
          templatesDir: path.join(projectRoot, 'templates'),
          logLevel: 'silent',
          anonymous: 'allow',
          admins: ['anonymous'],
          caFile: path.join(dataDir, 'pki', 'ca.pem'),
          executor: 'none',
        },
      ),
      { logger: pino({ level: 'silent' }) },
    );
    return server;
  };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-replay-'));
    await createDemoPki({ dir: path.join(dataDir, 'pki'), keyType: 'ec' });
    alice = loadCredential(path.join(dataDir, 'pki', 'alice.pem'), path.join(dataDir, 'pki', 'alice.key'));
  }, 60_000);
  afterAll(async () => server?.close());

  it('is refused by name, and stays refused across a restart', async () => {
    let running = await start();
    let captured: { url: string; init: RequestInit } | undefined;
    const asAlice = new WsagClient(
      running.url,
      (url, init) => {
        captured = { url: String(url), init: init as RequestInit };
        return fetch(url, init);
      },
      { key: alice.privateKey, chain: [alice.certificate] },
    );
    const template = (await asAlice.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { agreementId } = await asAlice.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]),
    );
    const signed = captured as { url: string; init: RequestInit };
    // The same bytes again, by an anonymous client: a replay.
    const again = async () => {
      const answer = await fetch(signed.url.replace(/^http:\/\/[^/]+/, running.url), signed.init);
      return { status: answer.status, text: await answer.text() };
    };
    for (let i = 0; i < 2; i++) {
      const replay = await again();
      expect(replay.status).toBe(500);
      expect(replay.text).toContain('NotAuthenticated');
      expect(replay.text).toContain(
        'WS-Security: this signed message was received already: each signature is used once',
      );
    }
    // Restarted on the same address (the message names it), on the same database.
    const port = Number(new URL(running.url).port);
    await running.close();
    server = undefined;
    running = await start(port);
    const afterRestart = await again();
    expect(afterRestart.text).toContain('this signed message was received already');
    // One agreement came of it (the local operator lists everyone's).
    expect((await new WsagClient(running.url).agreements()).map((a) => a.id)).toEqual([agreementId]);
    // A message signed anew is a new message.
    expect(
      (await new WsagClient(running.url, fetch, { key: alice.privateKey, chain: [alice.certificate] }).templates())
        .length,
    ).toBeGreaterThan(0);
  }, 60_000);
});
