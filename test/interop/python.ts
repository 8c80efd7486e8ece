import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/**
 * The interpreter the interop tests run: Debian's, where python3-zeep is installed (a
 * virtualenv's python3 earlier on PATH would not have it).
 */
export const python = '/usr/bin/python3';

const skipping = () => process.env.WSAG_SKIP_INTEROP === '1';

/** Why `module` cannot be imported by /usr/bin/python3, or undefined when it can. */
export function pythonModuleProblem(module: string): string | undefined {
  if (!/^[A-Za-z_][\w.]*$/.test(module)) throw new Error(`not a Python module name: ${module}`);
  try {
    accessSync(python, constants.X_OK);
  } catch {
    return `${python} is not installed (Debian: apt-get install python3)`;
  }
  try {
    execFileSync(python, ['-c', `import ${module}`], { stdio: 'pipe', timeout: 30_000 });
    return undefined;
  } catch (error) {
    const stderr =
      String((error as { stderr?: Buffer }).stderr ?? '')
        .trim()
        .split('\n')
        .pop() ?? '';
    const debian = module === 'zeep' ? ' (Debian: apt-get install python3-zeep)' : '';
    return `${python} cannot import ${module}${debian}: ${stderr || (error as Error).message}`;
  }
}

/**
 * Like requireTool (test/support/tools.ts) for a Python module: true if /usr/bin/python3 can
 * import it; false if it cannot and WSAG_SKIP_INTEROP=1 (the caller skips, naming the reason);
 * throws otherwise, so a missing zeep fails the run instead of passing silently.
 */
export function requirePythonModule(module: string): boolean {
  const problem = pythonModuleProblem(module);
  if (!problem) return true;
  if (skipping()) return false;
  throw new Error(`${problem}; install it or set WSAG_SKIP_INTEROP=1 to skip the tests that need it`);
}

export interface PythonRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs /usr/bin/python3 with `args`; resolves with the exit code and output (a non-zero exit is not an error here). */
export function runPython(args: string[], timeoutMs = 60_000): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      args,
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(
            new Error(
              `${python} ${args.join(' ')} did not finish: ${error.message}${error.killed ? ` (killed after ${timeoutMs} ms)` : ''}\n${stderr}`,
            ),
          );
          return;
        }
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** The last line of stdout parsed as JSON (the interop scripts print exactly one JSON line). */
export function lastJsonLine(run: PythonRun): Record<string, unknown> {
  const line = run.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`expected a JSON line on stdout, got:\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
}
