import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True if an executable called `name` is found in one of the PATH directories. */
function onPath(name: string): boolean {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  const exts = process.platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      try {
        accessSync(candidate, constants.X_OK);
        if (statSync(candidate).isFile()) return true;
      } catch {
        // not here; keep looking
      }
    }
  }
  return false;
}

/**
 * Interop tests need external tools (xmllint, ...). A missing tool fails the test run, unless
 * the environment says WSAG_SKIP_INTEROP=1, in which case the caller should skip (it.skip)
 * with a message.
 *
 * @returns true if the command is on PATH; false if it is missing and WSAG_SKIP_INTEROP=1.
 * @throws Error if it is missing and skipping was not requested.
 */
export function requireTool(name: string): boolean {
  if (onPath(name)) return true;
  if (process.env.WSAG_SKIP_INTEROP === '1') return false;
  throw new Error(
    `required tool '${name}' is not on PATH; install it (Debian: apt-get install libxml2-utils ` +
      `for xmllint) or set WSAG_SKIP_INTEROP=1 to skip the tests that need it`,
  );
}
