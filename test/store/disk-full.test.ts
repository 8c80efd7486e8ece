import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { projectRoot } from '../support/server.js';

/**
 * The disk full under SQLite (issue 56, fault 2): the data directory on a small tmpfs, filled
 * while a client creates agreements. Creates are refused with ServiceUnavailable saying the
 * disk is full (never an acknowledged create without its row, never half an agreement),
 * reads go on, and once there is room creates are acknowledged again without a restart.
 * Needs root to mount the tmpfs (CI runs as root).
 */
const mounts: string[] = [];
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
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

describe('the disk full under SQLite', () => {
  it('creates are refused by name, reads go on, nothing acknowledged is lost, and creates resume when there is room', async () => {
    const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mount]);
    mounts.push(mount);
    const dataDir = path.join(mount, 'data');
    const config = loadConfig(
      {},
      { port: 0, dataDir, templatesDir: path.join(projectRoot, 'templates'), logLevel: 'silent', clusterNodes: 4096 },
    );
    server = await startServer(config, { logger: pino({ level: 'silent' }) });
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const offer = offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]);
    const acknowledged: string[] = [];
    const refusals: string[] = [];
    const create = async () => {
      try {
        acknowledged.push((await client.createAgreement(offer)).agreementId);
        return true;
      } catch (error) {
        refusals.push(error instanceof WsagFault ? `${error.code}: ${error.message}` : `not a fault: ${String(error)}`);
        return false;
      }
    };
    for (let i = 0; i < 10; i++) expect(await create()).toBe(true);

    const filler = fill(mount);
    // The log has room left in pages it reuses: creates go on until it needs more, then are refused.
    for (let i = 0; i < 500 && refusals.length < 3; i++) await create();
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    for (const refusal of refusals) expect(refusal).toMatch(/^ServiceUnavailable: .*disk/);
    // Reads go on while the disk is full.
    expect((await client.state(acknowledged[0] as string)).state).toBe('Observed');

    fs.rmSync(filler);
    const before = acknowledged.length;
    for (let i = 0; i < 10; i++) await create();
    expect(acknowledged.length - before).toBe(10);

    await server.close();
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
});
