import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { npmStartFlags } from '../../bench/server-process.js';
import { projectRoot } from '../support/server.js';

const run = promisify(execFile);

/** The node flags of `npm start` (package.json) and of the `wsag` command (bin/wsag.js's first line). */
const startFlags = () => npmStartFlags(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));
function binFlags(): string[] {
  const shebang = (fs.readFileSync(path.join(projectRoot, 'bin', 'wsag.js'), 'utf8').split('\n')[0] as string).split(
    /\s+/,
  );
  return shebang.slice(shebang.indexOf('node') + 1);
}

/** Threads of a node process started with `flags`, counted from /proc while it runs. */
async function threadsWith(flags: string[]): Promise<number> {
  const { stdout } = await run(process.execPath, [
    ...flags,
    '-e',
    "setTimeout(() => console.log(require('fs').readdirSync('/proc/self/task').length), 300)",
  ]);
  return Number(stdout.trim());
}

describe("the server's node flags (docs/deployment.md)", () => {
  it('are the same for `npm start` and `wsag serve`: a young generation of 4 MiB semi-spaces, V8 background work on one thread', () => {
    expect(startFlags()).toEqual(['--max-semi-space-size=4', '--v8-pool-size=1']);
    expect(binFlags()).toEqual(startFlags());
  });

  it.runIf(process.platform === 'linux')(
    'leave V8 one thread of its own for background work, not the four Node starts by default',
    async () => {
      const [defaults, served] = await Promise.all([threadsWith([]), threadsWith(startFlags())]);
      expect(defaults - served).toBe(3);
    },
  );
});
