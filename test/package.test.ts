import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, startTestServer, type TestServer } from './support/server.js';

const run = promisify(execFile);

/**
 * The package as a site installs it: `npm pack`, then the tarball installed globally in a
 * temporary prefix (from npm's cache, as CI has just installed the same dependencies). The
 * installed `wsag` runs the compiled code: no TypeScript, no tsx among its dependencies.
 */
let prefix: string;
let server: TestServer;
beforeAll(async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-package-'));
  prefix = path.join(work, 'prefix');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work, '--ignore-scripts'], {
    cwd: projectRoot,
    timeout: 120_000,
  });
  const tarball = path.join(work, (JSON.parse(stdout) as Array<{ filename: string }>)[0]?.filename as string);
  // --ignore-scripts: no native build of better-sqlite3 for a test of the command line.
  await run(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      tarball,
    ],
    { timeout: 300_000 },
  );
  server = await startTestServer();
}, 420_000);
afterAll(async () => {
  await server?.close();
  fs.rmSync(path.dirname(prefix), { recursive: true, force: true });
});

const installed = () => path.join(prefix, 'lib', 'node_modules', 'wsag-server');

describe('the installed package', () => {
  it('carries the compiled code and what it reads at run time, not the sources, the tests or a compiler', () => {
    const root = installed();
    for (const present of [
      'dist/cli/main.js',
      'dist/main.js',
      'dist/runtime/demo-job.mjs',
      'dist/runtime/slurm/example-job.sh',
      'templates',
      'schemas',
      'ui/index.html',
      'bin/wsag.js',
      'LICENSE',
      'CHANGELOG.md',
      'docs/configuration.md',
      'docs/cli.md',
      'docs/faults.md',
      'docs/api.md',
    ]) {
      expect(fs.existsSync(path.join(root, present)), present).toBe(true);
    }
    // The docs a site needs ship; the benchmarks' lab notes, the code's map and the screenshots do not.
    for (const absent of [
      'src',
      'test',
      'bench',
      'docs/benchmarks.md',
      'docs/architecture.md',
      'docs/decisions',
      'docs/images',
      'node_modules/tsx',
      'node_modules/typescript',
      'node_modules/vitest',
    ]) {
      expect(fs.existsSync(path.join(root, absent)), absent).toBe(false);
    }
  });

  it('gives a working wsag: help, version, and a command against a server', async () => {
    const wsag = path.join(prefix, 'bin', 'wsag');
    const options = { cwd: os.tmpdir(), env: { ...process.env, WSAG_URL: '' }, timeout: 30_000 };
    const help = await run(wsag, ['--help'], options);
    expect(help.stdout).toMatch(/^wsag: command-line client for wsag-server/);
    const version = await run(wsag, ['--version'], options);
    expect(version.stdout).toBe(
      `wsag ${(JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version}\n`,
    );
    const templates = await run(wsag, ['templates', '--url', server.url, '--json'], options);
    expect((JSON.parse(templates.stdout) as { name: string }[]).map((t) => t.name)).toContain('deadline-job');
  }, 60_000);
});
