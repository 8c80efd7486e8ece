import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/run.js';
import { faultClasses } from '../../src/domain/errors.js';
import { apiRoutes } from '../../src/web/openapi/document.js';
import { projectRoot } from '../support/server.js';

/**
 * The reference pages follow the code: docs/faults.md has one row per fault class,
 * docs/api.md one per /api route of the OpenAPI document, and docs/cli.md a section per command
 * naming each of its options.
 */
const doc = (name: string) => fs.readFileSync(path.join(projectRoot, 'docs', name), 'utf8');
/** The first cells of a page's table rows. */
const rowNames = (text: string) => [...text.matchAll(/^\| `?([^|`]+?)`? \|/gm)].map((m) => (m[1] as string).trim());

describe('the reference docs', () => {
  it('docs/faults.md has one row per fault class, and none for a fault that does not exist', () => {
    const documented = rowNames(doc('faults.md')).filter((name) => /^[A-Z][A-Za-z]+$/.test(name));
    // Raised only where the envelope's headers are read, so not in faultClasses.
    const headerFaults = ['MustUnderstand', 'OnlyAnonymousAddressSupported', 'MessageAddressingHeaderRequired'];
    const faults = [...Object.keys(faultClasses), ...headerFaults];
    expect(
      faults.filter((f) => !documented.includes(f)),
      'faults without a row',
    ).toEqual([]);
    expect(
      documented.filter((d) => !faults.includes(d) && d !== 'Fault'),
      'rows without a fault',
    ).toEqual([]);
  });

  it('docs/api.md lists every route of the OpenAPI document with who may call it, and only those', () => {
    // test/web/openapi.test.ts checks that the document describes every /api route the server answers.
    const rows = [...doc('api.md').matchAll(/^\| `((?:GET|POST|PUT|DELETE) \/api[^`]*)` \| (\w+) \|/gm)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    const described = apiRoutes.map((r) => `${r.method.toUpperCase()} ${r.path} ${r.rule}`);
    expect(
      described.filter((r) => !rows.includes(r)),
      'routes without a row (or with another rule)',
    ).toEqual([]);
    expect(
      rows.filter((r) => !described.includes(r)),
      'rows the document does not describe',
    ).toEqual([]);
  });

  it('docs/cli.md has a section for each command, naming each of its options', () => {
    const page = doc('cli.md');
    for (const command of commands) {
      const start = page.indexOf(`### \`wsag ${command.name}\``);
      expect(start, `a section for wsag ${command.name}`).toBeGreaterThanOrEqual(0);
      const ends = [page.indexOf('\n### ', start + 1), page.indexOf('\n## ', start + 1)].filter((i) => i > 0);
      const section = page.slice(start, ends.length > 0 ? Math.min(...ends) : undefined);
      const missing = Object.keys(command.options).filter((option) => !section.includes(`--${option}`));
      expect(missing, `options of wsag ${command.name} the section does not name`).toEqual([]);
    }
  });
});

describe('docs/configuration.md', () => {
  it('names every environment variable the configuration reads', () => {
    const folder = path.join(projectRoot, 'src', 'engine', 'configuration');
    const code = fs
      .readdirSync(folder)
      .map((f) => fs.readFileSync(path.join(folder, f), 'utf8'))
      .join('\n');
    const read = new Set([...code.matchAll(/\b(WSAG_[A-Z_]+|PORT|HOST|LOG_LEVEL)\b/g)].map((m) => m[1] as string));
    const page = doc('configuration.md');
    expect(
      [...read].filter((name) => !page.includes(`\`${name}\``)),
      'settings the page does not name',
    ).toEqual([]);
  });
});

describe('pages that read in a minute', () => {
  it('the README stays under 10 KB and docs/benchmarks.md under 30 KB', () => {
    expect(fs.statSync(path.join(projectRoot, 'README.md')).size).toBeLessThan(10 * 1024);
    expect(fs.statSync(path.join(projectRoot, 'docs', 'benchmarks.md')).size).toBeLessThan(30 * 1024);
  });

  it('docs/benchmarks.md has a section for every bench that writes one, and every decision record is listed', () => {
    const page = doc('benchmarks.md');
    const benches = fs
      .readdirSync(path.join(projectRoot, 'bench'))
      .filter(
        (f) => /\bpublish\(/.test(fs.readFileSync(path.join(projectRoot, 'bench', f), 'utf8')) && f !== 'report.ts',
      );
    const names = benches.flatMap((f) =>
      f === 'concurrent.ts'
        ? ['concurrent-create', 'concurrent-create-at-rate', 'concurrent-negotiate']
        : [f.replace(/\.ts$/, '')],
    );
    expect(
      names.filter((name) => !page.includes(`<!-- bench:${name} -->`) || !page.includes(`<!-- /bench:${name} -->`)),
      'benches without a section',
    ).toEqual([]);
    const index = doc('decisions/README.md');
    const records = fs.readdirSync(path.join(projectRoot, 'docs', 'decisions')).filter((f) => /^\d{4}-.*\.md$/.test(f));
    expect(records.length).toBeGreaterThan(0);
    expect(
      records.filter((f) => !index.includes(`(${f})`)),
      'records the index does not list',
    ).toEqual([]);
  });
});
