import fs from 'node:fs';
import path from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './support/server.js';

/**
 * The house rules of docs/architecture.md, checked on every `npm test`: no import cycle
 * anywhere in src/ (type-only imports count too), no file in src/ over 500 lines or line over 120 characters, and
 * imports that point inward (the pure core imports no adapter).
 */
const src = path.join(projectRoot, 'src');
const maxLines = 500;
const maxLineLength = 120;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : /\.(ts|mjs)$/.test(entry.name) ? [full] : [];
  });
}

/** Relative imports of a file, as paths under src/ (`engine/agreements/agreement-factory.ts`). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) =>
    path.relative(src, path.resolve(path.dirname(file), m[1] as string)).replace(/\.js$/, '.ts'),
  );
}

describe('the shape of src/', () => {
  it('has no import cycle', async () => {
    const graph = await madge(src, {
      fileExtensions: ['ts'],
      tsConfig: path.join(projectRoot, 'tsconfig.json'),
      detectiveOptions: { ts: { skipTypeImports: false } },
    });
    expect(graph.circular()).toEqual([]);
    // The check sees the modules: a broken configuration would find no cycle in nothing.
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(250);
  }, 60_000);

  it(`has no file over ${maxLines} lines`, () => {
    const long = sourceFiles(src)
      .map((file) => ({
        file: path.relative(projectRoot, file),
        lines: fs.readFileSync(file, 'utf8').split('\n').length - 1,
      }))
      .filter((f) => f.lines > maxLines);
    expect(long).toEqual([]);
  });

  it(`has no line over ${maxLineLength} characters`, () => {
    const wide = sourceFiles(src).flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (line.length > maxLineLength ? [`${path.relative(projectRoot, file)}:${i + 1}`] : [])),
    );
    expect(wide).toEqual([]);
  });

  it('points its imports inward: the domain imports only itself, the scheduler the domain, the engine neither adapters nor assembly', () => {
    const allowed: Record<string, string[]> = {
      domain: ['domain'],
      scheduler: ['domain', 'scheduler'],
      engine: ['domain', 'scheduler', 'engine'],
    };
    const outward = Object.entries(allowed).flatMap(([layer, may]) =>
      sourceFiles(path.join(src, layer)).flatMap((file) =>
        importsOf(file)
          .filter((target) => !may.includes(target.split(path.sep)[0] as string))
          .map((target) => `${path.relative(src, file)} imports ${target}`),
      ),
    );
    expect(outward).toEqual([]);
  });
});
