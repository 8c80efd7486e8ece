import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, startTestServer, type TestServer } from '../support/server.js';
import { wsag, type CliResult } from './support.js';

const run = promisify(execFile);
const bin = path.join(projectRoot, 'bin', 'wsag.js');

describe('wsag serve', () => {
  it('starts the server with flags over the environment, prints the endpoints, and stops', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-cli-serve-'));
    const banner: string[] = [];
    let duringServe: CliResult | undefined;
    const result = await wsag(['serve', '--port', '0', '--data-dir', dataDir], {
      env: { LOG_LEVEL: 'silent', PORT: 'ignored-because---port-wins' },
      io: {
        // Runs while the server is up: the banner is already printed, so the URL is known.
        untilStopped: async () => {
          const url = /listening on (\S+)/.exec(banner.join('\n'))?.[1] as string;
          duringServe = await wsag(['templates', '--json', '--url', url]);
        },
        out: (line) => banner.push(line),
      },
    });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(banner[0]).toMatch(/^wsag-server listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(banner.join('\n')).toMatch(/AgreementFactory\s+http:\/\/127\.0\.0\.1:\d+\/wsag\/AgreementFactory/);
    expect(banner.join('\n')).toContain(dataDir);
    expect(banner).toContain(`  ${'CPU scheduling'.padEnd(24)} the default (WSAG_CPU_SCHEDULING is normal)`);
    expect(duringServe?.code).toBe(0);
    expect((JSON.parse(duringServe?.stdout ?? '[]') as { name: string }[]).map((t) => t.name).sort()).toEqual([
      'advance-reservation',
      'background-job',
      'best-effort-job',
      'deadline-job',
      'interactive-job',
    ]);
    expect(fs.existsSync(path.join(dataDir, 'wsag.db'))).toBe(true);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports bad flags and bad configuration without starting', async () => {
    const badPort = await wsag(['serve', '--port', 'eighty']);
    expect(badPort.code).toBe(2);
    expect(badPort.err[0]).toBe('error: --port must be a whole number from 0 to 65535, got "eighty"');
    const badEnv = await wsag(['serve'], { env: { WSAG_CLUSTER_NODES: 'many' } });
    expect(badEnv.code).toBe(1);
    expect(badEnv.err).toEqual(['error: WSAG_CLUSTER_NODES must be a whole number, got "many"']);
    const noTemplates = await wsag(
      ['serve', '--port', '0', '--templates-dir', path.join(os.tmpdir(), 'wsag-no-such-dir')],
      { env: { LOG_LEVEL: 'silent' } },
    );
    expect(noTemplates.code).toBe(1);
    expect(noTemplates.err[0]).toMatch(/^error: template directory .*wsag-no-such-dir does not exist$/);
  });
});

describe('bin/wsag.js', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('runs the compiled CLI from any working directory', async () => {
    const { stdout, stderr } = await run(process.execPath, [bin, 'templates', '--url', server.url, '--json'], {
      cwd: os.tmpdir(),
      env: { ...process.env, WSAG_URL: '' },
      timeout: 30_000,
    });
    expect(stderr).toBe('');
    const templates = JSON.parse(stdout) as { name: string; id: string }[];
    expect(templates.map((t) => t.name).sort()).toEqual([
      'advance-reservation',
      'background-job',
      'best-effort-job',
      'deadline-job',
      'interactive-job',
    ]);
  }, 30_000);

  it('exits with the documented codes', async () => {
    const failure = await run(process.execPath, [bin, 'state', 'nope', '--url', server.url], {
      cwd: os.tmpdir(),
      timeout: 30_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1, stderr: 'error: UnknownResource: no agreement with id "nope"\n' });
    const usage = await run(process.execPath, [bin, 'nonsense'], { cwd: os.tmpdir(), timeout: 30_000 }).catch(
      (error: { code: number }) => error,
    );
    expect(usage).toMatchObject({ code: 2 });
  }, 30_000);
});
