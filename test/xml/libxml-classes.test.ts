import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./fixtures/construct-nodes.ts', import.meta.url));

/** Optimisations V8 started and threw away while `script` ran, by function. */
function abortedOptimisations(): Map<string, number> {
  // `node --import tsx`, not `npx tsx`: the tsx CLI would run the script in a grandchild without the flag.
  const run = spawnSync(process.execPath, ['--trace-opt', '--import', 'tsx', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/walked 300000/);
  const aborted = new Map<string, number>();
  for (const [, name] of run.stdout.matchAll(/\[aborted optimizing \S+ <JSFunction (\S*)/g)) {
    aborted.set(name as string, (aborted.get(name as string) ?? 0) + 1);
  }
  return aborted;
}

describe('libxml2-wasm classes', () => {
  it('construct node wrappers in optimised code: no optimisation is thrown away over and over', () => {
    // Without giveFastProperties (src/xml/libxml.ts) this walk threw away thousands of
    // optimisations of the node classes' constructors, parent and firstChild; a stray abort is V8's business.
    const aborted = abortedOptimisations();
    const total = [...aborted.values()].reduce((sum, n) => sum + n, 0);
    expect(total, JSON.stringify(Object.fromEntries(aborted))).toBeLessThan(10);
  });
});
