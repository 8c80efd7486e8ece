import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer } from '../../src/server.js';
import { DataDirInUse } from '../../src/store/data-dir-lock.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { wsag } from '../cli/support.js';
import { projectRoot } from '../support/server.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';

/** The server on PostgreSQL (WSAG_DATABASE_URL): what it stored is there after a restart; a second server on the database is refused. */
let pg: TestPostgres | undefined;
beforeAll(async () => {
  if (!skipPostgres) pg = await startPostgres();
}, 120_000);
afterAll(async () => pg?.stop());

const configFor = (dataDir: string) =>
  loadConfig(
    { WSAG_DATABASE_URL: (pg as TestPostgres).url },
    {
      port: 0,
      dataDir,
      templatesDir: path.join(projectRoot, 'templates'),
      logLevel: 'silent',
      admins: ['anonymous'],
      clusterNodes: 8,
      executor: 'none',
    },
  );
const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-pg-server-'));

describe.skipIf(skipPostgres)('wsag-server on PostgreSQL', () => {
  it('keeps agreements, their bookings and their audit trail across a restart; one server per database', async () => {
    const dataDir = tempDir();
    const first = await startServer(configFor(dataDir), { logger: pino({ level: 'silent' }) });
    const client = new WsagClient(first.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '3' }]),
    );

    const second = await startServer(configFor(tempDir()), { logger: pino({ level: 'silent' }) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(DataDirInUse);
    expect((second as Error).message).toMatch(
      /^the database postgres:\/\/wsag@127\.0\.0\.1:\d+\/postgres is in use by another wsag-server/,
    );
    await first.close();

    const again = await startServer(configFor(dataDir), { logger: pino({ level: 'silent' }) });
    try {
      const restarted = new WsagClient(again.url);
      expect((await restarted.state(agreementId)).state).toBe('Observed');
      expect((await restarted.plan()).bookings.find((b) => b.id === agreementId)?.nodes).toBe(3);
      const detail = (await (await fetch(`${again.url}/api/agreements/${agreementId}`)).json()) as {
        history: Array<{ action: string }>;
      };
      expect(detail.history.map((e) => e.action)).toEqual(['created']);
      await restarted.terminate(agreementId);
      expect((await restarted.state(agreementId)).state).toBe('Terminated');
      // wsag audit reads the same database beside the running server: the chain holds, the history is there.
      const env = { WSAG_DATABASE_URL: (pg as TestPostgres).url };
      const verified = await wsag(['audit', 'verify', '--data-dir', dataDir], { env });
      expect(verified.code).toBe(0);
      expect(verified.out[0]).toMatch(/^audit log: \d+ entries, the hash chain holds/);
      expect(verified.out.at(-1)).toBe('all well');
      const shown = await wsag(['audit', 'show', agreementId, '--json'], { env });
      expect((JSON.parse(shown.stdout) as { entries: Array<{ action: string }> }).entries.map((e) => e.action)).toEqual(
        ['created', 'terminated'],
      );
    } finally {
      await again.close();
    }
  }, 60_000);

  it('wsag serve on a database another server holds joins as a standby, as npm start does', async () => {
    const first = await startServer(configFor(tempDir()), { logger: pino({ level: 'silent' }) });
    try {
      const banner: string[] = [];
      let health: unknown;
      const result = await wsag(['serve', '--port', '0', '--data-dir', tempDir()], {
        env: { WSAG_DATABASE_URL: (pg as TestPostgres).url, LOG_LEVEL: 'silent', WSAG_CLUSTER_NODES: '8' },
        io: {
          out: (line) => banner.push(line),
          untilStopped: async () => {
            const url = /listening on (\S+)/.exec(banner.join('\n'))?.[1] as string;
            health = await (await fetch(`${url}/healthz`)).json();
          },
        },
      });
      expect(result.err).toEqual([]);
      expect(result.code).toBe(0);
      expect(health).toMatchObject({ status: 'ok', role: 'standby' });
    } finally {
      await first.close();
    }
  }, 60_000);

  it('WSAG_DATABASE_URL must be a PostgreSQL URL', () => {
    expect(() => loadConfig({ WSAG_DATABASE_URL: 'mysql://root:secret@db/wsag' })).toThrow(
      'WSAG_DATABASE_URL must be a PostgreSQL URL (postgres://user@host:port/database), got "mysql://root:***@db/wsag"',
    );
  });
});
