import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { npmStartFlags } from '../../bench/server-process.js';
import { projectRoot } from './server.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
}

/**
 * The server as a separate process on a free port (so tests can kill it with SIGKILL);
 * resolves with its URL once it listens. `env` adds configuration (WSAG_HOLD_SECONDS, ...).
 * By default the TypeScript sources run; `compiled` runs what `npm start` runs: the compiled
 * server with the start script's node flags (`npm test` builds it first). `cwd` is where it
 * runs, as a user's shell would be (relative settings such as ./templates resolve there).
 */
export function startServerProcess(
  dataDir: string,
  env: Record<string, string> = {},
  options: { compiled?: boolean; cwd?: string } = {},
): Promise<ServerProcess> {
  const args = options.compiled
    ? [
        ...npmStartFlags(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')),
        path.join(projectRoot, 'dist/main.js'),
      ]
    : ['--import', 'tsx', path.join(projectRoot, 'src/main.ts')];
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? projectRoot,
    env: { ...process.env, PORT: '0', WSAG_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) resolve({ child, url: m[1] as string });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}
