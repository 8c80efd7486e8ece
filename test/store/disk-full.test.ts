import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { skipPostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { projectRoot } from '../support/server.js';

/**
 * The disk full under SQLite and under PostgreSQL (issue 56, fault 2): the data directory (or
 * PostgreSQL's cluster) on a small tmpfs, filled while a client creates agreements. Creates are refused with ServiceUnavailable saying the
 * disk is full (never an acknowledged create without its row, never half an agreement),
 * reads go on, and once there is room creates are acknowledged again without a restart.
 * Needs root to mount the tmpfs (CI runs as root).
 */
const mounts: string[] = [];
let server: RunningServer | undefined;
let postgres: TestPostgres | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await postgres?.stop();
  postgres = undefined;
  for (const dir of mounts.splice(0)) {
    execFileSync('umount', [dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Writes a file until the filesystem has no room left; returns its path. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(1 << 16, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (error) {
    expect((error as { code?: string }).code).toBe('ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/** A tmpfs of `size` at a new directory, unmounted after the test. */
function tmpfs(size: string): string {
  const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mount]);
  mounts.push(mount);
  return mount;
}

async function serving(dataDir: string, env: Record<string, string> = {}): Promise<WsagClient> {
  const config = loadConfig(env, {
    port: 0,
    dataDir,
    templatesDir: path.join(projectRoot, 'templates'),
    logLevel: 'silent',
    clusterNodes: 4096,
    executor: 'none',
  });
  server = await startServer(config, { logger: pino({ level: 'silent' }) });
  return new WsagClient(server.url);
}

/**
 * Fills `mount` under a client's creates: refused by name while full, reads going on, creates acknowledged again once
 * there is room. Returns the acknowledged ids.
 */
async function underFullDisk(client: WsagClient, mount: string, refusal: RegExp): Promise<string[]> {
  const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
  const offer = offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]);
  const acknowledged: string[] = [];
  const refusals: string[] = [];
  const create = async () => {
    try {
      acknowledged.push((await client.createAgreement(offer)).agreementId);
      return true;
    } catch (error) {
      refusals.push(error instanceof WsagFault ? `${error.code} | ${error.message}` : `not a fault: ${String(error)}`);
      return false;
    }
  };
  for (let i = 0; i < 10; i++) expect(await create()).toBe(true);

  const filler = fill(mount);
  // The log has room left in pages it reuses: creates go on until it needs more, then are refused.
  for (let i = 0; i < 500 && refusals.length < 3; i++) await create();
  expect(refusals.length).toBeGreaterThanOrEqual(3);
  for (const text of refusals) expect(text).toMatch(refusal);
  // Reads go on while the disk is full.
  expect((await client.state(acknowledged[0] as string)).state).toBe('Observed');

  fs.rmSync(filler);
  const before = acknowledged.length;
  for (let i = 0; i < 10; i++) await create();
  expect(acknowledged.length - before).toBe(10);
  return acknowledged;
}

describe('the disk full', () => {
  it('SQLite: creates are refused by name, reads go on, nothing acknowledged is lost, creates resume when there is room', async () => {
    const mount = tmpfs('32m');
    const dataDir = path.join(mount, 'data');
    const acknowledged = await underFullDisk(
      await serving(dataDir),
      mount,
      /^ServiceUnavailable \| .*the server's disk is full: nothing was stored/,
    );
    await server?.close();
    server = undefined;
    const store = SqliteStore.open(path.join(dataDir, 'wsag.db'));
    try {
      const stored = new Map((await store.agreements.list({})).map((a) => [a.id, a]));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      // Whole agreements only: each stored one has its document and its audit entry.
      for (const agreement of stored.values()) expect(agreement.document).toContain('AgreementOffer');
      expect((await store.audit.entries({})).filter((e) => e.action === 'created')).toHaveLength(stored.size);
    } finally {
      await store.close();
    }
  }, 120_000);

  it.skipIf(skipPostgres)(
    'PostgreSQL: the same, its cluster on the full disk',
    async () => {
      const mount = tmpfs('160m');
      fs.chmodSync(mount, 0o777); // PostgreSQL runs as its own user
      postgres = await startPostgres({ under: mount });
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-disk-data-'));
      const acknowledged = await underFullDisk(
        await serving(dataDir, { WSAG_DATABASE_URL: postgres.url }),
        mount,
        /^ServiceUnavailable \| .*the database's disk is full: nothing was stored/,
      );
      await server?.close();
      server = undefined;
      const store = await PgStore.open(postgres.url, { readOnly: true });
      try {
        const stored = new Map((await store.agreements.list({})).map((a) => [a.id, a]));
        expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
        for (const agreement of stored.values()) expect(agreement.document).toContain('AgreementOffer');
      } finally {
        await store.close();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    120_000,
  );
});
