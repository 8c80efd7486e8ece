import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * What the server writes (the database and its log, the lock, the
 * subscriptions, and whatever else it creates: the process runs with umask 077) is readable
 * by its own user alone, in a data directory only that user may enter, as `npm start` runs it.
 */
describe('the data directory as npm start leaves it', () => {
  let server: ServerProcess | undefined;
  afterAll(() => server?.child.kill('SIGTERM'));

  it('holds files 0600 and directories 0700, itself included', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-modes-'));
    fs.chmodSync(dataDir, 0o755);
    server = await startServerProcess(dataDir, { WSAG_ADMINS: 'anonymous', WSAG_OUTBOUND_ALLOW: 'loopback' });
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]),
    );
    await client.request(`/api/agreements/${agreementId}/subscriptions`, 'subscribing', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    });
    const open: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if ((fs.statSync(full).mode & 0o077) !== 0)
          open.push(`${path.relative(dataDir, full)} ${(fs.statSync(full).mode & 0o777).toString(8)}`);
        if (entry.isDirectory()) walk(full);
      }
    };
    walk(dataDir);
    expect((fs.statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    expect(open).toEqual([]);
    // What was looked at: the database and its log, the subscriptions.
    expect(
      ['wsag.db', 'wsag.db-wal', 'subscriptions.json'].filter((f) => !fs.existsSync(path.join(dataDir, f))),
    ).toEqual([]);
  }, 60_000);
});
